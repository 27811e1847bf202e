import type { EnvelopeHeader } from "../../shared/envelope.js";
import {
  DISPLAY_HZ_METRIC,
  EVENT_COLUMNS,
  F,
  MESSAGES,
  WIRE,
  tag as wireTag,
} from "../../shared/telemetry/fields.js";
import { LIMITS } from "../../shared/telemetry/limits.js";
import { WireReader, wireErrorText } from "../wire/reader.js";
import { parseSdkVersion } from "./rows.js";

/**
 * Rows of telemetry.events straight from the wire bytes of a TelemetryBatch, as RowBinary, in one pass
 * per event and without decoding a message: no event objects, no JS strings for the wire's strings
 * (their UTF-8 bytes are copied into the output behind a length), floats and doubles copied as the
 * wire's own little-endian bits. RowBinary is what ClickHouse parses cheapest short of Native: no
 * escapes, no number parsing, a column's value is a memcpy. The batch passed ingest's scanner
 * (workers/ingest/wire-scan.ts), so this walker relies on that contract (types, bounds, UTF-8 and
 * finiteness checked there) and only guards against running off the end: a malformed message throws,
 * and the consumer parks it.
 *
 * Same mapping as a full protobuf decode (test/support/reference-rows.ts, which the tests hold it to), decoded the protobuf way:
 * a singular field's last occurrence wins, occurrences of a message field (position, device) merge,
 * a map key's last value wins; the SDKs' zero in a performance field is NULL, an absent position or
 * half a camera pair NULL, the event's device context overrides the batch's field by field.
 */

/**
 * The INSERT's column list, in the order each row is written: the event's index in its batch, the
 * columns the wire fills (in the field table's order), the per-message constants, then the event's
 * player and session numbers (workers/shared/actors.ts).
 */
export const INSERT_COLUMNS: readonly string[] = [
  "event_index",
  ...EVENT_COLUMNS,
  "project_id",
  "sdk_name",
  "sdk_version",
  "batch_id",
  "received_at",
  "player_idx",
  "session_idx",
];

/**
 * Where a row's player and session numbers come from (./actors.ts): `row` is handed the spans of the
 * row's session_id and player_id in the batch and its timestamp, and writes the row's last 8 bytes
 * (player_idx, session_idx), which it may fill in later, once the numbers are known.
 */
export type RowNumbering = {
  row(out: RowSink, b: Uint8Array, ss: number, se: number, ps: number, pe: number, tsUs: number): void;
};

/** RowBinary's Nullable: a 1 byte says NULL (and no value follows), a 0 byte that a value follows. */
const IS_NULL = 1;
const NOT_NULL = 0;
/** telemetry.events.source, Enum8: the wire's enum numbers are the column's values. */
const SOURCE_VALUES = 3;

/** A growable byte buffer the rows are written into, in RowBinary. */
export class RowSink {
  buf: Uint8Array;
  len = 0;
  private dv: DataView;

  constructor(initialBytes = 1 << 20) {
    this.buf = new Uint8Array(initialBytes);
    this.dv = new DataView(this.buf.buffer);
  }

  reserve(n: number): void {
    if (this.len + n > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
      next.set(this.buf.subarray(0, this.len));
      this.buf = next;
      this.dv = new DataView(next.buffer);
    }
  }

  byte(b: number): void {
    this.reserve(1);
    this.buf[this.len++] = b;
  }

  bytes(src: Uint8Array, start = 0, end = src.length): void {
    const n = end - start;
    this.reserve(n);
    if (n > 32) {
      this.buf.set(src.subarray(start, end), this.len);
    } else {
      // A view per short copy costs more than the copy.
      const out = this.buf;
      let at = this.len;
      for (let i = start; i < end; i++) {
        out[at++] = src[i] as number;
      }
    }
    this.len += n;
  }

  /** UInt32, little-endian. */
  u32(value: number): void {
    this.reserve(4);
    this.dv.setUint32(this.len, value, true);
    this.len += 4;
  }

  /** UInt64 or Int64 of a non-negative value below 2^53, little-endian (two 32-bit halves). */
  u64(value: number): void {
    this.reserve(8);
    const high = Math.floor(value / 4294967296);
    this.dv.setUint32(this.len, value - high * 4294967296, true);
    this.dv.setUint32(this.len + 4, high, true);
    this.len += 8;
  }

