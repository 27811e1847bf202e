import type { EnvelopeHeader } from "../../shared/envelope.js";
import { EVENT_COLUMNS, F, MESSAGES, WIRE, tag as wireTag } from "../../shared/telemetry/fields.js";
import { LIMITS } from "../wire-scan.js";
import { parseSdkVersion } from "./rows.js";

/**
 * Rows of telemetry.events straight from the wire bytes of a TelemetryBatch, as TabSeparated text, in
 * one pass per event and without decoding a message: no event objects, no JS strings for the wire's
 * strings (their UTF-8 bytes are copied into the output, escaped where TSV needs it), numbers only
 * where a column needs one. The batch passed ingest's scanner (workers/ingest/wire-scan.ts), so this
 * walker relies on that contract (types and bounds checked there) and only guards against running off
 * the end: a malformed message throws, and the consumer parks it.
 *
 * Same mapping as a full protobuf decode (test/support/reference-rows.ts, which the tests hold it to), decoded the protobuf way:
 * a singular field's last occurrence wins, occurrences of a message field (position, device) merge,
 * a map key's last value wins; the SDKs' zero in a performance field is NULL, an absent position or
 * half a camera pair NULL, the event's device context overrides the batch's field by field.
 */

/**
 * The INSERT's column list, in the order each row is written: the event's index in its batch, the
 * columns the wire fills (in the field table's order), then the per-message constants.
 */
export const TSV_COLUMNS: readonly string[] = [
  "event_index",
  ...EVENT_COLUMNS,
  "project_id",
  "sdk_name",
  "sdk_version",
  "batch_id",
  "received_at",
];

const TAB = 0x09;
const NL = 0x0a;
const QUOTE = 0x27;
const BACKSLASH = 0x5c;
const NULL_TEXT = [BACKSLASH, 0x4e]; // \N
const SOURCE_TEXT = ["unspecified", "player", "automated"].map(ascii);

