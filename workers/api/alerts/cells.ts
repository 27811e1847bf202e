import type { ClickHouseClient } from "@clickhouse/client-web";
import type { WorstCell } from "../../../schema/pg/columns.js";
import { CH_ALERT_CELLS, CH_EVENTS } from "../../shared/clickhouse.js";
import { isWorse, METRIC, METRICS, type MetricKey, worseOp } from "../../shared/telemetry/metrics.js";
import { hasSessionDevices, withSessionDevices } from "../analytics/device.js";
import { fromRollup, MAP_SCOPE } from "../analytics/heatmap.js";
import { selectRows } from "../analytics/select.js";
import type { Window } from "../window.js";

/** Device filters of a threshold profile; null matches any value. */
export type ProfileFilters = {
  platform: string | null;
  resolution: string | null;
  buildConfig: string | null;
  gpu: string | null;
  storage: string | null;
};

/** The cells one evaluation reads: every (rule, profile) pair with the same scope shares them. */
export type CellScope = {
  projectId: string;
  /** The user's map identifier, as events carry it. */
  mapId: string;
  window: Window;
  cellSize: number;
  filters: ProfileFilters;
};

export type CellQuery = CellScope & { metric: MetricKey; threshold: number };

export type CellCounts = { failCount: number; totalCount: number };

/** A judgement's counts and its worst failing cells, worst first (at most WORST_CELLS). */
export type CellJudgement = CellCounts & { worst: WorstCell[] };

/** How many failing cells a triggered evaluation keeps, and its notifications carry. */
export const WORST_CELLS = 10;

/**
 * One map cell (origin x, y) of the scope: the mean of each alert metric over its performance-bearing
 * events (null without a sample) and the number of samples of each.
 */
export type CellMeans = {
  x: number;
  y: number;
  mean: Record<MetricKey, number | null>;
  samples: Record<MetricKey, number>;
};

const FILTERS = `({anyPlatform:Bool} OR platform = {platform:String})
        AND ({anyResolution:Bool} OR resolution = {resolution:String})
        AND ({anyBuildConfig:Bool} OR build_config = {buildConfig:String})
        AND ({anyGpu:Bool} OR gpu = {gpu:String})
        AND ({anyStorage:Bool} OR storage = {storage:String})`;

/**
 * Whether a profile filters on a device column other than the platform: those columns may come from the
 * session's device_info (analytics/device.ts), which the events' own columns and the rollup lack.
 */
const filtersDevice = (f: ProfileFilters) =>
  f.resolution !== null || f.buildConfig !== null || f.gpu !== null || f.storage !== null;

/**
 * The performance-bearing events of the scope, as a FROM source named `events`: with device filters,
 * their device columns are the effective ones (their own, else their session's device_info).
 */
function scopeEvents(f: ProfileFilters): string {
  return filtersDevice(f)
    ? `${withSessionDevices(CH_EVENTS, `${MAP_SCOPE} AND has_perf`, ["resolution", "build_config", "gpu", "storage"], ["has_perf", "memory_mb"])} AS events`
    : CH_EVENTS;
}

/** The bound values of a scope: its project, window, map, cell size and FILTERS' device filters. */
function scopeParams(q: CellScope) {
  const f = q.filters;
  return {
    projectId: q.projectId,
    from: q.window.from,
    to: q.window.to,
    retainedFrom: q.window.retainedFrom,
    mapId: q.mapId,
    cellSize: q.cellSize,
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
  };
}

/**
 * The mean of every alert metric per cell of the map grid (the heatmap's cells) over the
 * performance-bearing events matching the profile's filters, in one statement: every rule and profile
 * of the same scope is then judged from it (judgeCells), whatever its metric and threshold. Cell sizes
 * that are multiples of 25 read telemetry.alert_cells (sums and counts per day, device and base cell);
 * 5 and 10 read the events. A profile with device filters reads the events for every size when the
 * project sent any device_info in the window (the rollup keeps the events' own device columns, and a
 * device_info may name the device of samples stored before it). Every value is bound.
 */