  /**
   * Float32, little-endian: the value was read from a float32, so it is written back exactly; -0 as 0,
   * as a decode to JSON stores it (the reference the tests hold these rows to).
   */
  f32(value: number): void {
    this.reserve(4);
    this.dv.setFloat32(this.len, value === 0 ? 0 : value, true);
    this.len += 4;
  }

  f64(value: number): void {
    this.reserve(8);
    this.dv.setFloat64(this.len, value, true);
    this.len += 8;
  }

  /** An unsigned LEB128 varint: RowBinary's lengths of strings and maps. */
  varint(value: number): void {
    this.reserve(10);
    let v = value;
    while (v >= 0x80) {
      this.buf[this.len++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.len++] = v;
  }

  /** A String (or LowCardinality(String)) from UTF-8 bytes: their length, then the bytes. */
  str(src: Uint8Array, start: number, end: number): void {
    this.varint(end - start);
    this.bytes(src, start, end);
  }
}

export class MalformedBatch extends Error {}

/**
 * Walker state: the reader's position (its `pos`) and the values of the event being built, in one
 * object reused across events and messages (the consumer is synchronous per message, so one instance
 * serves every walk and allocates nothing per event). The positions of strings and map entries sit
 * in the typed arrays below, also reused.
 */
class RowWalker extends WireReader {
  /** The batch being walked, for its floats and doubles (little-endian on the wire). */
  view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(8));
  batchDevMemory = 0;
  evDevMemory = 0;
  /** refresh_rate_hz of the device message readDevice read last (-1: absent), the batch's and the event's. */
  devHz = -1;
  batchDevHz = 0;
  evDevHz = -1;
  evHasDevice = false;
  hasPosition = false;
  /** Map entries of the event so far (in ATTR and METR). */
  nAttr = 0;
  nMetr = 0;
  /** The event's memory_used_bytes and source. */
  memory = 0;
  source = 0;
}

const w = new RowWalker();
const EVENT_SLOTS = Math.max(...MESSAGES.event.fields.map((f) => f.no)) + 1;
/** String fields of an event by number: start and end in the batch bytes (end < 0: absent). */
const STR_START = new Int32Array(EVENT_SLOTS);
const STR_END = new Int32Array(EVENT_SLOTS);
const EVENT_STRINGS = MESSAGES.event.fields.filter((f) => f.type === "string").map((f) => f.no);
/** Float fields of an event by number (the timings, fps, the camera pair). */
const FLOAT = new Float64Array(EVENT_SLOTS);
const HAS = new Uint8Array(EVENT_SLOTS);
/** Device strings by number, in column order; memory_total_mb is kept apart. */
const DEVICE_STRINGS = MESSAGES.device.fields.filter((f) => f.type === "string").map((f) => f.no);
const DEVICE_SLOTS = Math.max(...DEVICE_STRINGS) + 1;
const IS_DEVICE_STRING = new Uint8Array(DEVICE_SLOTS);
for (const no of DEVICE_STRINGS) {
  IS_DEVICE_STRING[no] = 1;
}
/** Device string spans by number: the batch's and the event's. */
const DEV_START = new Int32Array(DEVICE_SLOTS);
const DEV_END = new Int32Array(DEVICE_SLOTS);
const EV_DEV_START = new Int32Array(DEVICE_SLOTS);
const EV_DEV_END = new Int32Array(DEVICE_SLOTS);
/** Tags of the batch's fields. */
const TAG_EVENTS = wireTag(F.batch.events, WIRE.LEN);
const TAG_BATCH_DEVICE = wireTag(F.batch.device, WIRE.LEN);
/** Map entries of the event: key start/end, value start/end (metrics: value offset of the double, or -1). */
const ATTR = new Int32Array(4 * LIMITS.attributes.maxEntries);
const METR = new Int32Array(4 * LIMITS.metrics.maxEntries);

/** A varint at w.pos (a tag, a length, a uint32 or a non-negative int64); w.pos moves past it. */
function varint(b: Uint8Array, end: number): number {
  const p = w.pos;
  const x = b[p] as number;
  if (x < 0x80 && p < end) {
    // One byte: most tags and lengths.
    w.pos = p + 1;
    return x;
  }
  const v = w.readVarint(b, p, end);
  if (v < 0) {
    throw new MalformedBatch(wireErrorText(w.pos));
  }
  return v;
}

