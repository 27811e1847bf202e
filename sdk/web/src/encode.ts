import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

// The messages of the wire contract (proto/telemetry/v1/telemetry.proto), written with protobuf-es's
// wire writer (@bufbuild/protobuf/wire: the writer alone, no runtime or generated code; bundled into
// dist, about 2.2 KB of the SDK's gzip'd size). Events are encoded once, when tracked; a batch is its
// events' bytes behind their field tags, which is also what the offline queue stores.

/** An event after clamping: every field within the contract's bounds. */
export type WireEvent = {
  name: string;
  timestampUs: number;
  sessionId: string;
  playerId?: string;
  position?: { x: number; y: number; z: number };
  mapId?: string;
  fps?: number;
  frameTimeMs?: number;
  memoryUsedBytes?: number;
  gpuTimeMs?: number;
  attributes?: [string, string][];
  metrics?: [string, number][];
  /** TelemetrySource: 1 player, 2 automated. */
  source?: number;
  buildId?: string;
  platform?: string;
  engineVersion?: string;
  camera?: { yaw: number; pitch: number };
};

export type WireDevice = {
  resolution?: string;
  buildConfig?: string;
  gpu?: string;
  storage?: string;
  cpu?: string;
  osVersion?: string;
  deviceModel?: string;
  memoryTotalMb?: number;
};

const { Varint, Bit64, LengthDelimited, Bit32 } = WireType;

/** proto3: an empty string is the default and is not written. */
function string(w: BinaryWriter, field: number, s: string | undefined): void {
  if (s) {
    w.tag(field, LengthDelimited).string(s);
  }
}

/** A number field whose zero means "not collected": written only above zero. */
function floatIfSet(w: BinaryWriter, field: number, v: number | undefined): void {
  if (v !== undefined && v > 0) {
    w.tag(field, Bit32).float(v);
  }
}

/** A non-negative integer up to 2^53 (timestamps in µs and memory in bytes fit), written when above zero. */
function uint64IfSet(w: BinaryWriter, field: number, v: number | undefined): void {
  if (v !== undefined && v > 0) {
    w.tag(field, Varint).uint64(v);
  }
}

/** A GameTelemetryEvent's bytes (without the batch's field tag around them). */
export function encodeEvent(e: WireEvent): Uint8Array {
  const w = new BinaryWriter();
  string(w, 1, e.name);
  uint64IfSet(w, 2, e.timestampUs);
  string(w, 3, e.sessionId);
  string(w, 4, e.playerId);
  const p = e.position;
  // The SDKs omit a position of (0, 0, 0): it reads as "not sent".
  if (p && (p.x !== 0 || p.y !== 0 || p.z !== 0)) {
    w.tag(5, LengthDelimited).fork();
    for (const [n, c] of [
      [1, p.x],
      [2, p.y],
      [3, p.z],
    ] as const) {
      if (c !== 0) {
        w.tag(n, Bit32).float(c);
      }
    }
    w.join();
  }
  string(w, 6, e.mapId);
  floatIfSet(w, 8, e.fps);
  floatIfSet(w, 9, e.frameTimeMs);
  uint64IfSet(w, 10, e.memoryUsedBytes);
  floatIfSet(w, 11, e.gpuTimeMs);
  for (const [k, v] of e.attributes ?? []) {
    w.tag(12, LengthDelimited).fork();
    string(w, 1, k);
    string(w, 2, v);
    w.join();
  }
  for (const [k, v] of e.metrics ?? []) {
    w.tag(13, LengthDelimited).fork();
    string(w, 1, k);
    if (v !== 0) {
      w.tag(2, Bit64).double(v);
    }
    w.join();
  }
  if (e.source) {
    w.tag(14, Varint).uint32(e.source);
  }
  string(w, 15, e.buildId);
  string(w, 16, e.platform);
  string(w, 17, e.engineVersion);
  if (e.camera) {
    w.tag(18, Bit32).float(e.camera.yaw);
    w.tag(19, Bit32).float(e.camera.pitch);
  }
  return w.finish();
}

/** A DeviceContext's bytes. */
export function encodeDevice(d: WireDevice): Uint8Array {
  const w = new BinaryWriter();
  string(w, 1, d.resolution);
  string(w, 2, d.buildConfig);
  string(w, 3, d.gpu);
  string(w, 4, d.storage);
  string(w, 5, d.cpu);
  string(w, 6, d.osVersion);
  string(w, 7, d.deviceModel);
  if (d.memoryTotalMb) {
    w.tag(8, Varint).uint32(d.memoryTotalMb);
  }
  return w.finish();
}

/** A TelemetryBatch from encoded events and the batch's device context (field 2). */
export function encodeBatch(events: readonly Uint8Array[], device?: Uint8Array): Uint8Array {
  const w = new BinaryWriter();
  for (const e of events) {
    w.tag(1, LengthDelimited).bytes(e);
  }
  if (device?.length) {
    w.tag(2, LengthDelimited).bytes(device);
  }
  return w.finish();
}

/** The bytes an encoded event adds to a batch: its tag, its length's varint and itself. */
export function framedSize(eventBytes: number): number {
  let n = 1;
  for (let v = eventBytes; v >= 0x80; v = Math.floor(v / 0x80)) {
    n++;
  }
  return 1 + n + eventBytes;
}
