/**
 * Single-pass validator for a decompressed `telemetry.v1.TelemetryBatch`
 * (proto/telemetry/v1/telemetry.proto: fields 1-21 as the engine SDKs send
 * them, our DeviceContext at batch field 2 and event field 22), run on the
 * ingest hot path before the raw bytes are enqueued.
 *
 * It walks the protobuf wire format once and materialises nothing but a few
 * numbers: no message objects, no strings (except to describe an error), no
 * per-field allocations (one Int32Array view per call). Floats and doubles
 * are checked on their raw IEEE-754 bits: for a float32 whose sign bit is
 * clear, the bits compared as an integer order exactly like the values, and
 * NaN and ±Infinity sit above every finite value, so "finite and 0 ≤ v ≤ max"
 * is one integer comparison against the bits of max. Strings are checked for
 * bytes ≥ 0x80 a 32-bit word at a time; only strings that have one go through
 * the exact UTF-8 validator (same acceptance as TextDecoder with fatal: true).
 *
 * String bounds are UTF-16 code units, the unit the SDKs clamp in (C# and JS
 * string length). A string's UTF-16 length never exceeds its UTF-8 byte
 * length, so only a string with more bytes than its bound is counted; one with
 * more than three bytes per allowed unit is over without counting.
 *
 * Accepting is conservative: whatever this scanner accepts, a standard proto3
 * decoder (protobuf-es, protobufjs) also accepts. It is stricter in a few
 * places: groups are rejected, a field may not run past the end of its
 * enclosing message, a known field must use its declared wire type, a varint
 * for a uint32 field must fit in 32 bits, and every occurrence of a repeated
 * singular field is validated (not only the last, which wins on decode).
 *
 * The wire primitives (varint, tag, length, int64, skip, UTF-8) are the reader
 * both walkers share (./wire/reader.ts); this file holds the contract's checks.
 * Runs in workerd and Node: no Node APIs, no dependencies. Never throws on any
 * input bytes.
 */

import { byNumber, F, type FieldSpec, MESSAGES, tag as wireTag } from "../shared/telemetry/fields.js";
import { DAY_US, HOUR_US, LIMITS } from "../shared/telemetry/limits.js";
import {
  E_TRUNCATED,
  f32Bits,
  f64Finite,
  utf8Units,
  WireReader,
  WT_I32,
  WT_I64,
  WT_LEN,
  WT_NAMES,
  WT_VARINT,
  wireErrorText,
} from "./wire/reader.js";

export type ScanOk = {
  ok: true;
  eventCount: number;
  /** Events plus attributes and metrics entries, as counted against LIMITS.maxDecodedEntries. */
  entryCount: number;
  minTimestampUs: number;
  maxTimestampUs: number;
  /** Performance-bearing events: fps, frame_time_ms, memory_used_bytes or gpu_time_ms above zero. */
  perfEventCount: number;
};

/**
 * `eventIndex` is the 0-based index of the offending event (null for batch-level
 * problems); `field` is the proto field path relative to that event (or to the
 * batch), e.g. 'timestamp_us', 'camera_pitch', 'position.x', 'device.gpu',
 * 'attributes["k"]'. The handler shows an event's fault as `events[i].<field>`.
 *
 * Batch-level fields: 'events' (count and decoded-entry caps), 'device.<name>',
 * 'batch' (size, malformed tags or unknown fields).
 * Malformed wire data (rule 'malformed protobuf: …') names the known field
 * whose value is bad (e.g. 'position.x', 'attributes.key'); a bad tag or a bad
 * unknown field names the enclosing message: 'batch', 'event', 'device',
 * 'position', 'attributes', 'metrics'. An event whose own length is bad is
 * reported as { eventIndex: i, field: 'event' }.
 */
export type ScanError = { ok: false; eventIndex: number | null; field: string; rule: string };

// ---------------------------------------------------------------------------
// Wire constants and lookup tables (indexed by field number).

/** A message's field names by number, prefixed with `prefix` ("" for numbers it does not use). */
function namesByNumber(fields: readonly FieldSpec[], prefix: string): string[] {
  return byNumber(fields).map((f) => (f ? prefix + f.name : ""));
}

/** UTF-16 bound of each string field by number (0 for other fields and unused numbers). */
function unitsByNumber(fields: readonly FieldSpec[]): Int32Array {
  const byNo = byNumber(fields);
  const out = new Int32Array(byNo.length);
  for (const f of fields) {
    if (f.bound && "units" in f.bound) {
      out[f.no] = f.bound.units;
    }
  }
  return out;
}