/** The end of a LEN field whose length varint starts at w.pos; w.pos moves to its first byte. */
function lenEnd(b: Uint8Array, end: number): number {
  const len = varint(b, end);
  const e = w.pos + len;
  if (e > end) {
    throw new MalformedBatch("field runs past its message");
  }
  return e;
}

function skip(b: Uint8Array, end: number, wt: number): void {
  const p = w.skipField(b, w.pos, end, wt);
  if (p < 0) {
    throw new MalformedBatch(wireErrorText(p));
  }
  w.pos = p;
}

function f32(at: number): number {
  return w.view.getFloat32(at, true);
}

function f64(at: number): number {
  return w.view.getFloat64(at, true);
}

/**
 * A DeviceContext message into the given slots (a later occurrence overrides field by field); returns
 * its memory_total_mb (-1: absent) and leaves its refresh_rate_hz in w.devHz (-1: absent).
 */
function readDevice(b: Uint8Array, end: number, starts: Int32Array, ends: Int32Array): number {
  let memory = -1;
  w.devHz = -1;
  while (w.pos < end) {
    const tag = varint(b, end);
    const field = tag >>> 3;
    const wt = tag & 7;
    if (field < DEVICE_SLOTS && IS_DEVICE_STRING[field] === 1 && wt === WIRE.LEN) {
      const e = lenEnd(b, end);
      starts[field] = w.pos;
      ends[field] = e;
      w.pos = e;
    } else if (field === F.device.memory_total_mb && wt === WIRE.VARINT) {
      memory = varint(b, end) % 4294967296;
    } else if (field === F.device.refresh_rate_hz && wt === WIRE.VARINT) {
      w.devHz = varint(b, end) % 4294967296;
    } else {
      skip(b, end, wt);
    }
  }
  return memory;
}

function readPosition(b: Uint8Array, end: number): void {
  while (w.pos < end) {
    const tag = varint(b, end);
    const field = tag >>> 3;
    if ((field === F.vector3.x || field === F.vector3.y || field === F.vector3.z) && (tag & 7) === WIRE.I32) {
      if (w.pos + 4 > end) {
        throw new MalformedBatch("truncated float");
      }
      POSITION[field] = f32(w.pos);
      w.pos += 4;
    } else {
      skip(b, end, tag & 7);
    }
  }
}
/** x, y and z of the event's position, by number (AXES: in column order). */
const AXES = [F.vector3.x, F.vector3.y, F.vector3.z];
const POSITION = new Float64Array(Math.max(...AXES) + 1);

/** A map entry: key and value spans into `into` at slot n (value -1 when absent). */
function readEntry(b: Uint8Array, end: number, into: Int32Array, n: number, metrics: boolean): void {
  let ks = w.pos;
  let ke = w.pos;
  let vs = -1;
  let ve = -1;
  while (w.pos < end) {
    const tag = varint(b, end);
    const field = tag >>> 3;
    const wt = tag & 7;
    // Map entries number their key 1 and their value 2, whatever the map.
    if (field === F.attributesEntry.key && wt === WIRE.LEN) {
      ke = lenEnd(b, end);
      ks = w.pos;
      w.pos = ke;
    } else if (field === F.metricsEntry.value && metrics && wt === WIRE.I64) {
      vs = w.pos;
      w.pos += 8;
    } else if (field === F.attributesEntry.value && !metrics && wt === WIRE.LEN) {
      ve = lenEnd(b, end);
      vs = w.pos;
      w.pos = ve;
    } else {
      skip(b, end, wt);
    }
  }
  if (w.pos > end) {
    throw new MalformedBatch("map entry runs past its message");
  }
  into[4 * n] = ks;
  into[4 * n + 1] = ke;
  into[4 * n + 2] = vs;
  into[4 * n + 3] = ve;
}

function sameKey(b: Uint8Array, into: Int32Array, i: number, j: number): boolean {
  const is = into[4 * i] as number;
  const ie = into[4 * i + 1] as number;
  const js = into[4 * j] as number;
  if (ie - is !== (into[4 * j + 1] as number) - js) {
    return false;
  }
  for (let k = 0; k < ie - is; k++) {
    if (b[is + k] !== b[js + k]) {
      return false;
    }
  }
  return true;
}

/** Entries of a map that no later entry with the same key supersedes (the protobuf way: last wins). */
const LIVE = new Uint8Array(Math.max(LIMITS.attributes.maxEntries, LIMITS.metrics.maxEntries));

