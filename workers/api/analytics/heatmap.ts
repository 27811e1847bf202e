import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_EVENTS, CH_HEATMAP_CELLS } from "../../shared/clickhouse.js";
import type { Window } from "../window.js";
import { type Bound, boundCodeSql, boundCounts, FRAME_MS, OVER_DEFAULT_BUDGET } from "./frame-causes.js";
import { cellKey, type HeatmapHitches, hitchCells } from "./hitch-cells.js";
import { rawPercentile } from "./percentiles.js";
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
  /**
   * The tail fields (p05_fps, p95_frame_time, max_memory, p95_gpu_time, p95_mem_vram). Without it the
   * statement reads the sums and counts only: the percentile states are most of the rollup's bytes and
   * merging them is most of its cost, and no editor overlay reads a tail.
   */
  tails?: boolean;
  /** The "bound by" fields (heartbeats, slow, bounds): what bounds each cell's slow frames. */
  why?: boolean;
  /** The hitches fields (hitch-cells.ts), performance mode only: a second statement over the samples. */
  hitches?: boolean;
};

/** The "bound by" fields: computed only with `why`. */
export type HeatmapWhy = { heartbeats: number; slow: number; bounds: Record<Bound, number> };

/** The tail fields: computed only with `tails` (absent otherwise, as null already means "no sample"). */
export type HeatmapTails = {
  p05_fps: number | null;
  p95_frame_time: number | null;
  max_memory: number | null;
  p95_gpu_time: number | null;
  p95_mem_vram: number | null;
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
} & Partial<HeatmapTails> &
  Partial<HeatmapWhy> &
  Partial<HeatmapHitches>;

// The cell containing (x, y) has origin (floor(x/s)·s, floor(y/s)·s); z likewise for 3-D cells.
// Events without a position cannot be placed and are left out. Alert evaluation reads the same cells
// (workers/api/alerts/cells.ts).
export const MAP_SCOPE = `project_id = {projectId:UUID}
      AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}
      AND map_id = {mapId:String}
      AND isNotNull(position_x) AND isNotNull(position_y)`;

/** metrics["mem.vram"] in megabytes, NULL where the event does not carry it (a missing key reads 0). */
export const VRAM_MB = `if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL)`;

/** The base cell of telemetry.heatmap_cells and telemetry.alert_cells (0004_rollups.sql). */
export const ROLLUP_CELL = 25;

/**
 * Whether a cell size is derived exactly from the rollups' base cells: every cell of size s (a
 * multiple of the base b) is a union of base cells, floor(floor(v / b) · b / s) · s = floor(v / s) · s.
 */
export const fromRollup = (cellSize: number) => cellSize % ROLLUP_CELL === 0;

/** What both forms of the cell query give (and cz, with includeZ): numbers, read through num / orNull. */
const CELL_COLUMNS = {
  cx: "unknown",
  cy: "unknown",
  event_count: "unknown",
  avg_fps: "unknown",
  avg_frame_time: "unknown",
  avg_memory: "unknown",
  avg_gpu_time: "unknown",
  avg_mem_vram: "unknown",
} as const;

const WHY_COLUMNS = { beats: "unknown", slow_n: "unknown", bound_map: "unknown" } as const;

const TAIL_COLUMNS = {
  p05_fps: "unknown",
  p95_frame_time: "unknown",
  max_memory: "unknown",
  p95_gpu_time: "unknown",
  p95_mem_vram: "unknown",
} as const;

/**
 * Cells of a map, in both modes. Averages are over the events carrying that metric (the wire's "not
 * collected" is NULL); percentiles (with `tails` only) are nearest-rank over quantized samples
 * (percentiles.ts). The performance mode at sizes that are multiples of 25, without build or platform,
 * reads telemetry.heatmap_cells (a row per cell, day and z level); the rest reads the events.
 */
