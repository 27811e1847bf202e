/**
 * The protobuf wire reader both walkers of a TelemetryBatch use: ingest's scanner (../wire-scan.ts),
 * which validates the bytes before they are queued, and the consumer's row walker
 * (../consumer/wire-rows.ts), which turns accepted bytes into ClickHouse rows.
 *
 * A WireReader holds the only mutable state of a walk: `pos`, the position after the last read (or a
 * negative error code after a failed one), the value of the last int64 read, and the 32-bit view the
 * UTF-8 check reads a word at a time. Each walker keeps one instance (a subclass with its own
 * per-walk fields): the walks are synchronous and non-reentrant, and a reused instance allocates
 * nothing per field. The reads take the position as an argument and return a number (never an
 * object): nothing here throws or allocates, whatever the bytes.
 *
 * Field numbers and wire types come from the field table (workers/shared/telemetry/fields.ts).
 */

import { WIRE } from "../../shared/telemetry/fields.js";
import { LIMITS } from "../../shared/telemetry/limits.js";

/** Wire types, as plain numbers (read once: a compare against a binding, not a property load, on the hot paths). */
export const WT_VARINT = WIRE.VARINT;
export const WT_I64 = WIRE.I64;
export const WT_LEN = WIRE.LEN;
export const WT_I32 = WIRE.I32;
/** Wire types 3 and 4 (groups): the field table names none; both walkers refuse them. */
export const WT_SGROUP = 3;
export const WT_EGROUP = 4;
/** Each wire type's name, for error messages. */
export const WT_NAMES = ["VARINT", "I64", "LEN", "SGROUP", "EGROUP", "I32", "6", "7"];

// Error codes left in `pos` (and returned, as negative positions) by a failed read.
export const E_TRUNCATED = -1;
export const E_VARINT_TOO_LONG = -2;
export const E_GROUP = -3;
export const E_BAD_WIRE_TYPE = -4;
export const E_BAD_TAG = -5;

/** What a read's error code means, as the walkers report it. */
export function wireErrorText(code: number): string {
  switch (code) {
    case E_VARINT_TOO_LONG:
      return "varint longer than 10 bytes";
    case E_GROUP:
      return "group wire type is not supported";
    case E_BAD_WIRE_TYPE:
      return "invalid wire type";
    case E_BAD_TAG:
      return "tag longer than 5 bytes or beyond uint32";
    default:
      return "truncated field (exceeds its enclosing message)";
  }
}

const TWO_32 = 4294967296;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const EMPTY_WORDS = new Int32Array(0);
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

export class WireReader {
  /** Position after the last read, or a negative error code (E_*) after a failed one. */
  pos = 0;
  /**
   * num[0]: the value of the last int64 read (readInt64), as a JS number, or NaN outside ±(2^53 - 1).
   * A Float64Array slot keeps the number unboxed (no HeapNumber per timestamp); num[1] is the caller's.
   */
  readonly num = new Float64Array(2);
  /**
   * 32-bit view over the whole ArrayBuffer behind the bytes being walked, for isUtf8's ASCII fast path
   * (one load per 4 bytes), and the byte offset of those bytes inside it. Set by attach; empty on
   * big-endian hosts and for short inputs.
   */
  private words: Int32Array = EMPTY_WORDS;
  private wordsOff = 0;

  /** Prepares a walk over `bytes`; call detach after it. */
  attach(bytes: Uint8Array): void {
    this.pos = 0;
    this.wordsOff = bytes.byteOffset;
    if (LITTLE_ENDIAN && bytes.length >= 16) {
      this.words = new Int32Array(bytes.buffer, 0, bytes.buffer.byteLength >>> 2);
    }
  }

  /** Drops the view of the walked bytes (so the reader does not keep the caller's buffer alive). */
  detach(): void {
    this.words = EMPTY_WORDS;
  }

  /**
   * Unsigned varint starting at p (p < end not required). Returns the value, exact below 2^53 and
   * otherwise some number ≥ 2^53, and sets pos to the position after it. On error returns -1 and sets
   * pos to an error code.
   */
  readVarint(b: Uint8Array, p: number, end: number): number {
    let value = 0;
    let mul = 1;
    for (let i = 0; i < LIMITS.maxVarintBytes; i++) {
      if (p >= end) {
        this.pos = E_TRUNCATED;
        return -1;
      }
      const x = b[p++] as number;
      value += (x & 0x7f) * mul;
      if (x < 0x80) {
        this.pos = p;
        return value;
      }
      mul *= 128;
    }
    this.pos = E_VARINT_TOO_LONG;
    return -1;
  }