/** The bytes of DISPLAY_HZ_METRIC, the key a device's refresh rate is stored under. */
const DISPLAY_HZ_KEY = new TextEncoder().encode(DISPLAY_HZ_METRIC);

function isDisplayHzKey(b: Uint8Array, into: Int32Array, i: number): boolean {
  const ks = into[4 * i] as number;
  if ((into[4 * i + 1] as number) - ks !== DISPLAY_HZ_KEY.length) {
    return false;
  }
  for (let k = 0; k < DISPLAY_HZ_KEY.length; k++) {
    if (b[ks + k] !== DISPLAY_HZ_KEY[k]) {
      return false;
    }
  }
  return true;
}

/**
 * A Map column: the number of entries, then key and value of each; a key repeated later is superseded.
 * `hz` > 0 (metrics only): the device's refresh rate, added as DISPLAY_HZ_METRIC unless the event sent one.
 */
function writeMap(out: RowSink, b: Uint8Array, into: Int32Array, n: number, metrics: boolean, hz = 0): void {
  let live = 0;
  let addHz = hz > 0;
  for (let i = 0; i < n; i++) {
    let superseded = false;
    for (let j = i + 1; j < n && !superseded; j++) {
      superseded = sameKey(b, into, i, j);
    }
    LIVE[i] = superseded ? 0 : 1;
    live += superseded ? 0 : 1;
    if (addHz && isDisplayHzKey(b, into, i)) {
      addHz = false;
    }
  }
  out.varint(addHz ? live + 1 : live);
  if (addHz) {
    out.str(DISPLAY_HZ_KEY, 0, DISPLAY_HZ_KEY.length);
    out.f64(hz);
  }
  for (let i = 0; i < n; i++) {
    if (LIVE[i] === 0) {
      continue;
    }
    out.str(b, into[4 * i] as number, into[4 * i + 1] as number);
    const vs = into[4 * i + 2] as number;
    if (metrics) {
      // -0 is stored as 0, as a full decode to JSON stores it; every other double as is.
      const v = vs < 0 ? 0 : f64(vs);
      out.f64(v === 0 ? 0 : v);
    } else if (vs < 0) {
      out.byte(0); // ''
    } else {
      out.str(b, vs, into[4 * i + 3] as number);
    }
  }
}

function nullableFloat(out: RowSink, field: number): void {
  // The SDKs' 0 (and -0) means "not collected".
  const v = FLOAT[field] as number;
  if (HAS[field] && v > 0) {
    out.byte(NOT_NULL);
    out.f32(v);
  } else {
    out.byte(IS_NULL);
  }
}

function str(out: RowSink, b: Uint8Array, field: number): void {
  const e = STR_END[field] as number;
  if (e >= 0) {
    out.str(b, STR_START[field] as number, e);
  } else {
    out.byte(0); // ''
  }
}

/** Summary of one message's rows: how many, and their timestamp range in µs. */
export type BuiltRows = { rows: number; minTimestampUs: number; maxTimestampUs: number };

/**
 * Appends the RowBinary rows of one decompressed TelemetryBatch to `out`: one row per event, its columns
 * in the order of INSERT_COLUMNS, except events whose index is in `present` (rows ClickHouse already holds).
 * `numbering`: writes the events' player and session numbers (0 without).
 */
