import { CH_EVENTS } from "../../shared/clickhouse.js";

/**
 * The one table users see, `events`: one column per scalar of the wire contract under its own name
 * (maps as ClickHouse maps, the performance fields NULL where the SDK sent its "not collected" zero),
 * plus memory_mb, the megabytes that thresholds speak, and the device and SDK columns. Internal
 * bookkeeping (batch key, event index, receive time, materialized helpers) is left out. The query
 * endpoint and exports both read through it, so a download has exactly the columns a query sees.
 */
export const EVENTS_COLUMNS = [
  "project_id",
  "event_name",
  "timestamp",
  "session_id",
  "player_id",
  "position_x",
  "position_y",
  "position_z",
  "map_id",
  "fps",
  "frame_time_ms",
  "memory_used_bytes",
  "memory_mb",
  "gpu_time_ms",
  "game_thread_ms",
  "render_thread_ms",
  "attributes",
  "metrics",
  "source",
  "build_id",
  "platform",
  "engine_version",
  "camera_yaw",
  "camera_pitch",
  "resolution",
  "build_config",
  "gpu",
  "storage",
  "cpu",
  "os_version",
  "device_model",
  "memory_total_mb",
  "sdk_name",
  "sdk_version",
] as const;

/**
 * SELECT of one project's rows of telemetry.events with the wire-contract columns. The project is a
 * bound parameter named by the caller; the filter sits at the read itself, so the primary key
 * (project_id first) prunes every other tenant's granules.
 */
export function projectEventsSelect(projectParam: string, extraWhere = ""): string {
  const where = `project_id = {${projectParam}:UUID}${extraWhere ? ` AND ${extraWhere}` : ""}`;
  return `SELECT ${EVENTS_COLUMNS.join(", ")} FROM ${CH_EVENTS} WHERE ${where}`;
}
