import type { MessageInitShape } from "@bufbuild/protobuf";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  type TelemetryBatch,
  TelemetryBatchSchema,
  type TelemetryEvent,
  type TelemetryEventSchema,
} from "../../proto/gen/telemetry/v1/telemetry_pb.js";

type EventInit = MessageInitShape<typeof TelemetryEventSchema>;
type BatchInit = MessageInitShape<typeof TelemetryBatchSchema>;

export const nowUs = () => BigInt(Date.now()) * 1000n;

/** A valid performance-bearing event `secondsAgo` in the past; override any field. */
export function event(i: number, over: EventInit = {}, secondsAgo = 60): EventInit {
  return {
    timestampUs: nowUs() - BigInt(secondsAgo) * 1_000_000n - BigInt(i),
    eventName: i % 3 === 0 ? "match_start" : "frame_sample",
    sessionId: `session-${i % 4}`,
    playerId: i % 5 === 0 ? "" : `player-${i % 7}`,
    buildId: "build-1",
    mapId: "dust",
    position: { x: i * 1.5, y: -i, z: 2 },
    perf: { fps: 60 - (i % 10), frameTimeMs: 16.6, memoryMb: 2048, gpuTimeMs: 8 },
    properties: { weapon: "rifle" },
    metrics: { kills: i },
    ...over,
  } as EventInit;
}

export function batch(events: EventInit[], over: BatchInit = {}): Uint8Array {
  return toBinary(
    TelemetryBatchSchema,
    create(TelemetryBatchSchema, {
      batchId: crypto.randomUUID(),
      sdkName: "unity",
      sdkVersion: "1.4.2",
      device: { platform: "windows", resolution: "1920x1080", buildConfig: "release", gpu: "RTX 3060" },
      events,
      ...over,
    } as BatchInit),
  );
}

export function batchOf(n: number, over: EventInit = {}): Uint8Array {
  return batch(Array.from({ length: n }, (_, i) => event(i, over)));
}

export async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export type { TelemetryBatch, TelemetryEvent };