export function appendRows(
  out: RowSink,
  header: EnvelopeHeader,
  b: Uint8Array,
  present?: ReadonlySet<number>,
  numbering?: RowNumbering,
): BuiltRows {
  const end = b.length;
  w.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const suffix = messageSuffix(header);
  // The batch's device context may follow the events on the wire: find it first.
  DEV_END.fill(-1);
  w.batchDevMemory = 0;
  w.batchDevHz = 0;
  w.pos = 0;
  while (w.pos < end) {
    const tag = varint(b, end);
    if (tag === TAG_BATCH_DEVICE) {
      const e = lenEnd(b, end);
      const m = readDevice(b, e, DEV_START, DEV_END);
      if (m >= 0) {
        w.batchDevMemory = m;
      }
      if (w.devHz >= 0) {
        w.batchDevHz = w.devHz;
      }
      w.pos = e;
    } else {
      skip(b, end, tag & 7);
    }
  }
  const batchDevice = new RowSink(1024);
  writeDevice(batchDevice, b, DEV_START, DEV_END, null, null, w.batchDevMemory);
  const batchDeviceBytes = batchDevice.buf.subarray(0, batchDevice.len);

  let index = 0;
  let minTs = Number.POSITIVE_INFINITY;
  let maxTs = Number.NEGATIVE_INFINITY;
  w.pos = 0;
  while (w.pos < end) {
    const tag = varint(b, end);
    if (tag !== TAG_EVENTS) {
      skip(b, end, tag & 7);
      continue;
    }
    const e = lenEnd(b, end);
    const ts = readEvent(b, e);
    w.pos = e;
    if (ts < minTs) {
      minTs = ts;
    }
    if (ts > maxTs) {
      maxTs = ts;
    }
    if (!present?.has(index)) {
      writeEvent(out, b, index, ts, batchDeviceBytes, suffix);
      if (numbering) {
        const ss = STR_START[F.event.session_id] as number;
        const se = STR_END[F.event.session_id] as number;
        const pe = STR_END[F.event.player_id] as number;
        // An absent session_id (ingest refuses one) reads as ''.
        numbering.row(
          out,
          b,
          se < 0 ? 0 : ss,
          Math.max(se, 0),
          pe < 0 ? 0 : (STR_START[F.event.player_id] as number),
          Math.max(pe, 0),
          ts,
        );
      } else {
        out.u32(0);
        out.u32(0);
      }
    }
    index++;
  }
  return { rows: index, minTimestampUs: minTs, maxTimestampUs: maxTs };
}

/** One event's fields into the walker state; returns its timestamp in µs. */
function readEvent(b: Uint8Array, end: number): number {
  for (const f of EVENT_STRINGS) {
    STR_END[f] = -1;
  }
  HAS.fill(0);
  w.hasPosition = false;
  POSITION.fill(0);
  w.evHasDevice = false;
  w.evDevMemory = -1;
  w.evDevHz = -1;
  w.nAttr = 0;
  w.nMetr = 0;
  let ts = 0;
  let memory = 0;
  let source = 0;
  while (w.pos < end) {
    const tag = varint(b, end);
    const field = tag >>> 3;
    const wt = tag & 7;
    switch (field) {
      case F.event.event_name:
      case F.event.session_id:
      case F.event.player_id:
      case F.event.map_id:
      case F.event.build_id:
      case F.event.platform:
      case F.event.engine_version: {
        const e = lenEnd(b, end);
        STR_START[field] = w.pos;
        STR_END[field] = e;
        w.pos = e;
        break;
      }
      case F.event.timestamp_us:
        ts = int64(b, end);
        break;
      case F.event.fps:
      case F.event.frame_time_ms:
      case F.event.gpu_time_ms:
      case F.event.camera_yaw:
      case F.event.camera_pitch:
      case F.event.game_thread_ms:
      case F.event.render_thread_ms:
        if (w.pos + 4 > end) {
          throw new MalformedBatch("truncated float");
        }
        FLOAT[field] = f32(w.pos);
        HAS[field] = 1;
        w.pos += 4;
        break;
      case F.event.memory_used_bytes:
        memory = int64(b, end);
        break;
      case F.event.source:
        source = varint(b, end);
        break;
      case F.event.position: {
        const e = lenEnd(b, end);
        w.hasPosition = true;
        readPosition(b, e);
        w.pos = e;
        break;
      }
      case F.event.attributes:
      case F.event.metrics: {
        const e = lenEnd(b, end);
        if (field === F.event.attributes) {
          readEntry(b, e, ATTR, w.nAttr++, false);
        } else {
          readEntry(b, e, METR, w.nMetr++, true);
        }
        w.pos = e;
        break;
      }
      case F.event.device: {
        const e = lenEnd(b, end);
        if (!w.evHasDevice) {
          EV_DEV_END.fill(-1);
          w.evHasDevice = true;
        }
        const m = readDevice(b, e, EV_DEV_START, EV_DEV_END);
        if (m >= 0) {
          w.evDevMemory = m;
        }
        if (w.devHz >= 0) {
          w.evDevHz = w.devHz;
        }
        w.pos = e;
        break;
      }
      default:
        skip(b, end, wt);
    }
  }
  w.memory = memory;
  w.source = source;
  return ts;
}