const DEVICE_STR_NAME = namesByNumber(MESSAGES.device.fields, "device.");
const DEVICE_STR_MAX = unitsByNumber(MESSAGES.device.fields);

/** GameTelemetryEvent field names by number (reserved 7 is "": skipped like an unknown field). */
const EVENT_FIELD_NAME = namesByNumber(MESSAGES.event.fields, "");
/** UTF-16 bound of each event string field by number (0 for non-strings). */
const EVENT_STR_MAX = unitsByNumber(MESSAGES.event.fields);

const POSITION_NAME = namesByNumber(MESSAGES.vector3.fields, "position.");

/**
 * How scanEvent handles each event field. It switches on the kind, not on the field number: the
 * numbers come from the field table, and only a switch over literal cases compiles to a jump table
 * (TypeScript inlines these members as literals).
 */
enum Kind {
  Unknown = 0,
  FieldZero,
  String,
  Timestamp,
  Memory,
  Source,
  PerfFloat,
  Yaw,
  Pitch,
  Position,
  Attributes,
  Metrics,
  Device,
}

/** Kind of each message-typed event field, by the message it holds. */
const MESSAGE_KIND = {
  vector3: Kind.Position,
  attributesEntry: Kind.Attributes,
  metricsEntry: Kind.Metrics,
  device: Kind.Device,
};

/**
 * Kind of each GameTelemetryEvent field by number, for every number a 1- or 2-byte tag holds (below
 * 2048; larger numbers are Kind.Unknown). scanEvent checks the bound as a literal: a bundler turns a
 * module's consts into vars, which the optimiser cannot fold.
 */
const EVENT_KIND = new Uint8Array(2048);
EVENT_KIND[0] = Kind.FieldZero;
for (const f of MESSAGES.event.fields) {
  EVENT_KIND[f.no] =
    f.type === "string"
      ? Kind.String
      : f.type === "int64"
        ? f.no === F.event.timestamp_us
          ? Kind.Timestamp
          : Kind.Memory
        : f.type === "enum"
          ? Kind.Source
          : f.type === "float"
            ? f.no === F.event.camera_yaw
              ? Kind.Yaw
              : f.no === F.event.camera_pitch
                ? Kind.Pitch
                : Kind.PerfFloat
            : MESSAGE_KIND[f.message as keyof typeof MESSAGE_KIND];
}

/** Bit in requiredMask of each required (non-empty) event string, by number; the mask with all of them. */
const REQUIRED_BIT = new Int32Array(EVENT_FIELD_NAME.length);
const REQUIRED_ALL = MESSAGES.event.fields
  .filter((f) => f.bound && "required" in f.bound)
  .reduce((all, f) => {
    REQUIRED_BIT[f.no] = all + 1;
    return 2 * all + 1;
  }, 0);

/** Float32 bit patterns (as int32) of the bounds; see f32BitsAtMost. */
const F32_SCRATCH = new Float32Array(1);
const I32_SCRATCH = new Int32Array(F32_SCRATCH.buffer);
/** Bits of the largest float32 ≤ x (x > 0), or < x when `strict`. */
function f32BitsAtMost(x: number, strict = false): number {
  F32_SCRATCH[0] = x;
  const f = F32_SCRATCH[0] as number;
  const bits = I32_SCRATCH[0] as number;
  return f > x || (strict && f === x) ? bits - 1 : bits;
}
const POS_MAX_BITS = f32BitsAtMost(LIMITS.positionAbsMax);
const YAW_MAX_BITS = f32BitsAtMost(LIMITS.cameraYawMaxExclusive, true);
const PITCH_MAX_BITS = f32BitsAtMost(LIMITS.cameraPitchAbsMax);
/** -0.0f as an int32 bit pattern. */
const NEG_ZERO_BITS = -2147483648;
/** Bound bits of each float event field that must be 0 ≤ v ≤ max, by number (fps, the timings). */
const PERF_MAX_BITS = new Int32Array(EVENT_FIELD_NAME.length);
/** Bit in perfMask of each performance-bearing field, by number (fps, frame_time_ms, gpu_time_ms, memory). */
const PERF_BIT = new Int32Array(EVENT_FIELD_NAME.length);
for (const f of MESSAGES.event.fields) {
  if (f.type === "float" && f.bound && "max" in f.bound && f.bound.min === 0) {
    PERF_MAX_BITS[f.no] = f32BitsAtMost(f.bound.max);
  }
}
for (const [i, f] of MESSAGES.event.fields.filter((f) => "perf" in f).entries()) {
  PERF_BIT[f.no] = 1 << i;
}
const PERF_BIT_MEMORY = PERF_BIT[F.event.memory_used_bytes] as number;

