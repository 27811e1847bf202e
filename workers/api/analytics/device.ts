import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_SESSION_DEVICES } from "../../shared/clickhouse.js";
import { DEVICE_COLUMN_NAMES } from "../../shared/telemetry/fields.js";
import type { Window } from "../window.js";
import { selectRows } from "./select.js";

// A session's hardware, for the SDKs that cannot send the device message. The engine SDKs (Unity, UE5,
// Godot) send one event named `device_info` per session whose attributes carry the device message's
// fields by name (docs/ingest.md, "Hardware context from the engine SDKs"); a materialized view keeps
// the latest one per project, day and session hash in telemetry.session_devices
// (0010_session_devices.sql). Reads attach it to every sample of the session here, at read time, so
// the samples that arrived before it get it too and no stored row is ever rewritten. A sample's own
// device column (the web SDK's device message, batch field 2 / event field 22) wins field by field.
//
// The bound: a sample is matched to a device_info of its session sent within one day either side of
// the window read (days [from − 1, to + 1]), whenever either arrived. A session lasting more than a
// day past its device_info keeps the device on the samples of the windows that reach back to it; the
// bound keeps a read on the window's days of the table (its key is project, day, session), so it costs
// the window's sessions, never the project's whole history.

/** The device columns, as telemetry.events names them (the field table's); every one is a device_info attribute. */
export const DEVICE_COLUMNS = DEVICE_COLUMN_NAMES;
export type DeviceColumn = (typeof DEVICE_COLUMNS)[number];

/** The device columns telemetry.cell_samples keeps (0005_cell_samples.sql). */
export const CELL_SAMPLE_DEVICE_COLUMNS = ["gpu", "device_model", "resolution", "os_version"] as const;

/**
 * One row per session hash (`sd_session`) with its latest device_info of the window's days ± 1
 * (`sd_<column>`), none before the retention horizon. Bound with {projectId:UUID},
 * {from:DateTime64(6, 'UTC')}, {to:DateTime64(6, 'UTC')} and {retainedFrom:DateTime64(6, 'UTC')} (Window).
 */
export const SESSION_DEVICES = sessionDevices("");

/** SESSION_DEVICES, its sessions further limited by `and` (an SQL condition on `session`, or ""). */
export function sessionDevices(and: string): string {
  return `(
      SELECT session AS sd_session,
        ${DEVICE_COLUMNS.map((c) => `argMax(${c}, timestamp) AS sd_${c}`).join(", ")}
      FROM ${CH_SESSION_DEVICES}
      WHERE project_id = {projectId:UUID}
        AND day >= greatest(toDate({from:DateTime64(6, 'UTC')}) - 1, toDate({retainedFrom:DateTime64(6, 'UTC')}))
        AND day <= toDate({to:DateTime64(6, 'UTC')}) + 1
        ${and}
      GROUP BY session)`;
}

/** A sample's effective device column: its own where sent, else its session's device_info. */
const effective = (t: string, c: DeviceColumn) =>
  c === "memory_total_mb"
    ? `if(${t}.${c} != 0, ${t}.${c}, sd.sd_${c}) AS ${c}`
    : `if(${t}.${c} != '', ${t}.${c}, sd.sd_${c}) AS ${c}`;

/**
 * `table`'s rows matching `where`, every column as stored but the given device columns, which read
 * the effective device (the row's own, else its session's device_info): a FROM source for a statement
 * that filters or groups by device. `keep` names the table's MATERIALIZED and ALIAS columns the
 * statement reads (`*` leaves them out). `where` is applied inside, unqualified, so the primary key
 * prunes as before; it must not name a device column (it would read the stored one). `session` is the
 * row's session hash: cityHash64 of its session_id, or a table's own hash column (`t.session`).
 * `narrow`: the device rows are limited to the sessions `where` selects (read once more for that): for
 * a selective `where` (one cell's samples), whose few sessions make a small join instead of the window's.
 */
export function withSessionDevices(
  table: string,
  where: string,
  columns: readonly DeviceColumn[],
  keep: readonly string[] = [],
  session = "cityHash64(t.session_id)",
  narrow = false,
): string {
  const devices = narrow
    ? sessionDevices(`AND session IN (SELECT ${session.replace(/\bt\./g, "")} FROM ${table} WHERE ${where})`)
    : SESSION_DEVICES;
  return `(
      SELECT t.* REPLACE (${columns.map((c) => effective("t", c)).join(", ")})${keep.map((k) => `, t.${k} AS ${k}`).join("")}
      FROM ${table} AS t
      LEFT JOIN ${devices} AS sd ON sd.sd_session = ${session}
      WHERE ${where})`;
}

/**
 * Whether the project has any device_info in the window's days ± 1: without one, the rollups keyed
 * by the events' own device columns answer device filters exactly, and a read keeps to them.
 */
export async function hasSessionDevices(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
): Promise<boolean> {
  const rows = await selectRows(
    ch,
    `SELECT 1 AS found FROM ${CH_SESSION_DEVICES}
      WHERE project_id = {projectId:UUID}
        AND day >= greatest(toDate({from:DateTime64(6, 'UTC')}) - 1, toDate({retainedFrom:DateTime64(6, 'UTC')}))
        AND day <= toDate({to:DateTime64(6, 'UTC')}) + 1
      LIMIT 1`,
    { projectId, from: w.from, to: w.to, retainedFrom: w.retainedFrom },
    { found: "unknown" },
  );
  return rows.length > 0;
}
