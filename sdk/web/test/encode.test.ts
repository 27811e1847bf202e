import { readFileSync } from "node:fs";
import { join } from "node:path";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { scanTelemetryBatch } from "../../../workers/ingest/wire-scan.js";
import { encodeBatch, encodeDevice, encodeEvent, framedSize, type WireEvent } from "../src/encode.js";

// The SDK's bytes read back by protobufjs from the contract's .proto: a decoder written by others.
const ROOT = join(import.meta.dirname, "..", "..", "..");
const root = protobuf.parse(readFileSync(join(ROOT, "proto/telemetry/v1/telemetry.proto"), "utf8"), {
  keepCase: true,
}).root;
const Batch = root.lookupType("telemetry.v1.TelemetryBatch");
const decode = (bytes: Uint8Array) =>
  Batch.toObject(Batch.decode(bytes), { longs: String, defaults: false }) as {
    events: Record<string, unknown>[];
    device?: Record<string, unknown>;
  };

const NOW_US = 1_780_000_000_123_456;
const f32 = Math.fround;

const FULL: WireEvent = {
  name: "enemy_killed",
  timestampUs: NOW_US,
  sessionId: "4b1c0d3e-8f7a-4d2b-9c1e-6a5f4e3d2c1b",
  playerId: "player-7",
  position: { x: -1234.5, y: 987.25, z: 3.1 },
  mapId: "harbor",
  fps: 59.7,
  frameTimeMs: 16.75,
  memoryUsedBytes: 64 * 1024 * 1024 * 1024,
  gpuTimeMs: 7.3,
  attributes: [
    ["weapon", "bow"],
    ["zone", "héllo 🌊"],
  ],
  metrics: [
    ["damage", 12.5],
    ["mem.heap", 52_428_800],
    ["zero", 0],
  ],
  source: 1,
  buildId: "1.4.2",
  platform: "Web",
  engineVersion: "Phaser 3.80",
  camera: { yaw: 359.5, pitch: -45 },
};

describe("encoder", () => {
  it("writes every field of an event at the contract's numbers", () => {
    const [e] = decode(encodeBatch([encodeEvent(FULL)])).events;
    expect(e).toEqual({
      event_name: "enemy_killed",
      timestamp_us: String(NOW_US),
      session_id: FULL.sessionId,
      player_id: "player-7",
      position: { x: f32(-1234.5), y: f32(987.25), z: f32(3.1) },
      map_id: "harbor",
      fps: f32(59.7),
      frame_time_ms: f32(16.75),
      memory_used_bytes: String(64 * 1024 * 1024 * 1024),
      gpu_time_ms: f32(7.3),
      attributes: { weapon: "bow", zone: "héllo 🌊" },
      metrics: { damage: 12.5, "mem.heap": 52_428_800, zero: 0 },
      source: 1,
      build_id: "1.4.2",
      platform: "Web",
      engine_version: "Phaser 3.80",
      camera_yaw: f32(359.5),
      camera_pitch: -45,
    });
  });

  it("leaves out what was not collected: zero perf fields, a (0, 0, 0) position, no camera", () => {
    const bytes = encodeBatch([
      encodeEvent({ name: "a", timestampUs: NOW_US, sessionId: "s", position: { x: 0, y: 0, z: 0 }, fps: 0 }),
      encodeEvent({ name: "b", timestampUs: NOW_US, sessionId: "s", position: { x: 0, y: 5, z: 0 } }),
    ]);
    const [a, b] = decode(bytes).events;
    expect(a).toEqual({ event_name: "a", timestamp_us: String(NOW_US), session_id: "s" });
    expect(b?.position).toEqual({ y: 5 });
    expect(b).not.toHaveProperty("camera_yaw");
  });

  it("sends a camera of (0, 0) as a pair present on the wire", () => {
    const message = Batch.decode(
      encodeBatch([encodeEvent({ name: "a", timestampUs: 1, sessionId: "s", camera: { yaw: 0, pitch: 0 } })]),
    ) as unknown as { events: { camera_yaw?: number; camera_pitch?: number }[] };
    expect(message.events[0]).toMatchObject({ camera_yaw: 0, camera_pitch: 0 });
    expect(Object.hasOwn(message.events[0] ?? {}, "camera_yaw")).toBe(true);
  });

  it("writes the batch's device context at field 2", () => {
    const device = encodeDevice({
      resolution: "2560x1440",
      buildConfig: "release",
      gpu: "ANGLE (NVIDIA, NVIDIA GeForce RTX 3070 Direct3D11 vs_5_0 ps_5_0, D3D11)",
      cpu: "16 threads",
      osVersion: "Windows 10",
      deviceModel: "mobile",
      storage: "ssd",
      memoryTotalMb: 8192,
    });
    const batch = decode(
      encodeBatch([encodeEvent({ name: "a", timestampUs: NOW_US, sessionId: "s" })], device),
    );
    expect(batch.device).toEqual({
      resolution: "2560x1440",
      build_config: "release",
      gpu: "ANGLE (NVIDIA, NVIDIA GeForce RTX 3070 Direct3D11 vs_5_0 ps_5_0, D3D11)",
      cpu: "16 threads",
      os_version: "Windows 10",
      device_model: "mobile",
      storage: "ssd",
      memory_total_mb: 8192,
    });
  });

  it("encodes varints up to 2^53 and across their 7-bit boundaries", () => {
    for (const ts of [1, 127, 128, 16_383, 16_384, 2 ** 31, 2 ** 32 + 5, NOW_US, Number.MAX_SAFE_INTEGER]) {
      const [e] = decode(encodeBatch([encodeEvent({ name: "a", timestampUs: ts, sessionId: "s" })])).events;
      expect(e?.timestamp_us).toBe(String(ts));
    }
  });

  it("counts the bytes an event adds to a batch", () => {
    for (const len of [0, 5, 127, 128, 300, 20_000]) {
      const event = new Uint8Array(len);
      expect(encodeBatch([event]).length).toBe(framedSize(len));
    }
  });

  it("passes the ingest scanner with the count the SDK sent", () => {
    const events = Array.from({ length: 50 }, (_, i) =>
      encodeEvent({ ...FULL, timestampUs: NOW_US - i * 1000, position: { x: i, y: -i, z: 0 } }),
    );
    const scan = scanTelemetryBatch(
      encodeBatch(events, encodeDevice({ gpu: "g", resolution: "1x1" })),
      NOW_US,
    );
    expect(scan).toMatchObject({ ok: true, eventCount: 50, entryCount: 50 * 6, perfEventCount: 50 });
  });
});
