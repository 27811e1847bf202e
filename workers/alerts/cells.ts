import type { ClickHouseClient } from "@clickhouse/client-web";
import { MAP_CELL, MAP_SCOPE } from "../analytics/heatmap.js";
import { num, selectRows } from "../analytics/select.js";
import { CH_EVENTS } from "../shared/clickhouse.js";
import type { Window } from "../shared/window.js";
import { type AlertMetric, lowerIsWorse } from "./metrics.js";

/** Device filters of a threshold profile; null matches any value. */
export type ProfileFilters = {
  platform: string | null;
  resolution: string | null;
  buildConfig: string | null;
  gpu: string | null;
  storage: string | null;
};

export type CellQuery = {
  projectId: string;
  /** The user's map identifier, as events carry it. */
  mapId: string;
  window: Window;
  cellSize: number;
  metric: AlertMetric;
  threshold: number;
  filters: ProfileFilters;
};

export type CellCounts = { failCount: number; totalCount: number };

// Fixed names chosen in code, never from input: the scan reads only the rule's metric column.
const METRIC_COLUMN: Record<AlertMetric, string> = {
  fps: "fps",
  frame_time: "frame_time_ms",
  // Profiles speak megabytes; events carry bytes: memory_mb is memory_used_bytes / 1,048,576.
  memory: "memory_mb",
  gpu_time: "gpu_time_ms",
};

/**
 * Cells of the map grid (the heatmap's cells) whose mean metric is worse than the threshold, out of
 * the cells holding at least one sample of that metric. One scan of the project's granules in the
 * window; every value is bound.
 */
export async function countFailingCells(ch: ClickHouseClient, q: CellQuery): Promise<CellCounts> {
  const f = q.filters;
  const column = METRIC_COLUMN[q.metric];
  const worse = lowerIsWorse(q.metric) ? "<" : ">";
  const [row] = await selectRows<{ total: unknown; failed: unknown }>(
    ch,
    `
      SELECT count() AS total, countIf(value ${worse} {threshold:Float64}) AS failed
      FROM (
        SELECT ${MAP_CELL}, avg(${column}) AS value
        FROM ${CH_EVENTS}
        WHERE ${MAP_SCOPE}
          AND has_perf AND isNotNull(${column})
          AND ({anyPlatform:Bool} OR platform = {platform:String})
          AND ({anyResolution:Bool} OR resolution = {resolution:String})
          AND ({anyBuildConfig:Bool} OR build_config = {buildConfig:String})
          AND ({anyGpu:Bool} OR gpu = {gpu:String})
          AND ({anyStorage:Bool} OR storage = {storage:String})
        GROUP BY x, y
      )`,
    {
      projectId: q.projectId,
      from: q.window.from,
      to: q.window.to,
      mapId: q.mapId,
      cellSize: q.cellSize,
      threshold: q.threshold,
      anyPlatform: f.platform === null,
      platform: f.platform ?? "",
      anyResolution: f.resolution === null,
      resolution: f.resolution ?? "",
      anyBuildConfig: f.buildConfig === null,
      buildConfig: f.buildConfig ?? "",
      anyGpu: f.gpu === null,
      gpu: f.gpu ?? "",
      anyStorage: f.storage === null,
      storage: f.storage ?? "",
    },
  );
  return { failCount: num(row?.failed), totalCount: num(row?.total) };
}
