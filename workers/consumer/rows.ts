import { fromBinary } from "@bufbuild/protobuf";
import {
  type DeviceContext,
  TelemetryBatchSchema,
  type TelemetryEvent,
  type Vec3,
} from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { LIMITS } from "../ingest/wire-scan.js";
import { type EnvelopeHeader, gunzipCapped } from "../shared/envelope.js";

/** A row of telemetry.events as JSONEachRow (materialized columns are computed by ClickHouse). */
export type EventRow = {
  project_id: string;
  timestamp: string;
  event_name: string;
  session_id: string;
  player_id: string;
  build_id: string;
  map_id: string;
  platform: string;
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
  position_x: number | null;
  position_y: number | null;
  position_z: number | null;
  camera_position_x: number | null;
  camera_position_y: number | null;
  camera_position_z: number | null;
  camera_rotation_x: number | null;
  camera_rotation_y: number | null;
  camera_rotation_z: number | null;
  fps: number | null;
  frame_time_ms: number | null;
  memory_mb: number | null;
  gpu_time_ms: number | null;
  cpu_time_ms: number | null;
  properties: Record<string, string>;
  metrics: Record<string, number>;
  batch_id: string;
  event_index: number;
  received_at: string;
};

export async function rowsOfMessage(header: EnvelopeHeader, body: Uint8Array): Promise<EventRow[]> {
  const bytes = header.encoding === "gzip" ? await gunzipCapped(body, LIMITS.maxDecompressedBytes) : body;
  const batch = fromBinary(TelemetryBatchSchema, bytes);
  const receivedAt = clickhouseTime(BigInt(header.receivedAt) * 1000n);
  return batch.events.map((e, i) => ({
    project_id: header.projectId,
    timestamp: clickhouseTime(e.timestampUs),
    event_name: e.eventName,
    session_id: e.sessionId,
    player_id: e.playerId,
    build_id: e.buildId,
    map_id: e.mapId,
    ...device(batch.device, e.device),
    sdk_name: batch.sdkName,
    sdk_version: batch.sdkVersion,
    ...vec("position", e.position),
    ...vec("camera_position", e.cameraPosition),
    ...vec("camera_rotation", e.cameraRotation),
    ...perf(e),
    properties: e.properties,
    metrics: e.metrics,
    batch_id: header.batchKey,
    event_index: i,
    received_at: receivedAt,
  }));
}

const DEVICE_FIELDS = [
  ["platform", "platform"],
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

function vec<P extends string>(prefix: P, v: Vec3 | undefined) {
  return {
    [`${prefix}_x`]: v ? v.x : null,
    [`${prefix}_y`]: v ? v.y : null,
    [`${prefix}_z`]: v ? v.z : null,
  } as Record<`${P}_x` | `${P}_y` | `${P}_z`, number | null>;
}

function perf(e: TelemetryEvent) {
  const p = e.perf;
  return {
    fps: p?.fps ?? null,
    frame_time_ms: p?.frameTimeMs ?? null,
    memory_mb: p?.memoryMb ?? null,
    gpu_time_ms: p?.gpuTimeMs ?? null,
    cpu_time_ms: p?.cpuTimeMs ?? null,
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
