import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_EVENTS } from "../shared/clickhouse.js";
import type { Window } from "../shared/window.js";
import { num, selectRows } from "./select.js";

export type HeatmapQuery = {
  /** The user's map identifier, as events carry it (resolve an internal UUID first: maps.ts). */
  mapId: string;
  cellSize: number;
  /** 3-D cells: z joins x and y in the grid. */
  includeZ: boolean;
  /** Events mode: only this event; otherwise performance mode (performance-bearing events). */
  eventName?: string;
  /** Only this build's events (the dashboard draws one build, or the difference of two). */
  buildId?: string;
  platform?: string;
};

/**
 * One cell in the shape the engine-editor overlays parse strictly (Unity, UE5, Godot): every name
 * below must be present, the `avg_*` without `?` must be numbers. `weight` is the cell's event count:
 * the overlays colour each cell by weight / max weight, and the number of events is the one measure
 * defined for every cell in both modes (where players were in performance mode, where the event
 * happened in events mode); the metric views read the `avg_*` fields.
 */
export type HeatmapCell = {
  x: number;
  y: number;
  z?: number;
  weight: number;
  event_count: number;
  /** Mean over the cell's events that carry the metric; 0 when none does (the overlays need numbers). */
  avg_fps: number;
  avg_frame_time: number;
  /** Megabytes (memory_used_bytes / 1,048,576). */
  avg_memory: number;
  /** Null when no event of the cell carries it. */
  avg_gpu_time: number | null;
  /** Megabytes, from metrics["mem.vram"] (bytes); null when no event of the cell carries it. */
  avg_mem_vram: number | null;
  p05_fps: number | null;
  p95_frame_time: number | null;
  max_memory: number | null;
  p95_gpu_time: number | null;
  p95_mem_vram: number | null;
};

// The cell containing (x, y) has origin (floor(x/s)·s, floor(y/s)·s); z likewise for 3-D cells.
// Events without a position cannot be placed and are left out. Alert evaluation groups its cells by
// the same two fragments (workers/alerts/cells.ts).
export const MAP_CELL = `floor(position_x / {cellSize:UInt8}) * {cellSize:UInt8} AS x,
      floor(position_y / {cellSize:UInt8}) * {cellSize:UInt8} AS y`;
const MAP_CELL_Z = `floor(position_z / {cellSize:UInt8}) * {cellSize:UInt8} AS z`;
export const MAP_SCOPE = `project_id = {projectId:UUID}
      AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}
      AND map_id = {mapId:String}
      AND isNotNull(position_x) AND isNotNull(position_y)`;

/** metrics["mem.vram"] in megabytes, NULL where the event does not carry it (a missing key reads 0). */
export const VRAM_MB = `if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL)`;

/**
 * Cells of a map, in both modes. Aggregates over a Nullable column skip NULLs (the wire's "not
 * collected"), so every average and percentile is over the events carrying that metric. Quantiles
 * are exact (quantileExact: the value at index floor(level·n) of the n ascending samples).
 */
export async function heatmapCells(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: HeatmapQuery,
): Promise<HeatmapCell[]> {
  const zCell = q.includeZ ? `, ${MAP_CELL_Z}` : "";
  const zScope = q.includeZ ? "AND isNotNull(position_z)" : "";
  const rows = await selectRows<Record<string, number | string | null>>(
    ch,
    `
    WITH ${VRAM_MB} AS vram_mb
    SELECT ${MAP_CELL}${zCell},
      count() AS event_count,
      avg(fps) AS avg_fps,
      avg(frame_time_ms) AS avg_frame_time,
      avg(memory_mb) AS avg_memory,
      avg(gpu_time_ms) AS avg_gpu_time,
      avg(vram_mb) AS avg_mem_vram,
      quantileExact(0.05)(fps) AS p05_fps,
      quantileExact(0.95)(frame_time_ms) AS p95_frame_time,
      max(memory_mb) AS max_memory,
      quantileExact(0.95)(gpu_time_ms) AS p95_gpu_time,
      quantileExact(0.95)(vram_mb) AS p95_mem_vram
    FROM ${CH_EVENTS}
    WHERE ${MAP_SCOPE} ${zScope}
      AND ${q.eventName === undefined ? "has_perf" : "event_name = {eventName:String}"}
      ${q.buildId === undefined ? "" : "AND build_id = {buildId:String}"}
      ${q.platform === undefined ? "" : "AND platform = {platform:String}"}
    GROUP BY x, y${q.includeZ ? ", z" : ""}
    ORDER BY x, y${q.includeZ ? ", z" : ""}`,
    {
      projectId,
      from: w.from,
      to: w.to,
      mapId: q.mapId,
      cellSize: q.cellSize,
      eventName: q.eventName,
      buildId: q.buildId,
      platform: q.platform,
    },
  );
  return rows.map((r) => {
    const count = num(r.event_count);
    return {
      x: num(r.x),
      y: num(r.y),
      ...(q.includeZ ? { z: num(r.z) } : {}),
      weight: count,
      event_count: count,
      avg_fps: orZero(r.avg_fps),
      avg_frame_time: orZero(r.avg_frame_time),
      avg_memory: orZero(r.avg_memory),
      avg_gpu_time: orNull(r.avg_gpu_time),
      avg_mem_vram: orNull(r.avg_mem_vram),
      p05_fps: orNull(r.p05_fps),
      p95_frame_time: orNull(r.p95_frame_time),
      max_memory: orNull(r.max_memory),
      p95_gpu_time: orNull(r.p95_gpu_time),
      p95_mem_vram: orNull(r.p95_mem_vram),
    };
  });
}

/** NULL (no sample) and a NaN that an engine may give for an empty average both mean "none". */
function orNull(v: number | string | null | undefined): number | null {
  if (v === null || v === undefined) {
    return null;
  }
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

function orZero(v: number | string | null | undefined): number {
  return orNull(v) ?? 0;
}
