// Sends one realistic gzip'd TelemetryBatch to the ingest endpoint, shaped as the engine SDKs send it:
// session_start, then gameplay events with position and camera, perf_heartbeat with memory and I/O
// metrics, a map_load; no batch-level device context (the SDKs send none), X-SDK-Version as UE5 does.
// usage: npm run sample -- --key gta_... [--url http://127.0.0.1:8787/api] [--events 500]
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import {
  type GameTelemetryEventSchema,
  TelemetryBatchSchema,
  TelemetrySource,
} from "../proto/gen/telemetry/v1/telemetry_pb.js";

const { values } = parseArgs({
  options: {
    key: { type: "string" },
    url: { type: "string", default: "http://127.0.0.1:8787/api" },
    events: { type: "string", default: "500" },
  },
});
if (!values.key) {
  console.error("usage: npm run sample -- --key <ingest key> [--url base_url] [--events N]");
  process.exit(2);
}

type EventInit = MessageInitShape<typeof GameTelemetryEventSchema>;
const MiB = 1_048_576n;
const n = Math.max(1, Number(values.events));
const now = BigInt(Date.now()) * 1000n;
const sessionId = crypto.randomUUID();
const common = {
  sessionId,
  playerId: "player-42",
  buildId: "2026.11.21+ci.311",
  platform: "Windows",
  engineVersion: "5.4.4-0+++UE5+Release-5.4",
};

function sampleEvent(i: number): EventInit {
  const timestampUs = now - BigInt(n - i) * 100_000n;
  const fps = 50 + (i % 20);
  const perf = {
    fps,
    frameTimeMs: 1000 / fps,
    memoryUsedBytes: (3100n + BigInt(i % 200)) * MiB,
    gpuTimeMs: 9.5,
    gameThreadMs: 6 + (i % 5) / 4,
    renderThreadMs: 4 + (i % 3) / 4,
  };
  if (i === 0) {
    return { ...common, ...perf, timestampUs, eventName: "session_start", source: TelemetrySource.AUTOMATED };
  }
  if (i === 1) {
    return {
      ...common,
      ...perf,
      timestampUs,
      eventName: "map_load",
      source: TelemetrySource.PLAYER,
      attributes: { map_name: "Harbor" },
      metrics: { load_time_ms: 2345.5 },
    };
  }
  if (i % 60 === 0) {
    return {
      ...common,
      ...perf,
      timestampUs,
      eventName: "perf_heartbeat",
      source: TelemetrySource.AUTOMATED,
      metrics: {
        "mem.vram": 2_147_483_648,
        "mem.heap": 536_870_912 + i * 4096,
        "io.read_bytes": 1_048_576 * (i % 7),
        "io.read_time_ms": 3.5 * (i % 7),
        "io.read_ops": 12 * (i % 7),
      },
    };
  }
  return {
    ...common,
    ...perf,
    timestampUs,
    eventName: i % 50 === 0 ? "checkpoint" : i % 7 === 0 ? "enemy_killed" : "player_move",
    source: TelemetrySource.PLAYER,
    mapId: "harbor",
    position: { x: (i * 7) % 500, y: (i * 13) % 500, z: 10 },
    cameraYaw: (i * 11) % 360,
    cameraPitch: ((i * 3) % 120) - 60,
    attributes: i % 7 === 0 ? { weapon: "rifle" } : {},
  };
}

const batch = create(TelemetryBatchSchema, { events: Array.from({ length: n }, (_, i) => sampleEvent(i)) });
const body = gzipSync(toBinary(TelemetryBatchSchema, batch));
const res = await fetch(`${values.url}/v1/events`, {
  method: "POST",
  body,
  headers: {
    "Content-Type": "application/x-protobuf",
    "Content-Encoding": "gzip",
    "Content-Length": String(body.length),
    "X-SDK-Version": "ue5/0.1.13",
    "X-API-Key": values.key,
  },
});
console.log(res.status, await res.text());
