// SDK-shaped telemetry batches encoded independently of our code: from a .proto text of the SDKs'
// layout (crane-valley/framedash-proto, package framedash.v1, fields 1-21) by protobufjs, in Node.
// The package name differs from ours on purpose: it never appears on the wire. protobufjs compiles
// its codecs with `new Function`, which workerd refuses, so test/global-setup.ts encodes these in Node
// and hands the bytes to the workers tests (inject("sdkFixtures")). Runs in Node only.
import { gzipSync } from "node:zlib";
import protobuf from "protobufjs";

export const SDK_PROTO = `
syntax = "proto3";
package framedash.v1;
message Vector3 { float x = 1; float y = 2; float z = 3; }
enum TelemetrySource {
  TELEMETRY_SOURCE_UNSPECIFIED = 0;
  TELEMETRY_SOURCE_PLAYER = 1;
  TELEMETRY_SOURCE_AUTOMATED = 2;
}
message GameTelemetryEvent {
  string event_name = 1;
  int64 timestamp_us = 2;
  string session_id = 3;
  string player_id = 4;
  Vector3 position = 5;
  string map_id = 6;
  reserved 7;
  float fps = 8;
  float frame_time_ms = 9;
  int64 memory_used_bytes = 10;
  float gpu_time_ms = 11;
  map<string, string> attributes = 12;
  map<string, double> metrics = 13;
  TelemetrySource source = 14;
  string build_id = 15;
  string platform = 16;
  string engine_version = 17;
  optional float camera_yaw = 18;
  optional float camera_pitch = 19;
  float game_thread_ms = 20;
  float render_thread_ms = 21;
}
message TelemetryBatch { repeated GameTelemetryEvent events = 1; }
`;

/**
 * One event as the SDK fills it, in the wire's own (snake_case) names. A field left out is not sent
 * (an SDK's serializer omits proto3 zeros and an absent position or camera). 64-bit integers are
 * decimal strings so the fixture survives JSON on its way into workerd.
 */
export type SdkEvent = {
  event_name: string;
  timestamp_us: string;
  session_id: string;
  player_id?: string;
  position?: { x: number; y: number; z: number };
  map_id?: string;
  fps?: number;
  frame_time_ms?: number;
  memory_used_bytes?: string;
  gpu_time_ms?: number;
  attributes?: Record<string, string>;
  metrics?: Record<string, number>;
  source?: 0 | 1 | 2;
  build_id?: string;
  platform?: string;
  engine_version?: string;
  camera_yaw?: number;
  camera_pitch?: number;
  game_thread_ms?: number;
  render_thread_ms?: number;
};

export type SdkFixtures = {
  events: SdkEvent[];
  /** base64 of the encoded TelemetryBatch, and of the same bytes gzip'd at levels 1 and 9. */
  raw: string;
  gzip1: string;
  gzip9: string;
};

const GiB = 1024 ** 3;
const PLAYER = 1;
const AUTOMATED = 2;

/**
 * Every kind of event the SDKs emit, at their bounds. Floats are exact float32 values so the columns
 * read back are the very numbers sent. `nowUs`: microseconds since the epoch, now.
 */