const RULE_REQUIRED = "required, non-empty";
const RULE_UTF8 = "must be valid UTF-8";
const RULE_FINITE = "must be finite";
const RULE_TIMESTAMP = `must be within the last ${LIMITS.timestampMaxAgeUs / DAY_US} days and at most ${
  LIMITS.timestampMaxAheadUs / HOUR_US
} hours ahead`;
const RULE_POSITION = `must be finite, at most ${LIMITS.positionAbsMax} in absolute value`;
const RULE_FPS = `must be finite, from 0 to ${LIMITS.fpsMax}`;
const RULE_TIME_MS = `must be finite, from 0 to ${LIMITS.timeMsMax} ms`;
const RULE_REFRESH = `must be from 0 to ${LIMITS.refreshRateHzMax} Hz (0: not collected)`;
const RULE_MEMORY = `must be from 0 to ${LIMITS.memoryUsedBytesMax} bytes (64 GiB)`;
const RULE_YAW = `must be finite, in [0, ${LIMITS.cameraYawMaxExclusive}) degrees`;
const RULE_PITCH = `must be finite, in [-${LIMITS.cameraPitchAbsMax}, ${LIMITS.cameraPitchAbsMax}] degrees`;
const RULE_SOURCE =
  "must be 0 (TELEMETRY_SOURCE_UNSPECIFIED), 1 (TELEMETRY_SOURCE_PLAYER) or 2 (TELEMETRY_SOURCE_AUTOMATED)";
const RULE_NO_PITCH = "required when camera_yaw is present (camera_yaw and camera_pitch are a pair)";
const RULE_NO_YAW = "required when camera_pitch is present (camera_yaw and camera_pitch are a pair)";
const RULE_ENTRIES = `at most ${LIMITS.maxDecodedEntries} decoded entries per batch (events plus attributes and metrics entries)`;
const ruleMaxUnits = (n: number): string => `must be at most ${n} UTF-16 code units`;

/** Tags the fast paths look for: a canonical Vector3 and canonical map entries. */
const TAG_X = wireTag(F.vector3.x, WT_I32);
const TAG_Y = wireTag(F.vector3.y, WT_I32);
const TAG_Z = wireTag(F.vector3.z, WT_I32);
const TAG_KEY = wireTag(F.attributesEntry.key, WT_LEN);
const TAG_STRING_VALUE = wireTag(F.attributesEntry.value, WT_LEN);
const TAG_DOUBLE_VALUE = wireTag(F.metricsEntry.value, WT_I64);
/** Key bound usable by the map-entry fast path (both maps share it today). */
const KEY_MAX_FAST = Math.min(LIMITS.attributes.keyMaxUnits, LIMITS.metrics.keyMaxUnits);
const MAX_ATTRIBUTES = LIMITS.attributes.maxEntries;
const MAX_METRICS = LIMITS.metrics.maxEntries;
const MAX_ENTRIES = LIMITS.maxDecodedEntries;
const TWO_32 = 4294967296;

// ---------------------------------------------------------------------------
// Scanner state: the reader's (position, last int64, UTF-8 word view) and the scan's own, in one
// object. The scanner is synchronous and non-reentrant, so one instance serves every scan; it
// avoids allocating result objects on the hot path.

class ScanState extends WireReader {
  /** Index of the event being scanned, or null at batch level. */
  curEvent: number | null = null;
  errField = "";
  errRule = "";
  /** Accepted timestamp window for the current scan. */
  tsLo = 0;
  tsHi = 0;
  /** Decoded entries so far (events plus map entries). */
  entries = 0;
  /** Output of scanEvent for the event just scanned (its timestamp is in num[EV_TS]). */
  evPerf = false;
}

const s = new ScanState();
/** Slots of s.num: the last int64 read (the reader's), the timestamp of the event scanEvent just accepted. */
const I64 = 0;
const EV_TS = 1;

/** Record an error and return -1 (so callers can `return fail(...)`). */
function fail(field: string, rule: string): number {
  s.errField = field;
  s.errRule = rule;
  return -1;
}

function malformedCode(field: string, code: number): number {
  return fail(field, `malformed protobuf: ${wireErrorText(code)}`);
}