function ascii(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

/** A growable byte buffer the rows are written into. */
export class RowSink {
  buf: Uint8Array;
  len = 0;

  constructor(initialBytes = 1 << 20) {
    this.buf = new Uint8Array(initialBytes);
  }

  reserve(n: number): void {
    if (this.len + n > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
      next.set(this.buf.subarray(0, this.len));
      this.buf = next;
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

  /** A non-negative integer below 2^53, at least `width` digits (zero-padded). */
  uint(value: number, width = 1): void {
    let n = value;
    let digits = 0;
    while (n >= 2147483648) {
      const q = Math.floor(n / 10);
      DIGITS[digits++] = 0x30 + (n - q * 10);
      n = q;
    }
    // Small integers in 32-bit arithmetic: no heap numbers.
    let m = n | 0;
    do {
      const q = (m / 10) | 0;
      DIGITS[digits++] = 0x30 + (m - q * 10);
      m = q;
    } while (m > 0);
    while (digits < width) {
      DIGITS[digits++] = 0x30;
    }
    this.reserve(digits);
    const out = this.buf;
    let at = this.len;
    while (digits > 0) {
      out[at++] = DIGITS[--digits] as number;
    }
    this.len = at;
  }

  /**
   * A float32 (held exactly in a double) as decimal text with 9 significant digits, trailing zeros
   * dropped: 9 digits always read back as the same float32, and String() would write up to 17.
   */
  f32(value: number): void {
    let v = value;
    if (v < 0 || (v === 0 && 1 / v < 0)) {
      this.byte(0x2d); // -
      v = -v;
    }
    if (v === 0) {
      this.byte(0x30);
      return;
    }
    // k: digits before the point (v < 10^k); frac: digits after it for 9 significant digits.
    let k = v >= 1 ? 1 : -6;
    while (k <= 9 && v >= (POW10[k + 6] as number)) {
      k++;
    }
    if (k < -5 || k > 9) {
      this.text(String(v)); // beyond any bound ingest accepts; exact either way
      return;
    }
    const frac = 9 - k;
    const n = Math.round(v * (POW10[frac + 6] as number));
    const whole = Math.floor(n / (POW10[frac + 6] as number));
    this.uint(whole);
    let rest = n - whole * (POW10[frac + 6] as number);
    if (rest === 0) {
      return;
    }
    let width = frac;
    while (rest % 10 === 0) {
      rest /= 10;
      width--;
    }
    this.byte(0x2e); // .
    this.uint(rest, width);
  }

  /** ASCII text (numbers, names): one byte per character. */
  text(s: string): void {
    const n = s.length;
    this.reserve(n);
    for (let i = 0; i < n; i++) {
      this.buf[this.len++] = s.charCodeAt(i);
    }
  }

  /** Wire UTF-8 as a TSV field: backslash, tab, newline and carriage return escaped. */
  escaped(src: Uint8Array, start: number, end: number): void {
    let clean = true;
    for (let i = start; i < end; i++) {
      const c = src[i] as number;
      if (c === BACKSLASH || c < 0x20) {
        clean = false;
        break;
      }
    }
    if (clean) {
      this.bytes(src, start, end);
      return;
    }
    this.escapedSlow(src, start, end, false);
  }

  /** Wire UTF-8 as a quoted string inside a Map value: '…', with ' and \ escaped as well. */
  quoted(src: Uint8Array, start: number, end: number): void {
    this.byte(QUOTE);
    this.escapedSlow(src, start, end, true);
    this.byte(QUOTE);
  }

  private escapedSlow(src: Uint8Array, start: number, end: number, quote: boolean): void {
    this.reserve(2 * (end - start));
    const out = this.buf;
    let n = this.len;
    for (let i = start; i < end; i++) {
      const c = src[i] as number;
      if (c === BACKSLASH || (quote && c === QUOTE)) {
        out[n++] = BACKSLASH;
        out[n++] = c;
      } else if (c === TAB) {
        out[n++] = BACKSLASH;
        out[n++] = 0x74; // t
      } else if (c === NL) {
        out[n++] = BACKSLASH;
        out[n++] = 0x6e; // n
      } else if (c === 0x0d) {
        out[n++] = BACKSLASH;
        out[n++] = 0x72; // r
      } else {
        out[n++] = c;
      }
    }
    this.len = n;
  }

  toText(): string {
    return DECODER.decode(this.buf.subarray(0, this.len));
  }
}

const DECODER = new TextDecoder();
const DIGITS = new Uint8Array(24);
/** POW10[i] = 10^(i - 6), for i in 0..22. */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** (i - 6));

export class MalformedBatch extends Error {}

// Walker state: positions and values of the event being built, reused across events (the consumer is
// synchronous per message, so module state is safe and allocates nothing per event).
let pos = 0;
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
let batchDevMemory = 0;
let evDevMemory = 0;
let evHasDevice = false;
/** Map entries of the event: key start/end, value start/end (metrics: value offset of the double, or -1). */
const ATTR = new Int32Array(4 * LIMITS.attributes.maxEntries);
const METR = new Int32Array(4 * LIMITS.metrics.maxEntries);
let nAttr = 0;
let nMetr = 0;

function varint(b: Uint8Array, end: number): number {
  let value = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) {
      throw new MalformedBatch("truncated varint");
    }
    const x = b[pos++] as number;
    value += (x & 0x7f) * mul;
    if (x < 0x80) {
      return value;
    }
    mul *= 128;
  }
  throw new MalformedBatch("varint too long");
}

/** The end of a LEN field whose length varint starts at pos; pos moves to its first byte. */
function lenEnd(b: Uint8Array, end: number): number {
  const len = varint(b, end);
  const e = pos + len;
  if (e > end) {
    throw new MalformedBatch("field runs past its message");
  }
  return e;
}

function skip(b: Uint8Array, end: number, wt: number): void {
  if (wt === WIRE.VARINT) {
    varint(b, end);
  } else if (wt === WIRE.I64) {
    pos += 8;
  } else if (wt === WIRE.LEN) {
    pos = lenEnd(b, end);
  } else if (wt === WIRE.I32) {
    pos += 4;
  } else {
    throw new MalformedBatch(`wire type ${wt}`);
  }
  if (pos > end) {
    throw new MalformedBatch("field runs past its message");
  }
}

