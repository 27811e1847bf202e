import type { MessageInitShape } from "@bufbuild/protobuf";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  type GameTelemetryEvent,
  type GameTelemetryEventSchema,
  type TelemetryBatch,
  TelemetryBatchSchema,
  TelemetrySource,
} from "../../proto/gen/telemetry/v1/telemetry_pb.js";

/** An event's fields as plain data (the init shape, not a decoded message). */
export type EventInit = Exclude<MessageInitShape<typeof GameTelemetryEventSchema>, GameTelemetryEvent>;
type BatchInit = MessageInitShape<typeof TelemetryBatchSchema>;

export const nowUs = () => BigInt(Date.now()) * 1000n;
export const MiB = 1_048_576n;

export type Perf = Pick<
  EventInit,
  "fps" | "frameTimeMs" | "memoryUsedBytes" | "gpuTimeMs" | "gameThreadMs" | "renderThreadMs"
>;

/** Exactly these performance fields; every other one is the SDKs' "not collected" zero. */
export function perf(p: Perf = {}): Perf {
  return {
    fps: 0,
    frameTimeMs: 0,
    memoryUsedBytes: 0n,
    gpuTimeMs: 0,
    gameThreadMs: 0,
    renderThreadMs: 0,
    ...p,
  };
}

/** A valid performance-bearing event `secondsAgo` in the past, as an SDK sends it; override any field. */
export function event(i: number, over: EventInit = {}, secondsAgo = 60): EventInit {
  return {
    timestampUs: nowUs() - BigInt(secondsAgo) * 1_000_000n - BigInt(i),
    eventName: i % 3 === 0 ? "match_start" : "perf_heartbeat",
    sessionId: `session-${i % 4}`,
    playerId: i % 5 === 0 ? "" : `player-${i % 7}`,
    buildId: "build-1",
    mapId: "dust",
    platform: "windows",
    engineVersion: "6000.0.23f1",
    source: TelemetrySource.PLAYER,
    position: { x: i * 1.5, y: -i, z: 2 },
    ...perf({ fps: 60 - (i % 10), frameTimeMs: 16.6, memoryUsedBytes: 2048n * MiB, gpuTimeMs: 8 }),
    attributes: { weapon: "rifle" },
    metrics: { kills: i },
    ...over,
  };
}

/** A batch as the SDKs send it (events only); `over` adds our batch-level device context. */
export function batch(events: EventInit[], over: BatchInit = {}): Uint8Array {
  return toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { events, ...over }));
}

export function batchOf(n: number, over: EventInit = {}): Uint8Array {
  return batch(Array.from({ length: n }, (_, i) => event(i, over)));
}

export async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export type { GameTelemetryEvent, TelemetryBatch };