export async function heatmapCells(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: HeatmapQuery,
  /** true: from the events whatever the size and filters (the bench's peer of the rollup). */
  fromEvents = false,
): Promise<HeatmapCell[]> {
  const params = {
    projectId,
    from: w.from,
    to: w.to,
    mapId: q.mapId,
    cellSize: q.cellSize,
    eventName: q.eventName,
    buildId: q.buildId,
    platform: q.platform,
  };
  // The rollup has no event name, build or platform in its key: those read the events.
  const rollup =
    !fromEvents &&
    fromRollup(q.cellSize) &&
    q.eventName === undefined &&
    q.buildId === undefined &&
    q.platform === undefined;
  const hitchesAsked = q.hitches === true && q.eventName === undefined;
  const [rows, hitches] = await Promise.all([
    selectRows(ch, rollup ? rollupSql(q) : heatmapEventsSql(q), params, {
      ...CELL_COLUMNS,
      ...(q.tails ? TAIL_COLUMNS : {}),
      ...(q.why ? WHY_COLUMNS : {}),
      ...(q.includeZ ? { cz: "unknown" } : {}),
    }),
    hitchesAsked ? hitchCells(ch, projectId, w, q) : undefined,
  ]);
  return rows.map((r) => {
    const count = num(r.event_count);
    const h = hitches?.get(cellKey(num(r.cx), num(r.cy), q.includeZ ? num(r.cz) : undefined));
    return {
      x: num(r.cx),
      y: num(r.cy),
      ...(q.includeZ ? { z: num(r.cz) } : {}),
      weight: count,
      event_count: count,
      avg_fps: orZero(r.avg_fps),
      avg_frame_time: orZero(r.avg_frame_time),
      avg_memory: orZero(r.avg_memory),
      avg_gpu_time: orNull(r.avg_gpu_time),
      avg_mem_vram: orNull(r.avg_mem_vram),
      ...(q.tails
        ? {
            p05_fps: orNull(r.p05_fps),
            p95_frame_time: orNull(r.p95_frame_time),
            max_memory: orNull(r.max_memory),
            p95_gpu_time: orNull(r.p95_gpu_time),
            p95_mem_vram: orNull(r.p95_mem_vram),
          }
        : {}),
      ...(q.why
        ? {
            heartbeats: num(r.beats),
            slow: num(r.slow_n),
            bounds: boundCounts(mapPairs(r.bound_map)),
          }
        : {}),
      ...(hitches
        ? (h ?? { hitch_heartbeats: 0, hitches: 0, first_visit_heartbeats: 0, first_visit_hitches: 0 })
        : {}),
    };
  });
}

// Cost: from the events, the window's rows of the project (its primary key prefix) filtered to the map;
// the tails add a hash map of quantized samples per cell and metric, and the averages only running sums.
// Exported for bench:analytics, whose plain-SQL peer of the heatmap it is.
export function heatmapEventsSql(q: HeatmapQuery): string {
  const cell = (v: string, as: string) => `floor(${v} / {cellSize:UInt8}) * {cellSize:UInt8} AS ${as}`;
  const tails = q.tails
    ? `,
      ${rawPercentile(0.05, "fps")} AS p05_fps,
      ${rawPercentile(0.95, "frame_time_ms")} AS p95_frame_time,
      max(memory_mb) AS max_memory,
      ${rawPercentile(0.95, "gpu_time_ms")} AS p95_gpu_time,
      ${rawPercentile(0.95, "vram_mb")} AS p95_mem_vram`
    : "";
  // The "bound by" fields, by the rule of frame-causes.ts over the events' own columns (the heartbeat's
  // own memory total; its display's budget, 60 Hz where not sent).
  const why = q.why
    ? `,
      count(${FRAME_MS}) AS beats,
      countIf(${OVER_DEFAULT_BUDGET}) AS slow_n,
      sumMapIf(map(toUInt8(${boundCodeSql("memory_total_mb")}), toUInt64(1)), ${OVER_DEFAULT_BUDGET}) AS bound_map`
    : "";
  return `
    WITH ${VRAM_MB} AS vram_mb${
      q.why
        ? `,
      if(mapContains(metrics, 'io.read_time_ms'), metrics['io.read_time_ms'], NULL) AS io_read_time_ms,
      if(mapContains(metrics, 'display.hz') AND metrics['display.hz'] > 0, metrics['display.hz'], NULL) AS display_hz`
        : ""
    }
    SELECT ${cell("position_x", "cx")}, ${cell("position_y", "cy")}${q.includeZ ? `, ${cell("position_z", "cz")}` : ""},
      count() AS event_count,
      avg(fps) AS avg_fps,
      avg(frame_time_ms) AS avg_frame_time,
      avg(memory_mb) AS avg_memory,
      avg(gpu_time_ms) AS avg_gpu_time,
      avg(vram_mb) AS avg_mem_vram${tails}${why}
    FROM ${CH_EVENTS}
    WHERE ${MAP_SCOPE} ${q.includeZ ? "AND isNotNull(position_z)" : ""}
      AND ${q.eventName === undefined ? "has_perf" : "event_name = {eventName:String}"}
      ${q.buildId === undefined ? "" : "AND build_id = {buildId:String}"}
      ${q.platform === undefined ? "" : "AND platform = {platform:String}"}
    GROUP BY cx, cy${q.includeZ ? ", cz" : ""}
    ORDER BY cx, cy${q.includeZ ? ", cz" : ""}`;
}