/** The batch being walked, for its floats and doubles (little-endian on the wire). */
let view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(8));

function f32(_b: Uint8Array, at: number): number {
  return view.getFloat32(at, true);
}

function f64(_b: Uint8Array, at: number): number {
  return view.getFloat64(at, true);
}

/** A DeviceContext message into the given slots (a later occurrence overrides field by field). */
function readDevice(b: Uint8Array, end: number, starts: Int32Array, ends: Int32Array): number {
  let memory = -1;
  while (pos < end) {
    const tag = varint(b, end);
    const field = tag >>> 3;
    const wt = tag & 7;
    if (field < DEVICE_SLOTS && IS_DEVICE_STRING[field] === 1 && wt === WIRE.LEN) {
      const e = lenEnd(b, end);
      starts[field] = pos;
      ends[field] = e;
      pos = e;
    } else if (field === F.device.memory_total_mb && wt === WIRE.VARINT) {
      memory = varint(b, end) % 4294967296;
    } else {
      skip(b, end, wt);
    }
  }
  return memory;
}

function readPosition(b: Uint8Array, end: number): void {
  while (pos < end) {
    const tag = varint(b, end);
    const field = tag >>> 3;
    if ((field === F.vector3.x || field === F.vector3.y || field === F.vector3.z) && (tag & 7) === WIRE.I32) {
      if (pos + 4 > end) {
        throw new MalformedBatch("truncated float");
      }
      POSITION[field] = f32(b, pos);
      pos += 4;
    } else {
      skip(b, end, tag & 7);
    }
  }
}
/** x, y and z of the event's position, by number (AXES: in column order). */
const AXES = [F.vector3.x, F.vector3.y, F.vector3.z];
const POSITION = new Float64Array(Math.max(...AXES) + 1);
let hasPosition = false;

