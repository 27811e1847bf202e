import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_DB } from "../shared/clickhouse.js";
import { DependencyDown } from "../shared/errors.js";
import type { Window } from "../shared/window.js";

export type HeatmapQuery = {
  /** The user's map identifier, as events carry it (resolve an internal UUID first: maps.ts). */
  mapId: string;
  cellSize: number;
  /** 3-D cells: z joins x and y in the grid. */
  includeZ: boolean;
  /** Events mode: only this event; otherwise performance mode (performance-bearing events). */
  eventName?: string;
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
export const MAP_SCOPE = `project_id = {projectId:UUID}
      AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}
      AND map_id = {mapId:String}
      AND isNotNull(position_x) AND isNotNull(position_y)`;

/** metrics["mem.vram"] in megabytes, NULL where the event does not carry it (a missing key reads 0). */
export const VRAM_MB = `if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL)`;

/**
 * Cells of a map, in both modes, as the bytes of a JSON array of HeatmapCell objects (field order as in
 * the type, `z` only for 3-D cells), written by ClickHouse itself. A heatmap is thousands of cells:
 * receiving them as rows, parsing, rebuilding objects and serializing them again cost the Worker about
 * 20 ms of CPU per request, where splicing ClickHouse's bytes into the response costs nearly nothing
 * (README: "Worker to ClickHouse").
 *
 * Aggregates over a Nullable column skip NULLs (the wire's "not collected"), so every average and
 * percentile is over the events carrying that metric. Quantiles are exact (quantileExact: the value at
 * index floor(level·n) of the n ascending samples).
 */
export async function heatmapCellsJson(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: HeatmapQuery,
): Promise<Uint8Array> {
  const zCell = q.includeZ ? `,\n      ${cellOrigin("z")}` : "";
  const zScope = q.includeZ ? "AND isNotNull(position_z)" : "";
  const grid = q.includeZ ? "x, y, z" : "x, y";
  const query = `
    WITH ${VRAM_MB} AS vram_mb
    SELECT ${cellOrigin("x")},
      ${cellOrigin("y")}${zCell},
      count() AS weight,
      count() AS event_count,
      ${orZero("avg(fps)")} AS avg_fps,
      ${orZero("avg(frame_time_ms)")} AS avg_frame_time,
      ${orZero("avg(memory_mb)")} AS avg_memory,
      avg(gpu_time_ms) AS avg_gpu_time,
      avg(vram_mb) AS avg_mem_vram,
      quantileExact(0.05)(fps) AS p05_fps,
      quantileExact(0.95)(frame_time_ms) AS p95_frame_time,
      max(memory_mb) AS max_memory,
      quantileExact(0.95)(gpu_time_ms) AS p95_gpu_time,
      quantileExact(0.95)(vram_mb) AS p95_mem_vram
    FROM ${CH_DB}.events
    WHERE ${MAP_SCOPE} ${zScope}
      AND ${q.eventName === undefined ? "has_perf" : "event_name = {eventName:String}"}
    GROUP BY ${grid}
    ORDER BY ${grid}
    FORMAT JSONEachRow`;
  const params: Record<string, unknown> = {
    projectId,
    from: w.from,
    to: w.to,
    mapId: q.mapId,
    cellSize: q.cellSize,
  };
  if (q.eventName !== undefined) {
    params.eventName = q.eventName;
  }
  const { stream } = await ch.exec({ query, query_params: params, clickhouse_settings: JSON_ARRAY_SETTINGS });
  let body: Uint8Array;
  try {
    body = new Uint8Array(await new Response(stream).arrayBuffer());
  } catch (err) {
    // The connection dropped while the answer was arriving.
    throw new DependencyDown("ClickHouse", err);
  }
  if (!isJsonArray(body)) {
    // Not a whole array: the answer was cut off (a failure after the first bytes appends its message
    // and ends the response). Retryable like a dropped connection, never spliced into a 200.
    throw new DependencyDown("ClickHouse", new Error("ClickHouse heatmap answer is incomplete"));
  }
  return body;
}

/** The cells as objects: heatmapCellsJson's bytes parsed (benchmarks and other server-side readers). */
export async function heatmapCells(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: HeatmapQuery,
): Promise<HeatmapCell[]> {
  return JSON.parse(new TextDecoder().decode(await heatmapCellsJson(ch, projectId, w, q)));
}

const JSON_ARRAY_SETTINGS = {
  // exec() sends settings as given; the query client's gzip'd responses ask for this themselves.
  enable_http_compression: 1,
  // The whole result is computed before the first byte is sent, so a failing query answers with its
  // HTTP status (the client raises it) rather than a 200 cut short; a heatmap's answer is well under 1 MB.
  wait_end_of_query: 1,
  // One JSON array, `[` row `,` row … `]`, rather than one object per line.
  output_format_json_array_of_rows: 1,
  // Counts as JSON numbers, as the cells document them (the default quotes 64-bit integers).
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_64bit_floats: 0,
  // NaN and ±inf are written as null, never as quoted strings: "no value", as for an empty average.
  output_format_json_quote_denormals: 0,
} as const;

/**
 * A cell's origin on one axis. `+ 0` turns the -0 that floor() gives for a coordinate of -0.0 into 0,
 * so it is the same cell as 0 and never printed as -0 (serializing a parsed -0 gave 0 before ClickHouse
 * wrote the cells). MAP_CELL gives the same origins for every other coordinate.
 */
function cellOrigin(axis: "x" | "y" | "z"): string {
  return `floor(position_${axis} / {cellSize:UInt8}) * {cellSize:UInt8} + 0 AS ${axis}`;
}

/** The overlays need these as numbers: 0 where no event carries the metric, and for a NaN or ±inf. */
function orZero(aggregate: string): string {
  return `if(isFinite(${aggregate}), ${aggregate}, 0)`;
}

const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Starts with `[` and ends with `]` apart from trailing whitespace: ClickHouse's array, whole. */
function isJsonArray(body: Uint8Array): boolean {
  let end = body.length - 1;
  while (end >= 0 && (body[end] === 0x0a || body[end] === 0x0d || body[end] === 0x20 || body[end] === 0x09)) {
    end--;
  }
  return end > 0 && body[0] === OPEN_BRACKET && body[end] === CLOSE_BRACKET;
}