  /**
   * Tag at p (p < end), for a caller whose own fast path did not take it. Returns the tag (a uint32)
   * and sets pos; on error returns -1 with pos = error code. Like protobuf-es, a tag is at most 5
   * bytes and must fit in uint32.
   */
  readTag(b: Uint8Array, p: number, end: number): number {
    const tag = this.readVarint(b, p, end);
    if (tag < 0) {
      return -1;
    }
    if (this.pos - p > LIMITS.maxTagBytes || tag >= TWO_32) {
      this.pos = E_BAD_TAG;
      return -1;
    }
    return tag;
  }

  /**
   * A LEN field's length at p (the byte after the tag), checked to fit before `end`. Returns the
   * payload length and sets pos to the payload start; on error returns -1 with pos = error code.
   */
  readLen(b: Uint8Array, p: number, end: number): number {
    let len: number;
    if (p < end && (b[p] as number) < 0x80) {
      len = b[p] as number;
      p++;
    } else {
      len = this.readVarint(b, p, end);
      if (len < 0) {
        return -1;
      }
      p = this.pos;
    }
    if (len > end - p) {
      this.pos = E_TRUNCATED;
      return -1;
    }
    this.pos = p;
    return len;
  }

  /**
   * int64 varint at p. Stores its value in num[0] as a JS number, or NaN when it is outside
   * ±(2^53 - 1), and returns the position after it (or a negative error code). Negative values are
   * 10-byte two's-complement varints.
   */
  readInt64(b: Uint8Array, p: number, end: number): number {
    // Fast path: ≤ 8 bytes (56 bits) is a non-negative value; decode it as two
    // 28-bit halves. Realistic timestamps (~2^51 µs) are 8-byte varints.
    let q = p;
    let x = 0;
    let lo = 0;
    let hi = 0;
    let lim = end - p < 4 ? end : p + 4;
    for (let shift = 0; q < lim; q++, shift += 7) {
      x = b[q] as number;
      lo |= (x & 0x7f) << shift;
      if (x < 0x80) {
        this.num[0] = lo;
        return q + 1;
      }
    }
    lim = end - p < 8 ? end : p + 8;
    for (let shift = 0; q < lim; q++, shift += 7) {
      x = b[q] as number;
      hi |= (x & 0x7f) << shift;
      if (x < 0x80) {
        const v = hi * 268435456 + lo;
        this.num[0] = v > MAX_SAFE ? Number.NaN : v;
        return q + 1;
      }
    }
    return this.readInt64Slow(b, p, end);
  }

  /** Full int64 decode (9- and 10-byte varints, negative values, errors); same contract as readInt64. */
  private readInt64Slow(b: Uint8Array, p: number, end: number): number {
    let lo = 0;
    let hi = 0;
    let x = 0;
    let i = 0;
    for (; i < 4; i++) {
      if (p >= end) {
        return E_TRUNCATED;
      }
      x = b[p++] as number;
      lo |= (x & 0x7f) << (7 * i);
      if (x < 0x80) {
        this.num[0] = lo;
        return p;
      }
    }
    if (p >= end) {
      return E_TRUNCATED;
    }
    x = b[p++] as number;
    lo |= (x & 0x0f) << 28;
    hi = (x & 0x70) >> 4;
    if (x >= 0x80) {
      for (i = 0; ; i++) {
        if (i === 5) {
          return E_VARINT_TOO_LONG;
        }
        if (p >= end) {
          return E_TRUNCATED;
        }
        x = b[p++] as number;
        hi |= (x & 0x7f) << (3 + 7 * i);
        if (x < 0x80) {
          break;
        }
      }
    }
    lo >>>= 0;
    if (hi < 0) {
      // Negative: magnitude = 2^64 - (hi:lo).
      let nhi = ~hi >>> 0;
      const nlo = (~lo + 1) >>> 0;
      if (nlo === 0) {
        nhi = (nhi + 1) >>> 0;
      }
      const mag = nhi * TWO_32 + nlo;
      this.num[0] = mag > MAX_SAFE ? Number.NaN : -mag;
    } else {
      const v = hi * TWO_32 + lo;
      this.num[0] = v > MAX_SAFE ? Number.NaN : v;
    }
    return p;
  }

