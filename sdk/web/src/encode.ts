// A protobuf writer for exactly the messages of the wire contract (proto/telemetry/v1/telemetry.proto):
// no protobuf runtime, so the SDK stays small. Events are encoded once, when tracked; a batch is its
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

const utf8 = new TextEncoder();

/** A growable byte buffer with the few protobuf primitives the contract needs. */
class Writer {
  private buf = new Uint8Array(256);
  private view = new DataView(this.buf.buffer);
  len = 0;

  private room(n: number): void {
    if (this.len + n <= this.buf.length) {
      return;
    }
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** A non-negative integer up to 2^53 (timestamps in µs and memory in bytes fit). */
  varint(v: number): void {
    this.room(10);
    while (v >= 0x80) {
      this.buf[this.len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.len++] = v;
  }

  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  bytes(field: number, b: Uint8Array): void {
    this.tag(field, 2);
    this.varint(b.length);
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  /** proto3: an empty string is the default and is not written. */
  string(field: number, s: string | undefined): void {
    if (s) {
      this.bytes(field, utf8.encode(s));
    }
  }

  /** Always written (for explicit presence and map values); callers skip defaults themselves. */
  float(field: number, v: number): void {
    this.tag(field, 5);
    this.room(4);
    this.view.setFloat32(this.len, v, true);
    this.len += 4;
  }

  double(field: number, v: number): void {
    this.tag(field, 1);
    this.room(8);
    this.view.setFloat64(this.len, v, true);
    this.len += 8;
  }

  /** A number field whose zero means "not collected": written only above zero. */
  floatIfSet(field: number, v: number | undefined): void {
    if (v !== undefined && v > 0) {
      this.float(field, v);
    }
  }

  message(field: number, write: (w: Writer) => void): void {
    const inner = new Writer();
    write(inner);
    this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

/** A GameTelemetryEvent's bytes (without the batch's field tag around them). */
export function encodeEvent(e: WireEvent): Uint8Array {
  const w = new Writer();
  w.string(1, e.name);
  if (e.timestampUs > 0) {
    w.tag(2, 0);
    w.varint(e.timestampUs);
  }
  w.string(3, e.sessionId);
  w.string(4, e.playerId);
  const p = e.position;
  // The SDKs omit a position of (0, 0, 0): it reads as "not sent".
  if (p && (p.x !== 0 || p.y !== 0 || p.z !== 0)) {
    w.message(5, (v) => {
      for (const [n, c] of [
        [1, p.x],
        [2, p.y],
        [3, p.z],
      ] as const) {
        if (c !== 0) {
          v.float(n, c);
        }
      }
    });
  }
  w.string(6, e.mapId);
  w.floatIfSet(8, e.fps);
  w.floatIfSet(9, e.frameTimeMs);
  if (e.memoryUsedBytes !== undefined && e.memoryUsedBytes > 0) {
    w.tag(10, 0);
    w.varint(e.memoryUsedBytes);
  }
  w.floatIfSet(11, e.gpuTimeMs);
  for (const [k, v] of e.attributes ?? []) {
    w.message(12, (m) => {
      m.string(1, k);
      m.string(2, v);
    });
  }
  for (const [k, v] of e.metrics ?? []) {
    w.message(13, (m) => {
      m.string(1, k);
      if (v !== 0) {
        m.double(2, v);
      }
    });
  }
  if (e.source) {
    w.tag(14, 0);
    w.varint(e.source);
  }
  w.string(15, e.buildId);
  w.string(16, e.platform);
  w.string(17, e.engineVersion);
  if (e.camera) {
    w.float(18, e.camera.yaw);
    w.float(19, e.camera.pitch);
  }
  return w.finish();
}

/** A DeviceContext's bytes. */
export function encodeDevice(d: WireDevice): Uint8Array {
  const w = new Writer();
  w.string(1, d.resolution);
  w.string(2, d.buildConfig);
  w.string(3, d.gpu);
  w.string(4, d.storage);
  w.string(5, d.cpu);
  w.string(6, d.osVersion);
  w.string(7, d.deviceModel);
  if (d.memoryTotalMb) {
    w.tag(8, 0);
    w.varint(d.memoryTotalMb);
  }
  return w.finish();
}

/** A TelemetryBatch from encoded events and the batch's device context (field 2). */
export function encodeBatch(events: readonly Uint8Array[], device?: Uint8Array): Uint8Array {
  const w = new Writer();
  for (const e of events) {
    w.bytes(1, e);
  }
  if (device?.length) {
    w.bytes(2, device);
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