export function sdkEvents(nowUs: number): SdkEvent[] {
  const at = (secondsAgo: number) => String(nowUs - secondsAgo * 1_000_000 + 17);
  const session = "6f1c2a9e-4b7d-4e0a-9a51-3c8d2b7e1f40";
  const unity = { platform: "WindowsPlayer", engine_version: "6000.0.23f1", build_id: "1.4.2+ci.311" };
  const fifty = (prefix: string) =>
    Array.from({ length: 50 }, (_, i) => `${prefix}.${String(i).padStart(2, "0")}`);
  return [
    {
      ...unity,
      event_name: "session_start",
      timestamp_us: at(300),
      session_id: session,
      source: AUTOMATED,
      fps: 58.5,
      frame_time_ms: 17.125,
      memory_used_bytes: String(1.5 * GiB),
    },
    {
      // The heartbeat: every perf field, memory and I/O metrics, a camera facing north at level
      // (0, 0 is a real orientation, not "absent"), no map and no position.
      ...unity,
      event_name: "perf_heartbeat",
      timestamp_us: at(290),
      session_id: session,
      player_id: "player-7",
      source: AUTOMATED,
      fps: 59.75,
      frame_time_ms: 16.75,
      memory_used_bytes: String(3 * GiB + 123_456_789),
      gpu_time_ms: 9.75,
      game_thread_ms: 6.5,
      render_thread_ms: 4.25,
      camera_yaw: 0,
      camera_pitch: 0,
      metrics: {
        "mem.vram": 2 * GiB,
        "mem.heap": 536_870_912,
        "io.read_bytes": 1_048_576,
        "io.read_time_ms": 12.5,
        "io.read_ops": 42,
      },
    },
    {
      // map_load: map_id left empty, the map's name in an attribute, its load time a metric.
      ...unity,
      event_name: "map_load",
      timestamp_us: at(280),
      session_id: session,
      player_id: "player-7",
      source: PLAYER,
      fps: 30,
      attributes: { map_name: "Frozen Harbor" },
      metrics: { load_time_ms: 2345.5 },
    },
    {
      // A player event on a map, with position and camera, as Track() sends it.
      ...unity,
      event_name: "enemy_killed",
      timestamp_us: at(270),
      session_id: session,
      player_id: "player-7",
      source: PLAYER,
      map_id: "maps/frozen_harbor",
      position: { x: 1234.5, y: -87.25, z: 12 },
      camera_yaw: 359.5,
      camera_pitch: -89.5,
      fps: 61,
      frame_time_ms: 16.375,
      memory_used_bytes: String(2 * GiB),
      gpu_time_ms: 8.5,
      attributes: { weapon: "rifle", "ci.run": "311" },
      metrics: { damage: 42, "mem.vram": 2 * GiB },
    },
    {
      // Every string at its bound in UTF-16 code units (CJK: one unit, three UTF-8 bytes; the game
      // pad: two units, four bytes), every number at its bound.
      event_name: "戦".repeat(128),
      timestamp_us: at(260),
      session_id: "🎮".repeat(64),
      player_id: "選".repeat(128),
      map_id: "地".repeat(128),
      build_id: "版".repeat(128),
      platform: "平".repeat(64),
      engine_version: "引".repeat(64),
      source: PLAYER,
      position: { x: -1e9, y: 1e9, z: 0 },
      camera_yaw: 359.75,
      camera_pitch: 90,
      fps: 1000,
      frame_time_ms: 10_000,
      memory_used_bytes: String(64 * GiB),
      gpu_time_ms: 10_000,
      game_thread_ms: 10_000,
      render_thread_ms: 10_000,
      attributes: { ["鍵".repeat(64)]: "値".repeat(512) },
      metrics: { ["計".repeat(64)]: -1.5e300 },
    },
    {
      // The most attributes and metrics an event may carry.
      ...unity,
      event_name: "inventory_snapshot",
      timestamp_us: at(250),
      session_id: session,
      player_id: "player-7",
      source: PLAYER,
      map_id: "maps/frozen_harbor",
      position: { x: 0.5, y: 0.25, z: -3 },
      attributes: Object.fromEntries(fifty("slot").map((k, i) => [k, `item-${i}`])),
      metrics: Object.fromEntries(fifty("count").map((k, i) => [k, i * 0.5])),
    },
    {
      // No position, nothing collected (every perf field the SDKs' zero), no source, no camera, an
      // anonymous player: the row keeps NULLs and the session is the player.
      event_name: "ui_click",
      timestamp_us: at(240),
      session_id: session,
      platform: "LinuxPlayer",
      attributes: { button: "settings" },
    },
  ];
}

export function encodeSdkBatch(events: SdkEvent[]): Uint8Array {
  const root = protobuf.parse(SDK_PROTO, { keepCase: true }).root;
  const Batch = root.lookupType("framedash.v1.TelemetryBatch");
  const message = Batch.fromObject({ events });
  const problem = Batch.verify(message);
  if (problem) {
    throw new Error(`fixture does not fit the SDK layout: ${problem}`);
  }
  return Batch.encode(message).finish();
}

/** The fixtures the workers tests read back: events, and their batch raw and gzip'd at two levels. */
export function sdkFixtures(nowUs = Date.now() * 1000): SdkFixtures {
  const events = sdkEvents(nowUs);
  const raw = encodeSdkBatch(events);
  const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
  return {
    events,
    raw: b64(raw),
    gzip1: b64(gzipSync(raw, { level: 1 })),
    gzip9: b64(gzipSync(raw, { level: 9 })),
  };
}
