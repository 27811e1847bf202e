import { CH_DB } from "../shared/clickhouse.js";

/**
 * The one table users see, `events`: the wire contract's names, one project's rows. Internal
 * bookkeeping (batch key, event index, receive time, materialized helpers) is left out. The query
 * endpoint and exports both read through it, so a download has exactly the columns a query sees.
 */
export const EVENTS_COLUMNS = [
  "project_id",
  "timestamp",
  "event_name",
  "session_id",
  "player_id",
  "build_id",
  "map_id",
  "platform",
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
  "position_x",
  "position_y",
  "position_z",
  "camera_position_x",
  "camera_position_y",
  "camera_position_z",
  "camera_rotation_x",
  "camera_rotation_y",
  "camera_rotation_z",
  "fps",
  "frame_time_ms",
  "memory_mb",
  "gpu_time_ms",
  "cpu_time_ms",
  "properties",
  "metrics",
] as const;

export const EVENTS_TABLE = `${CH_DB}.events`;

/**
 * SELECT of one project's rows of telemetry.events with the wire-contract columns. The project is a
 * bound parameter named by the caller; the filter sits at the read itself, so the primary key
 * (project_id first) prunes every other tenant's granules.
 */
export function projectEventsSelect(projectParam: string, extraWhere = ""): string {
  const where = `project_id = {${projectParam}:UUID}${extraWhere ? ` AND ${extraWhere}` : ""}`;
  return `SELECT ${EVENTS_COLUMNS.join(", ")} FROM ${EVENTS_TABLE} WHERE ${where}`;
}