function wrongWireType(field: string, got: number, expected: number): number {
  return fail(field, `malformed protobuf: wrong wire type ${WT_NAMES[got]} (expected ${WT_NAMES[expected]})`);
}

/** Skip an unknown field; on error records it against `container` and returns -1. */
function skipUnknown(b: Uint8Array, p: number, end: number, wt: number, container: string): number {
  const q = s.skipField(b, p, end, wt);
  return q < 0 ? malformedCode(container, q) : q;
}

/** Finite and 0 ≤ v ≤ max given the float's bits and max's bits (−0 counts as 0; NaN and ∞ are above any max). */
function f32InZeroTo(bits: number, maxBits: number): boolean {
  return bits >= 0 ? bits <= maxBits : bits === NEG_ZERO_BITS;
}

/** A string field: valid UTF-8 of at most `max` UTF-16 code units. Returns 0, or -1 after recording the error. */
function checkString(b: Uint8Array, p: number, end: number, max: number, name: string): number {
  const len = end - p;
  if (len <= max) {
    // UTF-16 units ≤ UTF-8 bytes: within the bound whatever the text.
    return s.isUtf8(b, p, end) ? 0 : fail(name, RULE_UTF8);
  }
  // UTF-16 units ≥ bytes / 3, so more than 3 bytes per allowed unit is over without counting.
  if (len > 3 * max) {
    return fail(name, ruleMaxUnits(max));
  }
  const n = utf8Units(b, p, end);
  if (n < 0) {
    return fail(name, RULE_UTF8);
  }
  return n > max ? fail(name, ruleMaxUnits(max)) : 0;
}

// ---------------------------------------------------------------------------
// Message scanners. Each returns 0 on success and -1 after recording the
// first error.

function scanDevice(b: Uint8Array, p: number, end: number): number {
  while (p < end) {
    let tag = b[p] as number;
    if (tag < 0x80) {
      p++;
    } else {
      tag = s.readTag(b, p, end);
      if (tag < 0) {
        return malformedCode("device", s.pos);
      }
      p = s.pos;
    }
    const fieldNo = tag >>> 3;
    const wt = tag & 7;
    if (fieldNo === 0) {
      return fail("device", "malformed protobuf: field number 0");
    }
    if (fieldNo < DEVICE_STR_MAX.length && DEVICE_STR_MAX[fieldNo] !== 0) {
      const name = DEVICE_STR_NAME[fieldNo] as string;
      if (wt !== WT_LEN) {
        return wrongWireType(name, wt, WT_LEN);
      }
      const len = s.readLen(b, p, end);
      if (len < 0) {
        return malformedCode(name, s.pos);
      }
      p = s.pos;
      if (checkString(b, p, p + len, DEVICE_STR_MAX[fieldNo] as number, name) < 0) {
        return -1;
      }
      p += len;
    } else if (fieldNo === F.device.memory_total_mb) {
      p = scanDeviceUint32(b, p, end, wt, "device.memory_total_mb", TWO_32 - 1, "");
      if (p < 0) {
        return -1;
      }
    } else if (fieldNo === F.device.refresh_rate_hz) {
      p = scanDeviceUint32(b, p, end, wt, "device.refresh_rate_hz", LIMITS.refreshRateHzMax, RULE_REFRESH);
      if (p < 0) {
        return -1;
      }
    } else {
      p = skipUnknown(b, p, end, wt, "device");
      if (p < 0) {
        return -1;
      }
    }
  }
  return 0;
}

/**
 * A uint32 field of the device message at p: its end, or -1 after recording the error (a wrong wire type
 * or a varint over uint32 is malformed; above `max`, `rule`).
 */
function scanDeviceUint32(
  b: Uint8Array,
  p: number,
  end: number,
  wt: number,
  name: string,
  max: number,
  rule: string,
): number {
  if (wt !== WT_VARINT) {
    return wrongWireType(name, wt, WT_VARINT);
  }
  const v = s.readVarint(b, p, end);
  if (v < 0) {
    return malformedCode(name, s.pos);
  }
  if (v >= TWO_32) {
    return fail(name, "malformed protobuf: varint does not fit in uint32");
  }
  if (v > max) {
    return fail(name, rule);
  }
  return s.pos;
}

