import { CH_EVENTS } from "../../shared/clickhouse.js";
import { EVENT_COLUMNS } from "../../shared/telemetry/fields.js";

/**
 * The one table users see, `events`: one column per scalar of the wire contract under its own name
 * (maps as ClickHouse maps, the performance fields NULL where the SDK sent its "not collected" zero),
 * plus memory_mb, the megabytes that thresholds speak, and the device and SDK columns. Internal
 * bookkeeping (batch key, event index, receive time, materialized helpers) is left out. The query
 * endpoint and exports both read through it, so a download has exactly the columns a query sees.
 */
export const EVENTS_COLUMNS: readonly string[] = [
  "project_id",
  // The wire's columns (workers/shared/telemetry/fields.ts), with memory_mb beside memory_used_bytes.
  ...EVENT_COLUMNS.flatMap((c) => (c === "memory_used_bytes" ? [c, "memory_mb"] : [c])),
  "sdk_name",
  "sdk_version",
];

/**
 * SELECT of one project's rows of telemetry.events with the wire-contract columns. The project is a
 * bound parameter named by the caller; the filter sits at the read itself, so the primary key
 * (project_id first) prunes every other tenant's granules.
 */
export function projectEventsSelect(projectParam: string, extraWhere = ""): string {
  const where = `project_id = {${projectParam}:UUID}${extraWhere ? ` AND ${extraWhere}` : ""}`;
  return `SELECT ${EVENTS_COLUMNS.join(", ")} FROM ${CH_EVENTS} WHERE ${where}`;
}