// Cost: the map's rows of the window in heatmap_cells (key project, map, day), a row per base cell and
// day. Without the tails it reads only the SimpleAggregateFunction sums and counts, a few bytes per row;
// the percentile states are a hash map of up to hundreds of buckets per row and metric, and merging
// them per cell is what grew with the events (docs/analytics.md, "What a rollup cannot shrink").
function rollupSql(q: HeatmapQuery): string {
  const cell = (v: string, as: string) => `floor(${v} / {cellSize:UInt8}) * {cellSize:UInt8} AS ${as}`;
  // An average is NaN (0 / 0) where no event carries the metric: orZero / orNull turn it into 0 / null.
  // A percentile state without samples merges to 0, hence the count guard.
  const percentile = (level: number, m: string) =>
    `if(sum(${m}_n) = 0, NULL, quantileExactWeightedMerge(${level})(${m}_q))`;
  const tails = q.tails
    ? `,
      ${percentile(0.05, "fps")} AS p05_fps,
      ${percentile(0.95, "frame")} AS p95_frame_time,
      if(sum(mem_n) = 0, NULL, max(mem_max)) AS max_memory,
      ${percentile(0.95, "gpu")} AS p95_gpu_time,
      ${percentile(0.95, "vram")} AS p95_mem_vram`
    : "";
  return `
    SELECT ${cell("x", "cx")}, ${cell("y", "cy")}${q.includeZ ? `, ${cell("z", "cz")}` : ""},
      sum(events) AS event_count,
      sum(fps_sum) / sum(fps_n) AS avg_fps,
      sum(frame_sum) / sum(frame_n) AS avg_frame_time,
      sum(mem_sum) / sum(mem_n) AS avg_memory,
      sum(gpu_sum) / sum(gpu_n) AS avg_gpu_time,
      sum(vram_sum) / sum(vram_n) AS avg_mem_vram${tails}${
        q.why
          ? `,
      sum(beats_n) AS beats, sum(slow_n) AS slow_n, sumMap(slow_bounds) AS bound_map`
          : ""
      }
    FROM ${CH_HEATMAP_CELLS}
    WHERE project_id = {projectId:UUID} AND map_id = {mapId:String}
      AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})
      ${q.includeZ ? "AND NOT isNaN(z)" : ""}
    GROUP BY cx, cy${q.includeZ ? ", cz" : ""}
    ORDER BY cx, cy${q.includeZ ? ", cz" : ""}`;
}

/** A Map column as JSON ({"0": "3"}) as the [codes, counts] boundCounts takes. */
function mapPairs(v: unknown): [unknown[], unknown[]] {
  const m = (v ?? {}) as Record<string, unknown>;
  return [Object.keys(m), Object.values(m)];
}

/** NULL (no sample) and a NaN that an engine may give for an empty average both mean "none". */
function orNull(v: unknown): number | null {
  if (v === null || v === undefined) {
    return null;
  }
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

function orZero(v: unknown): number {
  return orNull(v) ?? 0;
}
