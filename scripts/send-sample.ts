// Sends one realistic gzip'd TelemetryBatch to the ingest endpoint, as an SDK would.
// usage: npm run sample -- --key gta_... [--url http://127.0.0.1:8787/api] [--events 500]
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { TelemetryBatchSchema } from "../proto/gen/telemetry/v1/telemetry_pb.js";

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

const n = Number(values.events);
const now = BigInt(Date.now()) * 1000n;
const batch = create(TelemetryBatchSchema, {
  batchId: crypto.randomUUID(),
  sdkName: "sample",
  sdkVersion: "1.0.0",
  device: { platform: "windows", resolution: "2560x1440", buildConfig: "release", gpu: "RTX 4070" },
  events: Array.from({ length: n }, (_, i) => ({
    timestampUs: now - BigInt(n - i) * 100_000n,
    eventName: i % 50 === 0 ? "checkpoint" : "perf_sample",
    sessionId: `session-${i % 3}`,
    playerId: `player-${i % 3}`,
    buildId: "build-2026.11.21",
    mapId: "harbor",
    position: { x: (i * 7) % 500, y: (i * 13) % 500, z: 10 },
    perf: { fps: 50 + (i % 20), frameTimeMs: 1000 / (50 + (i % 20)), memoryMb: 3100, gpuTimeMs: 9.5 },
  })),
});
const body = gzipSync(toBinary(TelemetryBatchSchema, batch));
const res = await fetch(`${values.url}/v1/events`, {
  method: "POST",
  body,
  headers: {
    "Content-Type": "application/x-protobuf",
    "Content-Encoding": "gzip",
    "Content-Length": String(body.length),
    "X-SDK-Version": "sample-1.0.0",
    "X-API-Key": values.key,
  },
});
console.log(res.status, await res.text());