/** Vector3 position: every coordinate present is finite with |v| ≤ LIMITS.positionAbsMax. */
function scanPosition(b: Uint8Array, p: number, end: number): number {
  // Fast path: canonical x, y, z all present and in range.
  if (
    end - p === 15 &&
    b[p] === TAG_X &&
    b[p + 5] === TAG_Y &&
    b[p + 10] === TAG_Z &&
    (f32Bits(b, p + 1) & 0x7fffffff) <= POS_MAX_BITS &&
    (f32Bits(b, p + 6) & 0x7fffffff) <= POS_MAX_BITS &&
    (f32Bits(b, p + 11) & 0x7fffffff) <= POS_MAX_BITS
  ) {
    return 0;
  }
  while (p < end) {
    let tag = b[p] as number;
    if (tag < 0x80) {
      p++;
    } else {
      tag = s.readTag(b, p, end);
      if (tag < 0) {
        return malformedCode("position", s.pos);
      }
      p = s.pos;
    }
    const fieldNo = tag >>> 3;
    const wt = tag & 7;
    if (fieldNo === F.vector3.x || fieldNo === F.vector3.y || fieldNo === F.vector3.z) {
      const name = POSITION_NAME[fieldNo] as string;
      if (wt !== WT_I32) {
        return wrongWireType(name, wt, WT_I32);
      }
      if (end - p < 4) {
        return malformedCode(name, E_TRUNCATED);
      }
      if ((f32Bits(b, p) & 0x7fffffff) > POS_MAX_BITS) {
        return fail(name, RULE_POSITION);
      }
      p += 4;
    } else if (fieldNo === 0) {
      return fail("position", "malformed protobuf: field number 0");
    } else {
      p = skipUnknown(b, p, end, wt, "position");
      if (p < 0) {
        return -1;
      }
    }
  }
  return 0;
}

/** Describe a map key for an error path; only called on valid UTF-8 keys. */
function keyPath(map: string, b: Uint8Array, start: number, end: number): string {
  let key: string;
  try {
    key = new TextDecoder().decode(b.subarray(start, end));
  } catch {
    key = "?";
  }
  return `${map}[${JSON.stringify(key)}]`;
}

/**
 * One map entry of attributes (isMetrics = false: value is a string, field 2
 * LEN) or metrics (isMetrics = true: value is a double, field 2 I64). Key and
 * value: last occurrence wins, as on decode; an absent value is the default
 * ("" or 0), which the SDKs send for an empty string or a zero metric. The key
 * is checked before the value.
 */
function scanMapEntry(b: Uint8Array, p: number, end: number, isMetrics: boolean): number {
  // Fast path: canonical entry (key, then value or nothing; 1-byte lengths)
  // that is valid. Anything else, including every invalid entry, takes the
  // general path.
  const kl = b[p + 1] as number;
  if (end - p >= 3 && b[p] === TAG_KEY && kl > 0 && kl <= KEY_MAX_FAST) {
    const ks = p + 2;
    const ke = ks + kl;
    if (ke === end) {
      if (s.isUtf8(b, ks, ke)) {
        return 0;
      }
    } else if (ke <= end - 2) {
      if (isMetrics) {
        if (ke + 9 === end && b[ke] === TAG_DOUBLE_VALUE && f64Finite(b, ke + 1) && s.isUtf8(b, ks, ke)) {
          return 0;
        }
      } else {
        // vl < 0x80 ≤ valueMaxUnits, so the value's bound holds without counting.
        const vl = b[ke + 1] as number;
        if (
          b[ke] === TAG_STRING_VALUE &&
          ke + 2 + vl === end &&
          vl < 0x80 &&
          s.isUtf8(b, ks, ke) &&
          s.isUtf8(b, ke + 2, end)
        ) {
          return 0;
        }
      }
    }
  }
  const map = isMetrics ? "metrics" : "attributes";
  let keyStart = 0;
  let keyEnd = 0;
  let valStart = -1;
  let valEnd = 0;
  while (p < end) {
    let tag = b[p] as number;
    if (tag < 0x80) {
      p++;
    } else {
      tag = s.readTag(b, p, end);
      if (tag < 0) {
        return malformedCode(map, s.pos);
      }
      p = s.pos;
    }
    const fieldNo = tag >>> 3;
    const wt = tag & 7;
    if (fieldNo === F.attributesEntry.key) {
      if (wt !== WT_LEN) {
        return wrongWireType(`${map}.key`, wt, WT_LEN);
      }
      const len = s.readLen(b, p, end);
      if (len < 0) {
        return malformedCode(`${map}.key`, s.pos);
      }
      keyStart = s.pos;
      keyEnd = keyStart + len;
      p = keyEnd;
    } else if (fieldNo === F.attributesEntry.value) {
      if (isMetrics) {
        if (wt !== WT_I64) {
          return wrongWireType(`${map}.value`, wt, WT_I64);
        }
        if (end - p < 8) {
          return malformedCode(`${map}.value`, E_TRUNCATED);
        }
        valStart = p;
        p += 8;
      } else {
        if (wt !== WT_LEN) {
          return wrongWireType(`${map}.value`, wt, WT_LEN);
        }
        const len = s.readLen(b, p, end);
        if (len < 0) {
          return malformedCode(`${map}.value`, s.pos);
        }
        valStart = s.pos;
        valEnd = valStart + len;
        p = valEnd;
      }
    } else if (fieldNo === 0) {
      return fail(map, "malformed protobuf: field number 0");
    } else {
      p = skipUnknown(b, p, end, wt, map);
      if (p < 0) {
        return -1;
      }
    }
  }
  // Every SDK skips empty keys; a map keyed by "" has no meaning to store.
  if (keyEnd === keyStart) {
    return fail(map, "key must be non-empty");
  }
  const keyMax = isMetrics ? LIMITS.metrics.keyMaxUnits : LIMITS.attributes.keyMaxUnits;
  if (checkString(b, keyStart, keyEnd, keyMax, map) < 0) {
    s.errRule = `key ${s.errRule}`;
    return -1;
  }
  if (valStart >= 0) {
    if (isMetrics) {
      if (!f64Finite(b, valStart)) {
        return fail(keyPath(map, b, keyStart, keyEnd), RULE_FINITE);
      }
    } else if (checkString(b, valStart, valEnd, LIMITS.attributes.valueMaxUnits, "") < 0) {
      s.errField = keyPath(map, b, keyStart, keyEnd);
      return -1;
    }
  }
  return 0;
}

