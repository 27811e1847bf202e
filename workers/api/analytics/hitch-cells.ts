import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_CELL_SAMPLES } from "../../shared/clickhouse.js";
import type { Window } from "../window.js";
import { HITCH_JUDGED, IS_HITCH, sessionTypicalFrames } from "./frame-causes.js";
import { num, selectRows } from "./select.js";

// The heatmap's hitches mode (docs/analytics.md, "On the map: hitches"): per cell, the heartbeats judged
// for a hitch and the hitches among them, by the cell drill-down's rule (a frame time over twice its
// session's median frame time on the map in the window), and the same for each session's first heartbeat
// in the cell (its first visit), so the cells whose stutter comes on entering them stand out.
//
// No rollup answers it: a hitch is judged against its session's median over the whole window, which is
// only known once the window is read. Cost: the map's samples of the window in cell_samples (key project,
// map, base cell, day) with their order in the session, joined with the medians of the map's sessions
// from session_values (key project, build, day, map, session): both bounded by the map's days, never by
// the project's other maps or days; about the events path of the heatmap (docs/benchmarks.md).

/** The heatmap query's fields this read takes (heatmap.ts HeatmapQuery has them all). */
export type HitchQuery = {
  mapId: string;
  cellSize: number;
  includeZ: boolean;
  buildId?: string;
  platform?: string;
};

/** The hitches fields of a cell: computed only with `hitches`. */
export type HeatmapHitches = {
  /** Heartbeats with a frame time whose session has a typical frame on the map. */
  hitch_heartbeats: number;
  hitches: number;
  /** The same for each session's first heartbeat in the cell. */
  first_visit_heartbeats: number;
  first_visit_hitches: number;
};

/** The key a cell is matched by: x, y and, for 3-D cells, z. */
export const cellKey = (x: number, y: number, z?: number) =>
  z === undefined ? `${x}:${y}` : `${x}:${y}:${z}`;

/** Each cell's hitches, by cellKey; cells without a judged heartbeat are absent. */
export async function hitchCells(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: HitchQuery,
): Promise<Map<string, HeatmapHitches>> {
  const rows = await selectRows(
    ch,
    hitchCellsSql(q),
    {
      projectId,
      from: w.from,
      to: w.to,
      mapId: q.mapId,
      cellSize: q.cellSize,
      buildId: q.buildId,
      platform: q.platform,
    },
    {
      cx: "unknown",
      cy: "unknown",
      ...(q.includeZ ? { cz: "unknown" } : {}),
      judged: "unknown",
      hitches: "unknown",
      first_judged: "unknown",
      first_hitches: "unknown",
    },
  );
  const out = new Map<string, HeatmapHitches>();
  for (const r of rows) {
    out.set(cellKey(num(r.cx), num(r.cy), q.includeZ ? num(r.cz) : undefined), {
      hitch_heartbeats: num(r.judged),
      hitches: num(r.hitches),
      first_visit_heartbeats: num(r.first_judged),
      first_visit_hitches: num(r.first_hitches),
    });
  }
  return out;
}

/**
 * The statement: the map's samples with their session's typical frame, counted per cell. The medians are
 * the map's sessions' (of the build asked), read by the key: narrowing them by the samples, as one cell's
 * read does, would scan the map's samples twice more.
 */
export function hitchCellsSql(q: HitchQuery): string {
  const cell = (v: string) => `floor(${v} / {cellSize:UInt8}) * {cellSize:UInt8}`;
  const where = `project_id = {projectId:UUID} AND map_id = {mapId:String}
        AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}
        ${q.includeZ ? "AND isNotNull(position_z)" : ""}
        ${q.buildId === undefined ? "" : "AND build_id = {buildId:String}"}
        ${q.platform === undefined ? "" : "AND platform = {platform:String}"}`;
  const keys = `cx, cy${q.includeZ ? ", cz" : ""}`;
  return `
    SELECT ${keys}, countIf(is_judged) AS judged, countIf(is_hitch) AS hitches,
      countIf(is_judged AND is_first) AS first_judged, countIf(is_hitch AND is_first) AS first_hitches
    FROM (
      SELECT ${cell("position_x")} AS cx, ${cell("position_y")} AS cy${q.includeZ ? `, ${cell("position_z")} AS cz` : ""},
        ${HITCH_JUDGED("st_frame")} AS is_judged, ${IS_HITCH("st_frame")} AS is_hitch,
        row_number() OVER (PARTITION BY session_id, ${keys} ORDER BY timestamp, batch_id, event_index) = 1 AS is_first
      FROM ${CH_CELL_SAMPLES} AS c
      LEFT JOIN ${sessionTypicalFrames(q.buildId === undefined ? "" : "build_id = {buildId:String}")} AS st ON st.st_session = cityHash64(c.session_id)
      WHERE ${where}
    )
    GROUP BY ${keys}
    ORDER BY ${keys}`;
}
