/**
 * A tiny protobuf writer for wire-scan tests, independent of our generated code: it writes
 * TelemetryBatch bytes the way the engine SDKs' serializers do (Unity/Godot TelemetrySerializer on
 * ProtobufWriter; UE5 through nanopb): fields in number order, proto3 defaults skipped (empty
 * strings, 0, 0.0), a position of (0, 0, 0) left out and zero coordinates skipped inside it, map
 * entries as key-then-value sub-messages with an empty value or a 0.0 metric left out, and
 * camera_yaw/camera_pitch written whenever set (even 0: they have explicit presence). Unlike the
 * SDKs it does not enforce the pairing, so tests can send half pairs. Field numbers are the SDK
 * layout's, written out here on purpose rather than taken from proto/gen.
 *
 * No Node APIs: it runs inside workerd too.
 */

export type SdkDevice = {
  resolution?: string;
  buildConfig?: string;
  gpu?: string;
  storage?: string;
  cpu?: string;
  osVersion?: string;
  deviceModel?: string;
  memoryTotalMb?: number;
  refreshRateHz?: number;
};

export type SdkEvent = {
  eventName?: string;
  timestampUs?: number | bigint;
  sessionId?: string;
  playerId?: string;
  position?: { x?: number; y?: number; z?: number };
  mapId?: string;
  fps?: number;
  frameTimeMs?: number;
  memoryUsedBytes?: number | bigint;
  gpuTimeMs?: number;
  /** Entries in wire order; duplicates are written as given. */
  attributes?: Record<string, string> | [string, string][];
  metrics?: Record<string, number> | [string, number][];
  source?: number;
  buildId?: string;
  platform?: string;
  engineVersion?: string;
  cameraYaw?: number;
  cameraPitch?: number;
  gameThreadMs?: number;
  renderThreadMs?: number;
  /** Ours (field 22); the SDKs never send it. */
  device?: SdkDevice;
};

export type SdkBatch = { events: SdkEvent[]; device?: SdkDevice };

export const WT = { VARINT: 0, I64: 1, LEN: 2, SGROUP: 3, EGROUP: 4, I32: 5 } as const;

const enc = new TextEncoder();
export const utf8 = (s: string): Uint8Array => enc.encode(s);

export function cat(...parts: (Uint8Array | number[])[]): Uint8Array {
  const n = parts.reduce((s, p) => s + p.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Unsigned LEB128 of the uint64 two's complement of v (as the SDKs write int64: `(ulong)value`). */
export function varint(v: number | bigint): number[] {
  let x = BigInt.asUintN(64, BigInt(v));
  const out: number[] = [];
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
  return out;
}

export const tag = (no: number, wt: number): number[] => varint(BigInt(no) * 8n + BigInt(wt));

/** Field writers that always write (no default skipping): for hand-built and malformed bytes. */
export const fLen = (no: number, payload: Uint8Array | number[]): Uint8Array =>
  cat(tag(no, WT.LEN), varint(payload.length), payload);
export const fStr = (no: number, s: string): Uint8Array => fLen(no, utf8(s));
export const fVarint = (no: number, v: number | bigint): Uint8Array => cat(tag(no, WT.VARINT), varint(v));
export function f32Bytes(f: number): number[] {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setFloat32(0, f, true);
  return Array.from(b);
}
export const fFloat = (no: number, f: number): Uint8Array => cat(tag(no, WT.I32), f32Bytes(f));
/** A float32 field from its raw bits (for NaN payloads and exact neighbours of a bound). */
export const fFloatBits = (no: number, bits: number): Uint8Array => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, bits >>> 0, true);
  return cat(tag(no, WT.I32), b);
};
export function fDouble(no: number, d: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, d, true);
  return cat(tag(no, WT.I64), b);
}