/** One GameTelemetryEvent; sets s.num[EV_TS] / s.evPerf. s.curEvent is set by the caller. */
function scanEvent(b: Uint8Array, p: number, end: number): number {
  let hasTs = false;
  /** Which required strings are non-empty (last occurrence wins, as on decode). */
  let requiredMask = 0;
  let hasYaw = false;
  let hasPitch = false;
  /** Which performance-bearing fields are above zero (last occurrence wins, as on decode). */
  let perfMask = 0;
  let nAttributes = 0;
  let nMetrics = 0;
  let ts = 0;
  while (p < end) {
    let tag = b[p] as number;
    if (tag < 0x80) {
      p++;
    } else if (end - p >= 2 && (b[p + 1] as number) < 0x80) {
      // Fields 16 and up have 2-byte tags.
      tag = (tag & 0x7f) | ((b[p + 1] as number) << 7);
      p += 2;
    } else {
      tag = s.readTag(b, p, end);
      if (tag < 0) {
        return malformedCode("event", s.pos);
      }
      p = s.pos;
    }
    const fieldNo = tag >>> 3;
    const wt = tag & 7;
    const kind = fieldNo < 2048 ? (EVENT_KIND[fieldNo] as Kind) : Kind.Unknown;
    switch (kind) {
      case Kind.String: {
        const name = EVENT_FIELD_NAME[fieldNo] as string;
        if (wt !== WT_LEN) {
          return wrongWireType(name, wt, WT_LEN);
        }
        const len = s.readLen(b, p, end);
        if (len < 0) {
          return malformedCode(name, s.pos);
        }
        p = s.pos;
        if (checkString(b, p, p + len, EVENT_STR_MAX[fieldNo] as number, name) < 0) {
          return -1;
        }
        const bit = REQUIRED_BIT[fieldNo] as number;
        requiredMask = len > 0 ? requiredMask | bit : requiredMask & ~bit;
        p += len;
        break;
      }
      case Kind.Timestamp: {
        if (wt !== WT_VARINT) {
          return wrongWireType("timestamp_us", wt, WT_VARINT);
        }
        const q = s.readInt64(b, p, end);
        if (q < 0) {
          return malformedCode("timestamp_us", q);
        }
        p = q;
        ts = s.num[I64] as number;
        if (!(ts >= s.tsLo && ts <= s.tsHi)) {
          return fail("timestamp_us", RULE_TIMESTAMP);
        }
        hasTs = true;
        break;
      }
      case Kind.PerfFloat: {
        if (wt !== WT_I32) {
          return wrongWireType(EVENT_FIELD_NAME[fieldNo] as string, wt, WT_I32);
        }
        if (end - p < 4) {
          return malformedCode(EVENT_FIELD_NAME[fieldNo] as string, E_TRUNCATED);
        }
        const bits = f32Bits(b, p);
        if (!f32InZeroTo(bits, PERF_MAX_BITS[fieldNo] as number)) {
          return fail(EVENT_FIELD_NAME[fieldNo] as string, fieldNo === F.event.fps ? RULE_FPS : RULE_TIME_MS);
        }
        const bit = PERF_BIT[fieldNo] as number;
        perfMask = bits > 0 ? perfMask | bit : perfMask & ~bit;
        p += 4;
        break;
      }
      case Kind.Yaw:
      case Kind.Pitch: {
        const name = EVENT_FIELD_NAME[fieldNo] as string;
        if (wt !== WT_I32) {
          return wrongWireType(name, wt, WT_I32);
        }
        if (end - p < 4) {
          return malformedCode(name, E_TRUNCATED);
        }
        const bits = f32Bits(b, p);
        if (kind === Kind.Yaw) {
          if (!f32InZeroTo(bits, YAW_MAX_BITS)) {
            return fail(name, RULE_YAW);
          }
          hasYaw = true;
        } else {
          if ((bits & 0x7fffffff) > PITCH_MAX_BITS) {
            return fail(name, RULE_PITCH);
          }
          hasPitch = true;
        }
        p += 4;
        break;
      }
      case Kind.Position:
      case Kind.Attributes:
      case Kind.Metrics:
      case Kind.Device: {
        const name = EVENT_FIELD_NAME[fieldNo] as string;
        if (wt !== WT_LEN) {
          return wrongWireType(name, wt, WT_LEN);
        }
        const len = s.readLen(b, p, end);
        if (len < 0) {
          return malformedCode(name, s.pos);
        }
        p = s.pos;
        const q = p + len;
        if (kind === Kind.Attributes) {
          if (++nAttributes > MAX_ATTRIBUTES) {
            return fail("attributes", `at most ${MAX_ATTRIBUTES} entries`);
          }
          if (++s.entries > MAX_ENTRIES) {
            s.curEvent = null;
            return fail("events", RULE_ENTRIES);
          }
          if (scanMapEntry(b, p, q, false) < 0) {
            return -1;
          }
        } else if (kind === Kind.Metrics) {
          if (++nMetrics > MAX_METRICS) {
            return fail("metrics", `at most ${MAX_METRICS} entries`);
          }
          if (++s.entries > MAX_ENTRIES) {
            s.curEvent = null;
            return fail("events", RULE_ENTRIES);
          }
          if (scanMapEntry(b, p, q, true) < 0) {
            return -1;
          }
        } else if (kind === Kind.Position) {
          if (scanPosition(b, p, q) < 0) {
            return -1;
          }
        } else if (scanDevice(b, p, q) < 0) {
          return -1;
        }
        p = q;
        break;
      }
      case Kind.Memory: {
        if (wt !== WT_VARINT) {
          return wrongWireType("memory_used_bytes", wt, WT_VARINT);
        }
        const q = s.readInt64(b, p, end);
        if (q < 0) {
          return malformedCode("memory_used_bytes", q);
        }
        p = q;
        const v = s.num[I64] as number;
        // NaN (beyond ±2^53) fails too.
        if (!(v >= 0 && v <= LIMITS.memoryUsedBytesMax)) {
          return fail("memory_used_bytes", RULE_MEMORY);
        }
        perfMask = v > 0 ? perfMask | PERF_BIT_MEMORY : perfMask & ~PERF_BIT_MEMORY;
        break;
      }
      case Kind.Source: {
        if (wt !== WT_VARINT) {
          return wrongWireType("source", wt, WT_VARINT);
        }
        const v = s.readVarint(b, p, end);
        if (v < 0) {
          return malformedCode("source", s.pos);
        }
        if (v > LIMITS.sourceMax) {
          return fail("source", RULE_SOURCE);
        }
        p = s.pos;
        break;
      }
      case Kind.FieldZero:
        return fail("event", "malformed protobuf: field number 0");
      default:
        // Reserved 7 and unknown fields (ours or a newer SDK's) are skipped.
        p = skipUnknown(b, p, end, wt, "event");
        if (p < 0) {
          return -1;
        }
    }
  }
  if (!hasTs) {
    return fail("timestamp_us", RULE_TIMESTAMP);
  }
  if (requiredMask !== REQUIRED_ALL) {
    // The first required string (in field order) that is missing or empty.
    for (let no = 0; no < REQUIRED_BIT.length; no++) {
      const bit = REQUIRED_BIT[no] as number;
      if (bit !== 0 && (requiredMask & bit) === 0) {
        return fail(EVENT_FIELD_NAME[no] as string, RULE_REQUIRED);
      }
    }
  }
  if (hasYaw !== hasPitch) {
    return hasYaw ? fail("camera_pitch", RULE_NO_PITCH) : fail("camera_yaw", RULE_NO_YAW);
  }
  s.num[EV_TS] = ts;
  s.evPerf = perfMask !== 0;
  return 0;
}