/** int64 varint at w.pos: timestamps and memory are non-negative and below 2^53 (ingest checked both). */
function int64(b: Uint8Array, end: number): number {
  const p = w.readInt64(b, w.pos, end);
  if (p < 0) {
    throw new MalformedBatch(wireErrorText(p));
  }
  w.pos = p;
  return w.num[0] as number;
}

function writeDevice(
  out: RowSink,
  b: Uint8Array,
  baseStart: Int32Array,
  baseEnd: Int32Array,
  ownStart: Int32Array | null,
  ownEnd: Int32Array | null,
  memory: number,
): void {
  for (const f of DEVICE_STRINGS) {
    const own = ownEnd && ownStart && (ownEnd[f] as number) > (ownStart[f] as number);
    if (own) {
      out.str(b, ownStart[f] as number, ownEnd[f] as number);
    } else if ((baseEnd[f] as number) >= 0) {
      out.str(b, baseStart[f] as number, baseEnd[f] as number);
    } else {
      out.byte(0); // ''
    }
  }
  out.u32(memory);
}

function writeEvent(
  out: RowSink,
  b: Uint8Array,
  index: number,
  ts: number,
  batchDevice: Uint8Array,
  suffix: Uint8Array,
): void {
  out.u32(index);
  str(out, b, F.event.event_name);
  out.u64(ts); // DateTime64(6): µs since the epoch as an Int64
  str(out, b, F.event.session_id);
  str(out, b, F.event.player_id);
  for (const axis of AXES) {
    if (w.hasPosition) {
      out.byte(NOT_NULL);
      out.f32(POSITION[axis] as number);
    } else {
      out.byte(IS_NULL);
    }
  }
  str(out, b, F.event.map_id);
  nullableFloat(out, F.event.fps);
  nullableFloat(out, F.event.frame_time_ms);
  if (w.memory > 0) {
    out.byte(NOT_NULL);
    out.u64(w.memory);
  } else {
    out.byte(IS_NULL);
  }
  nullableFloat(out, F.event.gpu_time_ms);
  nullableFloat(out, F.event.game_thread_ms);
  nullableFloat(out, F.event.render_thread_ms);
  writeMap(out, b, ATTR, w.nAttr, false);
  writeMap(out, b, METR, w.nMetr, true, w.evDevHz > 0 ? w.evDevHz : w.batchDevHz);
  // An enum number this schema does not know (a newer SDK's) is stored as unspecified, as decoding does.
  out.byte(w.source < SOURCE_VALUES ? w.source : 0);
  str(out, b, F.event.build_id);
  str(out, b, F.event.platform);
  str(out, b, F.event.engine_version);
  // A pair on the wire (ingest refuses a half pair); a lone value is never stored half.
  if (HAS[F.event.camera_yaw] && HAS[F.event.camera_pitch]) {
    out.byte(NOT_NULL);
    out.f32(FLOAT[F.event.camera_yaw] as number);
    out.byte(NOT_NULL);
    out.f32(FLOAT[F.event.camera_pitch] as number);
  } else {
    out.byte(IS_NULL);
    out.byte(IS_NULL);
  }
  if (w.evHasDevice) {
    const memory = w.evDevMemory > 0 ? w.evDevMemory : w.batchDevMemory;
    writeDevice(out, b, DEV_START, DEV_END, EV_DEV_START, EV_DEV_END, memory);
  } else {
    out.bytes(batchDevice);
  }
  out.bytes(suffix);
}

const ENCODER = new TextEncoder();

/** project_id … received_at: the same for every row of a message. */
function messageSuffix(header: EnvelopeHeader): Uint8Array {
  const sdk = parseSdkVersion(typeof header.sdkVersion === "string" ? header.sdkVersion : "");
  const sink = new RowSink(256);
  // UUID in RowBinary: its two 64-bit halves, each little-endian (the hex text's bytes reversed per half).
  const hex = header.projectId.replaceAll("-", "");
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) {
    throw new MalformedBatch("project id is not a UUID");
  }
  for (const half of [0, 16]) {
    for (let i = 7; i >= 0; i--) {
      sink.byte(Number.parseInt(hex.slice(half + 2 * i, half + 2 * i + 2), 16));
    }
  }
  for (const text of [sdk.name, sdk.version, header.batchKey]) {
    const bytes = ENCODER.encode(text);
    sink.str(bytes, 0, bytes.length);
  }
  sink.u64(Number(header.receivedAt)); // DateTime64(3): ms since the epoch
  return sink.buf.slice(0, sink.len);
}