  /** Skips a field's value of wire type `wt` at p; returns the new position or a negative error code. */
  skipField(b: Uint8Array, p: number, end: number, wt: number): number {
    switch (wt) {
      case WT_VARINT:
        this.readVarint(b, p, end);
        return this.pos; // new position, or the error code
      case WT_I64:
        return end - p >= 8 ? p + 8 : E_TRUNCATED;
      case WT_LEN: {
        const len = this.readVarint(b, p, end);
        if (len < 0) {
          return this.pos;
        }
        p = this.pos;
        return len <= end - p ? p + len : E_TRUNCATED;
      }
      case WT_I32:
        return end - p >= 4 ? p + 4 : E_TRUNCATED;
      case WT_SGROUP:
      case WT_EGROUP:
        return E_GROUP;
      default:
        return E_BAD_WIRE_TYPE;
    }
  }

  /**
   * True when b[p, end) is valid UTF-8. Fast path: OR the string's bytes together a word at a time
   * (bytes of the first and last word outside the string are masked off) and only run the full
   * validator when some byte is ≥ 0x80.
   */
  isUtf8(b: Uint8Array, p: number, end: number): boolean {
    if (p >= end) {
      return true;
    }
    const w32 = this.words;
    const off = this.wordsOff;
    const a = p + off;
    const k0 = a >>> 2;
    const k1 = (end + off - 1) >>> 2;
    let acc = 0;
    if (k1 < w32.length) {
      // Keep only the string's own bytes: in the first word those at or after
      // offset a & 3, in the last word those at or before offset (e - 1) & 3
      // (little-endian: lower address = lower bits). All int32 arithmetic.
      const head = -1 << ((a & 3) << 3);
      const tail = ~(-256 << (((end + off - 1) & 3) << 3));
      if (k1 === k0) {
        acc = (w32[k0] as number) & head & tail;
      } else {
        acc = (w32[k0] as number) & head;
        for (let k = k0 + 1; k < k1; k++) {
          acc |= w32[k] as number;
        }
        acc |= (w32[k1] as number) & tail;
      }
    } else {
      // Big-endian host, or the string ends in the buffer's partial last word.
      for (let i = p; i < end; i++) {
        acc |= b[i] as number;
      }
    }
    return (acc & 0x80808080) === 0 || utf8Units(b, p, end) >= 0;
  }
}

/**
 * UTF-16 code units of b[p, end) when it is valid UTF-8 (one per character, two for a 4-byte astral
 * character), else -1: the exact UTF-8 check (same acceptance as TextDecoder with fatal: true), counting
 * as it validates.
 */
export function utf8Units(b: Uint8Array, p: number, end: number): number {
  let n = 0;
  while (p < end) {
    const c = b[p] as number;
    if (c < 0x80) {
      p++;
      n++;
      continue;
    }
    if (c < 0xc2) {
      return -1;
    }
    if (c < 0xe0) {
      if (end - p < 2 || ((b[p + 1] as number) & 0xc0) !== 0x80) {
        return -1;
      }
      p += 2;
      n++;
      continue;
    }
    if (c < 0xf0) {
      if (end - p < 3) {
        return -1;
      }
      const c1 = b[p + 1] as number;
      if (((b[p + 2] as number) & 0xc0) !== 0x80) {
        return -1;
      }
      if (c === 0xe0 ? c1 < 0xa0 || c1 > 0xbf : c === 0xed ? c1 < 0x80 || c1 > 0x9f : (c1 & 0xc0) !== 0x80) {
        return -1; // overlong, surrogate, or not a continuation
      }
      p += 3;
      n++;
      continue;
    }
    if (c < 0xf5) {
      if (end - p < 4) {
        return -1;
      }
      const c1 = b[p + 1] as number;
      if (((b[p + 2] as number) & 0xc0) !== 0x80 || ((b[p + 3] as number) & 0xc0) !== 0x80) {
        return -1;
      }
      if (c === 0xf0 ? c1 < 0x90 || c1 > 0xbf : c === 0xf4 ? c1 < 0x80 || c1 > 0x8f : (c1 & 0xc0) !== 0x80) {
        return -1; // overlong, above U+10FFFF, or not a continuation
      }
      p += 4;
      n += 2;
      continue;
    }
    return -1;
  }
  return n;
}

/** Float32 bits at p (little-endian) as an int32: sign bit set ⇔ negative (or -0, or a negative NaN). */
export function f32Bits(b: Uint8Array, p: number): number {
  return (
    (b[p] as number) |
    ((b[p + 1] as number) << 8) |
    ((b[p + 2] as number) << 16) |
    ((b[p + 3] as number) << 24)
  );
}

/** Finite float64 given its little-endian bytes at p. */
export function f64Finite(b: Uint8Array, p: number): boolean {
  return ((b[p + 7] as number) & 0x7f) !== 0x7f || ((b[p + 6] as number) & 0xf0) !== 0xf0;
}