function error(): ScanError {
  return { ok: false, eventIndex: s.curEvent, field: s.errField, rule: s.errRule };
}

/**
 * Validate a decompressed TelemetryBatch against the wire contract and
 * LIMITS in one streaming pass. `nowUs` is the server's current time in
 * microseconds since the Unix epoch. Returns the first offending
 * event/field in wire order, or summary numbers when everything is valid.
 */
export function scanTelemetryBatch(bytes: Uint8Array, nowUs: number): ScanOk | ScanError {
  s.curEvent = null;
  s.errField = "";
  s.errRule = "";
  s.entries = 0;
  if (bytes.length > LIMITS.maxDecompressedBytes) {
    fail("batch", `decompressed batch must be at most ${LIMITS.maxDecompressedBytes} bytes`);
    return error();
  }
  s.tsLo = nowUs - LIMITS.timestampMaxAgeUs;
  s.tsHi = nowUs + LIMITS.timestampMaxAheadUs;
  s.attach(bytes);
  const result = scanBatch(bytes);
  s.detach(); // do not keep the caller's buffer alive
  return result;
}

function scanBatch(bytes: Uint8Array): ScanOk | ScanError {
  const b = bytes;
  const end = b.length;
  let p = 0;
  let eventCount = 0;
  let perfEventCount = 0;
  let minTs = Number.POSITIVE_INFINITY;
  let maxTs = Number.NEGATIVE_INFINITY;

  while (p < end) {
    let tag = b[p] as number;
    if (tag < 0x80) {
      p++;
    } else {
      tag = s.readTag(b, p, end);
      if (tag < 0) {
        malformedCode("batch", s.pos);
        return error();
      }
      p = s.pos;
    }
    const fieldNo = tag >>> 3;
    const wt = tag & 7;

    if (fieldNo === F.batch.events) {
      if (wt !== WT_LEN) {
        wrongWireType("events", wt, WT_LEN);
        return error();
      }
      if (eventCount >= LIMITS.maxEvents) {
        fail("events", `at most ${LIMITS.maxEvents} events`);
        return error();
      }
      if (++s.entries > MAX_ENTRIES) {
        fail("events", RULE_ENTRIES);
        return error();
      }
      s.curEvent = eventCount;
      const len = s.readLen(b, p, end);
      if (len < 0) {
        malformedCode("event", s.pos);
        return error();
      }
      p = s.pos;
      const q = p + len;
      if (scanEvent(b, p, q) < 0) {
        return error();
      }
      s.curEvent = null;
      eventCount++;
      const ts = s.num[EV_TS] as number;
      if (ts < minTs) {
        minTs = ts;
      }
      if (ts > maxTs) {
        maxTs = ts;
      }
      if (s.evPerf) {
        perfEventCount++;
      }
      p = q;
      continue;
    }

    if (fieldNo === F.batch.device) {
      if (wt !== WT_LEN) {
        wrongWireType("device", wt, WT_LEN);
        return error();
      }
      const len = s.readLen(b, p, end);
      if (len < 0) {
        malformedCode("device", s.pos);
        return error();
      }
      p = s.pos;
      if (scanDevice(b, p, p + len) < 0) {
        return error();
      }
      p += len;
      continue;
    }

    if (fieldNo === 0) {
      fail("batch", "malformed protobuf: field number 0");
      return error();
    }
    p = skipUnknown(b, p, end, wt, "batch");
    if (p < 0) {
      return error();
    }
  }

  if (eventCount < LIMITS.minEvents) {
    fail("events", "must contain at least 1 event");
    return error();
  }
  return {
    ok: true,
    eventCount,
    entryCount: s.entries,
    minTimestampUs: minTs,
    maxTimestampUs: maxTs,
    perfEventCount,
  };
}