export async function cellMeans(ch: ClickHouseClient, q: CellScope): Promise<CellMeans[]> {
  const rollup =
    fromRollup(q.cellSize) &&
    !(filtersDevice(q.filters) && (await hasSessionDevices(ch, q.projectId, q.window)));
  const cell = (v: string, as: string) => `floor(${v} / {cellSize:UInt8}) * {cellSize:UInt8} AS ${as}`;
  // Per metric: its mean under its key and its sample count as n_<key>, from the rollup's sums and
  // counts or from the events' sample column.
  const perMetric = rollup
    ? METRICS.map(
        ({ key, rollup: r }) =>
          `if(sum(${r}_n) = 0, NULL, sum(${r}_sum) / sum(${r}_n)) AS ${key}, sum(${r}_n) AS n_${key}`,
      )
    : METRICS.map(({ key, column }) => `avg(${column}) AS ${key}, count(events.${column}) AS n_${key}`);
  const sql = rollup
    ? `
      SELECT ${cell("x", "cx")}, ${cell("y", "cy")},
        ${perMetric.join(",\n        ")}
      FROM ${CH_ALERT_CELLS}
      WHERE project_id = {projectId:UUID} AND map_id = {mapId:String}
        AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})
        AND ${FILTERS}
      GROUP BY cx, cy`
    : `
      SELECT ${cell("position_x", "cx")}, ${cell("position_y", "cy")},
        ${perMetric.join(",\n        ")}
      FROM ${scopeEvents(q.filters)}
      WHERE ${MAP_SCOPE} AND has_perf AND ${FILTERS}
      GROUP BY cx, cy`;
  const rows = await selectRows(ch, sql, scopeParams(q), {
    cx: "unknown",
    cy: "unknown",
    ...(Object.fromEntries(
      METRICS.flatMap(({ key }) => [key, `n_${key}`].map((c) => [c, "unknown"])),
    ) as Record<MetricKey | `n_${MetricKey}`, "unknown">),
  });
  const byMetric = <T>(of: (key: MetricKey) => T) =>
    Object.fromEntries(METRICS.map(({ key }) => [key, of(key)])) as Record<MetricKey, T>;
  return rows.map((r) => ({
    x: Number(r.cx),
    y: Number(r.cy),
    mean: byMetric((key) => finite(r[key])),
    samples: byMetric((key) => Number(r[`n_${key}`])),
  }));
}

/**
 * Cells whose mean metric is worse than the threshold, out of the cells holding at least one sample of
 * that metric, and the worst of the failing ones in the same pass: the worst mean first (lowest fps,
 * highest time or memory, i.e. farthest beyond the threshold), then more samples, then the lower x,
 * then the lower y, so the order is total and the same on every run.
 */
export function judgeCells(
  cells: CellMeans[],
  metric: MetricKey,
  threshold: number,
  cellSize: number,
): CellJudgement {
  const m = METRIC[metric];
  let failCount = 0;
  let totalCount = 0;
  const failing: WorstCell[] = [];
  for (const c of cells) {
    const v = c.mean[metric];
    if (v === null) {
      continue;
    }
    totalCount++;
    if (isWorse(m, v, threshold)) {
      failCount++;
      // The share of failing samples needs the samples themselves: failingShares fills it in for the
      // few worst cells kept.
      failing.push({ x: c.x, y: c.y, cellSize, value: v, samples: c.samples[metric], failingShare: 0 });
    }
  }
  failing.sort(
    (a, b) =>
      (m.better === "higher" ? a.value - b.value : b.value - a.value) ||
      b.samples - a.samples ||
      a.x - b.x ||
      a.y - b.y,
  );
  return { failCount, totalCount, worst: failing.slice(0, WORST_CELLS) };
}

/** One pair's counts: its scope's cells judged by its metric and threshold. */
export async function countFailingCells(ch: ClickHouseClient, q: CellQuery): Promise<CellCounts> {
  const { failCount, totalCount } = await judgeScope(ch, q);
  return { failCount, totalCount };
}

/** One pair's judgement, counts and worst cells (with their failing shares), as the cron makes it. */
export async function judgeScope(ch: ClickHouseClient, q: CellQuery): Promise<CellJudgement> {
  const judged = judgeCells(await cellMeans(ch, q), q.metric, q.threshold, q.cellSize);
  return { ...judged, worst: await failingShares(ch, q, judged.worst) };
}

/**
 * The worst cells with the share of their samples that are each worse than the threshold. The rollups
 * keep sums and counts only, so this reads the events, but only the given cells' (at most WORST_CELLS)
 * performance-bearing events of the scope, and only when an evaluation triggers: a few reads per cron
 * run, not one per pair.
 */
export async function failingShares(
  ch: ClickHouseClient,
  q: CellQuery,
  cells: WorstCell[],
): Promise<WorstCell[]> {
  if (cells.length === 0) {
    return cells;
  }
  // The events' column the metric is judged on (the same values cellMeans averages).
  const { column } = METRIC[q.metric];
  const worse = worseOp(METRIC[q.metric]);
  const cell = (v: string) => `floor(${v} / {cellSize:UInt8}) * {cellSize:UInt8}`;
  const rows = await selectRows(
    ch,
    `
    SELECT ${cell("position_x")} AS cx, ${cell("position_y")} AS cy,
      countIf(${column} ${worse} {threshold:Float64}) AS failing, count(${column}) AS samples
    FROM ${scopeEvents(q.filters)}
    WHERE ${MAP_SCOPE} AND has_perf AND ${FILTERS}
      AND has(arrayZip({xs:Array(Float64)}, {ys:Array(Float64)}), (cx, cy))
    GROUP BY cx, cy`,
    {
      ...scopeParams(q),
      threshold: q.threshold,
      xs: cells.map((c) => c.x),
      ys: cells.map((c) => c.y),
    },
    { cx: "unknown", cy: "unknown", failing: "unknown", samples: "unknown" },
  );
  const shares = new Map(
    rows.map((r) => [`${Number(r.cx)},${Number(r.cy)}`, Number(r.failing) / Math.max(1, Number(r.samples))]),
  );
  return cells.map((c) => ({ ...c, failingShare: shares.get(`${c.x},${c.y}`) ?? 0 }));
}

function finite(v: unknown): number | null {
  if (v === null || v === undefined) {
    return null;
  }
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}