/** A map entry: key and value spans into `into` at slot n (value -1 when absent). */
function readEntry(b: Uint8Array, end: number, into: Int32Array, n: number, metrics: boolean): void {
  let ks = pos;
  let ke = pos;
  let vs = -1;
  let ve = -1;
  while (pos < end) {
    const tag = varint(b, end);
    const field = tag >>> 3;
    const wt = tag & 7;
    // Map entries number their key 1 and their value 2, whatever the map.
    if (field === F.attributesEntry.key && wt === WIRE.LEN) {
      ke = lenEnd(b, end);
      ks = pos;
      pos = ke;
    } else if (field === F.metricsEntry.value && metrics && wt === WIRE.I64) {
      vs = pos;
      pos += 8;
    } else if (field === F.attributesEntry.value && !metrics && wt === WIRE.LEN) {
      ve = lenEnd(b, end);
      vs = pos;
      pos = ve;
    } else {
      skip(b, end, wt);
    }
  }
  if (pos > end) {
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

/** A Map column: {'k':'v',…} or {'k':1.5,…}; an entry whose key repeats later is superseded by it. */
function writeMap(out: RowSink, b: Uint8Array, into: Int32Array, n: number, metrics: boolean): void {
  out.byte(0x7b); // {
  let first = true;
  for (let i = 0; i < n; i++) {
    let superseded = false;
    for (let j = i + 1; j < n && !superseded; j++) {
      superseded = sameKey(b, into, i, j);
    }
    if (superseded) {
      continue;
    }
    if (!first) {
      out.byte(0x2c); // ,
    }
    first = false;
    out.quoted(b, into[4 * i] as number, into[4 * i + 1] as number);
    out.byte(0x3a); // :
    const vs = into[4 * i + 2] as number;
    if (metrics) {
      out.text(vs < 0 ? "0" : String(f64(b, vs)));
    } else if (vs < 0) {
      out.byte(QUOTE);
      out.byte(QUOTE);
    } else {
      out.quoted(b, vs, into[4 * i + 3] as number);
    }
  }
  out.byte(0x7d); // }
}

function tab(out: RowSink): void {
  out.byte(TAB);
}

function nullableFloat(out: RowSink, field: number): void {
  // The SDKs' 0 (and -0) means "not collected".
  const v = FLOAT[field] as number;
  if (HAS[field] && v > 0) {
    out.f32(v);
  } else {
    out.bytes(NULL_BYTES);
  }
}
const NULL_BYTES = Uint8Array.from(NULL_TEXT);

function str(out: RowSink, b: Uint8Array, field: number): void {
  const e = STR_END[field] as number;
  if (e >= 0) {
    out.escaped(b, STR_START[field] as number, e);
  }
}

/** Summary of one message's rows: how many, and their timestamp range in µs. */
export type BuiltRows = { rows: number; minTimestampUs: number; maxTimestampUs: number };

/**
 * Appends the TSV rows of one decompressed TelemetryBatch to `out`: one line per event, in the order of
 * TSV_COLUMNS, except events whose index is in `present` (rows ClickHouse already holds).
 */
export function appendRows(
  out: RowSink,
  header: EnvelopeHeader,
  b: Uint8Array,
  present?: ReadonlySet<number>,
): BuiltRows {
  const end = b.length;
  view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const suffix = messageSuffix(header);
  // The batch's device context may follow the events on the wire: find it first.
  DEV_END.fill(-1);
  batchDevMemory = 0;
  pos = 0;
  while (pos < end) {
    const tag = varint(b, end);
    if (tag === TAG_BATCH_DEVICE) {
      const e = lenEnd(b, end);
      const m = readDevice(b, e, DEV_START, DEV_END);
      if (m >= 0) {
        batchDevMemory = m;
      }
      pos = e;
    } else {
      skip(b, end, tag & 7);
    }
  }
  const batchDevice = new RowSink(1024);
  writeDevice(batchDevice, b, DEV_START, DEV_END, null, null, batchDevMemory);
  const batchDeviceBytes = batchDevice.buf.subarray(0, batchDevice.len);

  let index = 0;
  let minTs = Number.POSITIVE_INFINITY;
  let maxTs = Number.NEGATIVE_INFINITY;
  pos = 0;
  while (pos < end) {
    const tag = varint(b, end);
    if (tag !== TAG_EVENTS) {
      skip(b, end, tag & 7);
      continue;
    }
    const e = lenEnd(b, end);
    const ts = readEvent(b, e);
    pos = e;
    if (ts < minTs) {
      minTs = ts;
    }
    if (ts > maxTs) {
      maxTs = ts;
    }
    if (!present?.has(index)) {
      writeEvent(out, b, index, ts, batchDeviceBytes, suffix);
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
  hasPosition = false;
  POSITION.fill(0);
  evHasDevice = false;
  evDevMemory = -1;
  nAttr = 0;
  nMetr = 0;
  let ts = 0;
  let memory = 0;
  let source = 0;
  while (pos < end) {
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
        STR_START[field] = pos;
        STR_END[field] = e;
        pos = e;
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
        if (pos + 4 > end) {
          throw new MalformedBatch("truncated float");
        }
        FLOAT[field] = f32(b, pos);
        HAS[field] = 1;
        pos += 4;
        break;
      case F.event.memory_used_bytes:
        memory = int64(b, end);
        break;
      case F.event.source:
        source = varint(b, end);
        break;
      case F.event.position: {
        const e = lenEnd(b, end);
        hasPosition = true;
        readPosition(b, e);
        pos = e;
        break;
      }
      case F.event.attributes:
      case F.event.metrics: {
        const e = lenEnd(b, end);
        if (field === F.event.attributes) {
          readEntry(b, e, ATTR, nAttr++, false);
        } else {
          readEntry(b, e, METR, nMetr++, true);
        }
        pos = e;
        break;
      }
      case F.event.device: {
        const e = lenEnd(b, end);
        if (!evHasDevice) {
          EV_DEV_END.fill(-1);
          evHasDevice = true;
        }
        const m = readDevice(b, e, EV_DEV_START, EV_DEV_END);
        if (m >= 0) {
          evDevMemory = m;
        }
        pos = e;
        break;
      }
      default:
        skip(b, end, wt);
    }
  }
  MEMORY = memory;
  SOURCE = source;
  return ts;
}
let MEMORY = 0;
let SOURCE = 0;

/** int64 varint: timestamps and memory are non-negative and below 2^53 (ingest checked both). */
function int64(b: Uint8Array, end: number): number {
  return varint(b, end);
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
      out.escaped(b, ownStart[f] as number, ownEnd[f] as number);
    } else if ((baseEnd[f] as number) >= 0) {
      out.escaped(b, baseStart[f] as number, baseEnd[f] as number);
    }
    out.byte(TAB);
  }
  out.uint(memory);
}

function writeEvent(
  out: RowSink,
  b: Uint8Array,
  index: number,
  ts: number,
  batchDevice: Uint8Array,
  suffix: Uint8Array,
): void {
  out.uint(index);
  tab(out);
  str(out, b, F.event.event_name);
  tab(out);
  const sec = Math.floor(ts / 1_000_000);
  out.uint(sec);
  out.byte(0x2e); // .
  out.uint(ts - sec * 1_000_000, 6);
  tab(out);
  str(out, b, F.event.session_id);
  tab(out);
  str(out, b, F.event.player_id);
  tab(out);
  for (const axis of AXES) {
    if (hasPosition) {
      out.f32(POSITION[axis] as number);
    } else {
      out.bytes(NULL_BYTES);
    }
    tab(out);
  }
  str(out, b, F.event.map_id);
  tab(out);
  nullableFloat(out, F.event.fps);
  tab(out);
  nullableFloat(out, F.event.frame_time_ms);
  tab(out);
  if (MEMORY > 0) {
    out.uint(MEMORY);
  } else {
    out.bytes(NULL_BYTES);
  }
  tab(out);
  nullableFloat(out, F.event.gpu_time_ms);
  tab(out);
  nullableFloat(out, F.event.game_thread_ms);
  tab(out);
  nullableFloat(out, F.event.render_thread_ms);
  tab(out);
  writeMap(out, b, ATTR, nAttr, false);
  tab(out);
  writeMap(out, b, METR, nMetr, true);
  tab(out);
  out.bytes(SOURCE_TEXT[SOURCE] ?? (SOURCE_TEXT[0] as Uint8Array));
  tab(out);
  str(out, b, F.event.build_id);
  tab(out);
  str(out, b, F.event.platform);
  tab(out);
  str(out, b, F.event.engine_version);
  tab(out);
  // A pair on the wire (ingest refuses a half pair); a lone value is never stored half.
  if (HAS[F.event.camera_yaw] && HAS[F.event.camera_pitch]) {
    out.f32(FLOAT[F.event.camera_yaw] as number);
    tab(out);
    out.f32(FLOAT[F.event.camera_pitch] as number);
    tab(out);
  } else {
    out.bytes(NULL_BYTES);
    tab(out);
    out.bytes(NULL_BYTES);
    tab(out);
  }
  if (evHasDevice) {
    const memory = evDevMemory > 0 ? evDevMemory : batchDevMemory;
    writeDevice(out, b, DEV_START, DEV_END, EV_DEV_START, EV_DEV_END, memory);
  } else {
    out.bytes(batchDevice);
  }
  out.bytes(suffix);
}

/** project_id … received_at and the line end: the same for every row of a message. */
function messageSuffix(header: EnvelopeHeader): Uint8Array {
  const sdk = parseSdkVersion(typeof header.sdkVersion === "string" ? header.sdkVersion : "");
  const sink = new RowSink(256);
  const enc = ascii;
  const field = (bytes: Uint8Array) => {
    sink.byte(TAB);
    sink.escaped(bytes, 0, bytes.length);
  };
  field(enc(header.projectId));
  field(enc(sdk.name));
  field(enc(sdk.version));
  field(enc(header.batchKey));
  const ms = Number(header.receivedAt);
  sink.byte(TAB);
  sink.text(`${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, "0")}`);
  sink.byte(NL);
  return sink.buf.slice(0, sink.len);
}
