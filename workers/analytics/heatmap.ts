import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_DB } from "../shared/clickhouse.js";
import type { Window } from "../shared/window.js";
import { num, selectRows } from "./select.js";

export type HeatmapQuery = { mapId: string; cellSize: number; eventName?: string };

export type EventCell = { x: number; y: number; count: number };
export type PerfCell = EventCell & {
  fps_avg: number | null;
  fps_p05: number | null;
  frame_time_avg: number | null;
  frame_time_p95: number | null;
  memory_avg: number | null;
  memory_max: number | null;
  gpu_time_avg: number | null;
  gpu_time_p95: number | null;
};

// The cell containing (x, y) has origin (floor(x/s)·s, floor(y/s)·s). Events without a position
// cannot be placed and are left out. Quantiles are exact (quantileExact: the value at index
// floor(level·n) of the sorted samples); aggregates over a Nullable column are NULL when the cell has
// no sample of that metric. Alert evaluation groups its cells by the same two fragments.
export const MAP_CELL = `floor(position_x / {cellSize:UInt8}) * {cellSize:UInt8} AS x,
      floor(position_y / {cellSize:UInt8}) * {cellSize:UInt8} AS y`;
export const MAP_SCOPE = `project_id = {projectId:UUID}
      AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}
      AND map_id = {mapId:String}
      AND isNotNull(position_x) AND isNotNull(position_y)`;

/** Performance mode: performance-bearing events per cell with their metric summaries. */
export async function perfHeatmapCells(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: HeatmapQuery,
): Promise<PerfCell[]> {
  const rows = await selectRows<Record<keyof PerfCell, number | string | null>>(
    ch,
    `
    SELECT ${MAP_CELL},
      count() AS count,
      avg(fps) AS fps_avg,
      quantileExact(0.05)(fps) AS fps_p05,
      avg(frame_time_ms) AS frame_time_avg,
      quantileExact(0.95)(frame_time_ms) AS frame_time_p95,
      avg(memory_mb) AS memory_avg,
      max(memory_mb) AS memory_max,
      avg(gpu_time_ms) AS gpu_time_avg,
      quantileExact(0.95)(gpu_time_ms) AS gpu_time_p95
    FROM ${CH_DB}.events
    WHERE ${MAP_SCOPE} AND has_perf
    GROUP BY x, y
    ORDER BY x, y`,
    { projectId, from: w.from, to: w.to, mapId: q.mapId, cellSize: q.cellSize },
  );
  return rows.map((r) => ({
    x: num(r.x),
    y: num(r.y),
    count: num(r.count),
    fps_avg: orNull(r.fps_avg),
    fps_p05: orNull(r.fps_p05),
    frame_time_avg: orNull(r.frame_time_avg),
    frame_time_p95: orNull(r.frame_time_p95),
    memory_avg: orNull(r.memory_avg),
    memory_max: orNull(r.memory_max),
    gpu_time_avg: orNull(r.gpu_time_avg),
    gpu_time_p95: orNull(r.gpu_time_p95),
  }));
}

/** Events mode: how often the named event happened in each cell. */
export async function eventHeatmapCells(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: HeatmapQuery & { eventName: string },
): Promise<EventCell[]> {
  const rows = await selectRows<Record<keyof EventCell, number | string>>(
    ch,
    `
    SELECT ${MAP_CELL}, count() AS count
    FROM ${CH_DB}.events
    WHERE ${MAP_SCOPE} AND event_name = {eventName:String}
    GROUP BY x, y
    ORDER BY x, y`,
    { projectId, from: w.from, to: w.to, mapId: q.mapId, cellSize: q.cellSize, eventName: q.eventName },
  );
  return rows.map((r) => ({ x: num(r.x), y: num(r.y), count: num(r.count) }));
}

function orNull(v: number | string | null): number | null {
  return v === null ? null : Number(v);
}