/** The float32 just above (dir 1) or below (dir -1) f, which must be a finite float32. */
export function f32Step(f: number, dir: 1 | -1): number {
  const dv = new DataView(new ArrayBuffer(4));
  dv.setFloat32(0, f);
  if (f === 0) {
    dv.setUint32(0, dir > 0 ? 1 : 0x80000001);
  } else {
    dv.setUint32(0, dv.getUint32(0) + (f > 0 === dir > 0 ? 1 : -1));
  }
  return dv.getFloat32(0);
}

// SDK-style (default-skipping) writers.
const sStr = (no: number, s: string | undefined): Uint8Array => (s ? fStr(no, s) : new Uint8Array(0));
const sFloat = (no: number, f: number | undefined): Uint8Array =>
  f === undefined || f === 0 ? new Uint8Array(0) : fFloat(no, f);
const sInt = (no: number, v: number | bigint | undefined): Uint8Array =>
  v === undefined || BigInt(v) === 0n ? new Uint8Array(0) : fVarint(no, v);
const entries = <V>(m: Record<string, V> | [string, V][] | undefined): [string, V][] =>
  m === undefined ? [] : Array.isArray(m) ? m : Object.entries(m);

export function encodeDevice(d: SdkDevice): Uint8Array {
  return cat(
    sStr(1, d.resolution),
    sStr(2, d.buildConfig),
    sStr(3, d.gpu),
    sStr(4, d.storage),
    sStr(5, d.cpu),
    sStr(6, d.osVersion),
    sStr(7, d.deviceModel),
    sInt(8, d.memoryTotalMb),
    sInt(9, d.refreshRateHz),
  );
}

/** A non-empty sub-message as field `no`; an empty one is left out (ProtobufWriter.WriteSubMessage). */
const sSub = (no: number, payload: Uint8Array): Uint8Array =>
  payload.length === 0 ? payload : fLen(no, payload);

export function encodeEvent(e: SdkEvent): Uint8Array {
  const parts: Uint8Array[] = [sStr(1, e.eventName), sInt(2, e.timestampUs), sStr(3, e.sessionId)];
  parts.push(sStr(4, e.playerId));
  const p = e.position;
  if (p && ((p.x ?? 0) !== 0 || (p.y ?? 0) !== 0 || (p.z ?? 0) !== 0)) {
    parts.push(fLen(5, cat(sFloat(1, p.x), sFloat(2, p.y), sFloat(3, p.z))));
  }
  parts.push(sStr(6, e.mapId), sFloat(8, e.fps), sFloat(9, e.frameTimeMs));
  parts.push(sInt(10, e.memoryUsedBytes), sFloat(11, e.gpuTimeMs));
  for (const [k, v] of entries(e.attributes)) {
    parts.push(sSub(12, cat(sStr(1, k), sStr(2, v))));
  }
  for (const [k, v] of entries(e.metrics)) {
    parts.push(sSub(13, cat(sStr(1, k), v === 0 ? new Uint8Array(0) : fDouble(2, v))));
  }
  parts.push(sInt(14, e.source), sStr(15, e.buildId), sStr(16, e.platform), sStr(17, e.engineVersion));
  if (e.cameraYaw !== undefined) {
    parts.push(fFloat(18, e.cameraYaw));
  }
  if (e.cameraPitch !== undefined) {
    parts.push(fFloat(19, e.cameraPitch));
  }
  parts.push(sFloat(20, e.gameThreadMs), sFloat(21, e.renderThreadMs));
  if (e.device) {
    parts.push(sSub(22, encodeDevice(e.device)));
  }
  return cat(...parts);
}

/** TelemetryBatch { repeated GameTelemetryEvent events = 1; DeviceContext device = 2; } */
export function encodeBatch(b: SdkBatch): Uint8Array {
  return cat(
    ...b.events.map((e) => fLen(1, encodeEvent(e))),
    b.device ? sSub(2, encodeDevice(b.device)) : new Uint8Array(0),
  );
}

/** A batch whose events are the given already-encoded event messages. */
export const batchOfEvents = (...events: Uint8Array[]): Uint8Array => cat(...events.map((e) => fLen(1, e)));
