// The consumer's rows as a full protobuf decode (protobuf-es) builds them: the independent reference
// the wire row builder (workers/ingest/consumer/wire-rows.ts) is held to in test/workers/consumer-rows.test.ts.
// It was the consumer's own row builder before rows were built from the wire bytes.
import { fromBinary } from "@bufbuild/protobuf";
import {
  type DeviceContext,
  type GameTelemetryEvent,
  TelemetryBatchSchema,
  TelemetrySource,
} from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { parseSdkVersion } from "../../workers/ingest/consumer/rows.js";
import { type EnvelopeHeader, gunzipCapped } from "../../workers/shared/envelope.js";
import { LIMITS } from "../../workers/shared/telemetry/limits.js";

/** telemetry.events.source: the Enum8 names, by the wire's TelemetrySource number. */
export const SOURCE_NAMES = {
  [TelemetrySource.UNSPECIFIED]: "unspecified",
  [TelemetrySource.PLAYER]: "player",
  [TelemetrySource.AUTOMATED]: "automated",
} as const;

export type SourceName = (typeof SOURCE_NAMES)[TelemetrySource];

/**
 * A row of telemetry.events as JSONEachRow: one column per scalar of the wire contract
 * (schema/clickhouse/migrations/0003_sdk_wire_layout.sql). ALIAS and MATERIALIZED columns (memory_mb,
 * player, has_perf) are computed by ClickHouse.
 */
export type EventRow = {
  project_id: string;
  event_name: string;
  timestamp: string;
  session_id: string;
  player_id: string;
  position_x: number | null;
  position_y: number | null;
  position_z: number | null;
  map_id: string;
  fps: number | null;
  frame_time_ms: number | null;
  memory_used_bytes: number | null;
  gpu_time_ms: number | null;
  game_thread_ms: number | null;
  render_thread_ms: number | null;
  attributes: Record<string, string>;
  metrics: Record<string, number>;
  source: SourceName;
  build_id: string;
  platform: string;
  engine_version: string;
  camera_yaw: number | null;
  camera_pitch: number | null;
  resolution: string;
  build_config: string;
  gpu: string;
  storage: string;
  cpu: string;
  os_version: string;
  device_model: string;
  memory_total_mb: number;
  sdk_name: string;
  sdk_version: string;
  batch_id: string;
  event_index: number;
  received_at: string;
};

export async function rowsOfMessage(header: EnvelopeHeader, body: Uint8Array): Promise<EventRow[]> {
  const bytes = header.encoding === "gzip" ? await gunzipCapped(body, LIMITS.maxDecompressedBytes) : body;
  const batch = fromBinary(TelemetryBatchSchema, bytes);
  const receivedAt = clickhouseTime(BigInt(header.receivedAt) * 1000n);
  const sdk = parseSdkVersion(typeof header.sdkVersion === "string" ? header.sdkVersion : "");
  return batch.events.map((e, i) => ({
    project_id: header.projectId,
    event_name: e.eventName,
    timestamp: clickhouseTime(e.timestampUs),
    session_id: e.sessionId,
    player_id: e.playerId,
    position_x: e.position ? e.position.x : null,
    position_y: e.position ? e.position.y : null,
    position_z: e.position ? e.position.z : null,
    map_id: e.mapId,
    ...perf(e),
    attributes: e.attributes,
    metrics: withRefreshRate(e.metrics, e.device?.refreshRateHz || batch.device?.refreshRateHz || 0),
    source: SOURCE_NAMES[e.source] ?? "unspecified",
    build_id: e.buildId,
    platform: e.platform,
    engine_version: e.engineVersion,
    // A pair on the wire (ingest refuses a half pair); a lone value is never stored half.
    camera_yaw: e.cameraYaw !== undefined && e.cameraPitch !== undefined ? e.cameraYaw : null,
    camera_pitch: e.cameraYaw !== undefined && e.cameraPitch !== undefined ? e.cameraPitch : null,
    ...device(batch.device, e.device),
    sdk_name: sdk.name,
    sdk_version: sdk.version,
    batch_id: header.batchKey,
    event_index: i,
    received_at: receivedAt,
  }));
}

const DEVICE_FIELDS = [
  ["resolution", "resolution"],
  ["build_config", "buildConfig"],
  ["gpu", "gpu"],
  ["storage", "storage"],
  ["cpu", "cpu"],
  ["os_version", "osVersion"],
  ["device_model", "deviceModel"],
] as const;

type DeviceColumns = Pick<EventRow, (typeof DEVICE_FIELDS)[number][0] | "memory_total_mb">;

/** The batch's device context, field by field overridden by the event's own non-empty values. */
function device(base: DeviceContext | undefined, own: DeviceContext | undefined): DeviceColumns {
  const out = { memory_total_mb: own?.memoryTotalMb || base?.memoryTotalMb || 0 } as DeviceColumns;
  for (const [column, field] of DEVICE_FIELDS) {
    out[column] = own?.[field] || base?.[field] || "";
  }
  return out;
}

/** The device's refresh rate as metrics["display.hz"], where the event sent no such metric and the rate is known. */
function withRefreshRate(metrics: Record<string, number>, hz: number): Record<string, number> {
  return hz > 0 && !("display.hz" in metrics) ? { ...metrics, "display.hz": hz } : metrics;
}

/** The SDKs' implicit zero means "not collected": stored as NULL so aggregates see real samples only. */
function perf(e: GameTelemetryEvent) {
  const collected = (v: number) => (v > 0 ? v : null);
  return {
    fps: collected(e.fps),
    frame_time_ms: collected(e.frameTimeMs),
    // Ingest bounds memory to 64 GiB, well inside a double's exact integers.
    memory_used_bytes: e.memoryUsedBytes > 0n ? Number(e.memoryUsedBytes) : null,
    gpu_time_ms: collected(e.gpuTimeMs),
    game_thread_ms: collected(e.gameThreadMs),
    render_thread_ms: collected(e.renderThreadMs),
  };
}

/** Microseconds since the epoch as ClickHouse's DateTime64(6) text, UTC. */
export function clickhouseTime(us: bigint): string {
  const seconds = us / 1_000_000n;
  let frac = us % 1_000_000n;
  let whole = seconds;
  if (frac < 0n) {
    frac += 1_000_000n;
    whole -= 1n;
  }
  const iso = new Date(Number(whole) * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${frac.toString().padStart(6, "0")}`;
}
