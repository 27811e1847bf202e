import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_DB } from "../shared/clickhouse.js";
import type { AlertMetric } from "./metrics.js";

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
  from: Date;
  to: Date;
  cellSize: number;
  metric: AlertMetric;
  threshold: number;
  lowerIsWorse: boolean;
  filters: ProfileFilters;
};

export type CellCounts = { failCount: number; totalCount: number };

const toCh = (d: Date) => d.toISOString().replace("T", " ").replace("Z", "");

/**
 * Cells of the map grid (origin floor(x/s)·s, floor(y/s)·s) whose mean metric is worse than the
 * threshold, out of the cells holding at least one sample of that metric. One scan of the project's
 * granules in the window; every value is bound, the metric column chosen by multiIf on a parameter.
 */
export async function countFailingCells(ch: ClickHouseClient, q: CellQuery): Promise<CellCounts> {
  const f = q.filters;
  const rs = await ch.query({
    query: `
      SELECT
        count() AS total,
        countIf(if({lowerIsWorse:Bool}, value < {threshold:Float64}, value > {threshold:Float64})) AS failed
      FROM (
        SELECT avg(sample) AS value
        FROM (
          SELECT
            floor(position_x / {cellSize:Float64}) AS cell_x,
            floor(position_y / {cellSize:Float64}) AS cell_y,
            multiIf({metric:String} = 'fps', fps,
                    {metric:String} = 'frame_time', frame_time_ms,
                    {metric:String} = 'memory', memory_mb,
                    gpu_time_ms) AS sample
          FROM ${CH_DB}.events
          WHERE project_id = {projectId:UUID}
            AND timestamp >= {from:DateTime64(6, 'UTC')}
            AND timestamp < {to:DateTime64(6, 'UTC')}
            AND map_id = {mapId:String}
            AND has_perf
            AND position_x IS NOT NULL AND position_y IS NOT NULL
            AND ({anyPlatform:Bool} OR platform = {platform:String})
            AND ({anyResolution:Bool} OR resolution = {resolution:String})
            AND ({anyBuildConfig:Bool} OR build_config = {buildConfig:String})
            AND ({anyGpu:Bool} OR gpu = {gpu:String})
            AND ({anyStorage:Bool} OR storage = {storage:String})
        )
        WHERE sample IS NOT NULL
        GROUP BY cell_x, cell_y
      )`,
    query_params: {
      projectId: q.projectId,
      from: toCh(q.from),
      to: toCh(q.to),
      mapId: q.mapId,
      cellSize: q.cellSize,
      metric: q.metric,
      threshold: q.threshold,
      lowerIsWorse: q.lowerIsWorse,
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
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ total: string | number; failed: string | number }>();
  return { failCount: Number(row?.failed ?? 0), totalCount: Number(row?.total ?? 0) };
}

/** The window of `days` UTC calendar days ending today (today included), as ARCHITECTURE.md defines. */
export function windowOfDays(days: number, now: Date): { from: Date; to: Date } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return { from: new Date(today - (days - 1) * 86_400_000), to: new Date(today + 86_400_000) };
}
