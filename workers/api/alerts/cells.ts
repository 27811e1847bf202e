import type { ClickHouseClient } from "@clickhouse/client-web";
import type { WorstCell } from "../../../schema/pg/columns.js";
import { CH_ALERT_CELLS, CH_CELL_SAMPLES } from "../../shared/clickhouse.js";
import {
  ALERT_METRIC,
  ALERT_METRIC_KEYS,
  type AlertMetricKey,
  BUDGET_SHARE,
  isWorse,
  METRIC,
  METRICS,
  worseOp,
} from "../../shared/telemetry/metrics.js";
import { hasSessionDevices, withSessionDevices } from "../analytics/device.js";
import { FRAME_MS, OVER_DEFAULT_BUDGET } from "../analytics/frame-causes.js";
import { fromRollup } from "../analytics/heatmap.js";
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

export type CellQuery = CellScope & { metric: AlertMetricKey; threshold: number };

export type CellCounts = { failCount: number; totalCount: number };

/** A judgement's counts and its worst failing cells, worst first (at most WORST_CELLS). */
export type CellJudgement = CellCounts & { worst: WorstCell[] };

/** How many failing cells a triggered evaluation keeps, and its notifications carry. */
export const WORST_CELLS = 10;

/**
 * One map cell (origin x, y) of the scope: the mean of each alert metric over its performance-bearing
 * events (null without a sample) and the number of samples of each. For budget_share the "mean" is the
 * share of the cell's heartbeats within their display's budget and its samples are the heartbeats with a
 * frame length (BUDGET_SHARE).
 */
export type CellMeans = {
  x: number;
  y: number;
  mean: Record<AlertMetricKey, number | null>;
  samples: Record<AlertMetricKey, number>;
};

/**
 * Whether a profile filters on a device column other than the platform: those columns may come from the
 * session's device_info (analytics/device.ts), which the events' own columns and the rollup lack.
 */
const filtersDevice = (f: ProfileFilters) =>
  f.resolution !== null || f.buildConfig !== null || f.gpu !== null || f.storage !== null;

/** One (rule, profile) pair to judge, named by a key unique in its call (e.g. `${ruleId}:${profileId}`). */
export type PairQuery = CellQuery & { key: string };

/** The base cell of telemetry.cell_samples (0005, 0013): every cell size of a rule divides it. */
const BASE_CELL = 50;

/**
 * Sets (window, profile) per means statement on the samples paths at cell size 5 (see judgeScopeGroup);
 * at a size s, SAMPLE_SETS × (s / 5)² sets: the same cells × sets of the answer (a grid of s has
 * (5 / s)² as many cells).
 */
const SAMPLE_SETS = 4;

/** Statements of one call run at once: the work is ClickHouse's, on a few cores. */
const READS_AT_ONCE = 2;

/** The device columns a profile filters on (platform is the sample's own in every table). */
const PROFILE_DEVICE_COLUMNS = ["resolution", "build_config", "gpu", "storage"] as const;

/** The stored column of each filter field. */
const FILTER_COLUMNS = {
  platform: "platform",
  resolution: "resolution",
  buildConfig: "build_config",
  gpu: "gpu",
  storage: "storage",
} as const satisfies Record<keyof ProfileFilters, string>;
const FILTER_FIELDS = Object.keys(FILTER_COLUMNS) as Array<keyof ProfileFilters>;

const filterKey = (f: ProfileFilters) => JSON.stringify(FILTER_FIELDS.map((k) => f[k]));

/**
 * A profile's filters as an SQL condition over the stored columns, its values bound as `f<i>_<field>`
 * in `params`; "1" for a profile without filters.
 */
function filterSql(f: ProfileFilters, i: number, params: Record<string, unknown>): string {
  const terms: string[] = [];
  for (const field of FILTER_FIELDS) {
    const value = f[field];
    if (value !== null) {
      params[`f${i}_${field}`] = value;
      terms.push(`${FILTER_COLUMNS[field]} = {f${i}_${field}:String}`);
    }
  }
  return terms.length ? `(${terms.join(" AND ")})` : "1";
}

/** The performance samples of a map (cell_samples: positioned and performance-bearing, as has_perf). */
const SAMPLES_SCOPE = `project_id = {projectId:UUID} AND map_id = {mapId:String}
      AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}`;

/**
 * The samples as a FROM source: with `devices`, their device columns are the effective ones (their own,
 * else their session's device_info of the window's days ± 1, analytics/device.ts), as the events' were.
 */
const samplesOf = (where: string, devices: boolean) =>
  devices
    ? `${withSessionDevices(CH_CELL_SAMPLES, where, PROFILE_DEVICE_COLUMNS, ["memory_mb"])} AS samples`
    : CH_CELL_SAMPLES;

/** The (project, map, window) a statement reads, and its bound values. */
type MapWindow = { projectId: string; mapId: string; window: Window };
const mapWindowParams = (q: MapWindow) => ({
  projectId: q.projectId,
  mapId: q.mapId,
  from: q.window.from,
  to: q.window.to,
  // The session devices' lower bound (analytics/device.ts); an alert's window (≤ 30 days) is inside
  // every plan's retention, so its windows carry no horizon.
  retainedFrom: q.window.retainedFrom,
});

/** The samples a set of means is taken over: a window and a profile's filters, and its metrics. */
type MeansSet = { window: Window; filters: ProfileFilters; metrics: AlertMetricKey[] };

/**
 * The cell means of several sets (window, profile filters) over one map and cell size, in one
 * statement of -If aggregates: `sets[i].metrics` are the metrics wanted under set i. From
 * telemetry.alert_cells when `rollup` (sizes that are multiples of 25, filters the rollup answers
 * exactly; any windows, the read is the widest's days), else from telemetry.cell_samples (`devices`:
 * with the effective device columns; the sets share one window, the session join's bound; "samples":
 * any windows, the read is the widest). A set's sums add the same rows as a statement of its window
 * alone: the other windows' rows fail its condition. Each result lists the cells holding any sample of its set; a metric without a sample
 * there has a null mean.
 */
async function groupMeans(
  ch: ClickHouseClient,
  q: { projectId: string; mapId: string; cellSize: number },
  sets: MeansSet[],
  path: "rollup" | "samples" | "devices",
): Promise<CellMeans[][]> {
  const from = sets.map((s) => s.window).reduce((a, b) => (a.fromMs <= b.fromMs ? a : b));
  const to = sets.map((s) => s.window).reduce((a, b) => (a.toMs >= b.toMs ? a : b));
  const params: Record<string, unknown> = {
    ...mapWindowParams({ ...q, window: { ...from, to: to.to, toMs: to.toMs } }),
    cellSize: q.cellSize,
  };
  const windows = new Map<string, number>();
  const conditions = sets.map((set, i) => {
    const filter = filterSql(set.filters, i, params);
    if (path === "devices" || (set.window.from === params.from && set.window.to === params.to)) {
      return filter;
    }
    const key = `${set.window.from} ${set.window.to}`;
    let w = windows.get(key);
    if (w === undefined) {
      w = windows.size;
      windows.set(key, w);
      params[`w${w}_from`] = set.window.from;
      params[`w${w}_to`] = set.window.to;
    }
    // The rollup's days as the single-window statement bounds them; the samples' instants.
    const within =
      path === "rollup"
        ? `day >= toDate({w${w}_from:DateTime64(6, 'UTC')}) AND day < toDate({w${w}_to:DateTime64(6, 'UTC')})`
        : `timestamp >= {w${w}_from:DateTime64(6, 'UTC')} AND timestamp < {w${w}_to:DateTime64(6, 'UTC')}`;
    return filter === "1" ? `(${within})` : `(${within} AND ${filter})`;
  });
  const metrics = sets.map((set) => set.metrics);
  const cell = (v: string, as: string) => `floor(${v} / {cellSize:UInt8}) * {cellSize:UInt8} AS ${as}`;
  const columns = conditions.flatMap((c, i) =>
    (metrics[i] ?? []).map((key) => {
      if (key === BUDGET_SHARE.key) {
        // The heartbeats within budget and those with a frame length: the rollup's counts (0038), or the
        // samples' own, by the same rule (frame-causes.ts OVER_DEFAULT_BUDGET).
        return path === "rollup"
          ? `sumIf(beats_n - slow_n, ${c}) AS s${i}_${key}, sumIf(beats_n, ${c}) AS n${i}_${key}`
          : `avgIf(NOT ${OVER_DEFAULT_BUDGET}, isNotNull(${FRAME_MS}) AND ${c}) AS s${i}_${key}, ` +
              `countIf(isNotNull(${FRAME_MS}) AND ${c}) AS n${i}_${key}`;
      }
      const m = METRIC[key];
      return path === "rollup"
        ? `sumIf(${m.rollup}_sum, ${c}) AS s${i}_${key}, sumIf(${m.rollup}_n, ${c}) AS n${i}_${key}`
        : `avgIf(${m.column}, ${c}) AS s${i}_${key}, countIf(isNotNull(${m.column}) AND ${c}) AS n${i}_${key}`;
    }),
  );
  const any = conditions.includes("1") ? "" : `AND (${conditions.join(" OR ")})`;
  const sql =
    path === "rollup"
      ? `
      SELECT ${cell("x", "cx")}, ${cell("y", "cy")},
        ${columns.join(",\n        ")}
      FROM ${CH_ALERT_CELLS}
      WHERE project_id = {projectId:UUID} AND map_id = {mapId:String}
        AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})
        ${any}
      GROUP BY cx, cy`
      : `
      SELECT ${cell("position_x", "cx")}, ${cell("position_y", "cy")},
        ${columns.join(",\n        ")}
      FROM ${samplesOf(SAMPLES_SCOPE, path === "devices")}
      WHERE ${SAMPLES_SCOPE} ${any}
      GROUP BY cx, cy`;
  const wanted = metrics.flatMap((keys, i) => keys.flatMap((key) => [`s${i}_${key}`, `n${i}_${key}`]));
  const rows = await selectRows(ch, sql, params, {
    cx: "unknown",
    cy: "unknown",
    ...(Object.fromEntries(wanted.map((c) => [c, "unknown"])) as Record<string, "unknown">),
  });
  return sets.map((_, i) => {
    const keys = metrics[i] ?? [];
    const cells: CellMeans[] = [];
    for (const row of rows) {
      const r = row as Record<string, unknown>;
      const mean = Object.fromEntries(ALERT_METRIC_KEYS.map((key) => [key, null])) as Record<
        AlertMetricKey,
        number | null
      >;
      const samples = Object.fromEntries(ALERT_METRIC_KEYS.map((key) => [key, 0])) as Record<
        AlertMetricKey,
        number
      >;
      let held = false;
      for (const key of keys) {
        const n = Number(r[`n${i}_${key}`]);
        samples[key] = n;
        // The rollup's sum over its count (the quotient ClickHouse would compute), the samples' average.
        mean[key] =
          n === 0
            ? null
            : path === "rollup"
              ? finite(Number(r[`s${i}_${key}`]) / n)
              : finite(r[`s${i}_${key}`]);
        held ||= n > 0;
      }
      if (held) {
        cells.push({ x: Number(r.cx), y: Number(r.cy), mean, samples });
      }
    }
    return cells;
  });
}

/**
 * The mean of every alert metric per cell of the map grid (the heatmap's cells) over the
 * performance-bearing samples matching the profile's filters: one scope's cells, as judgeScopeGroup
 * reads them for many scopes at once.
 */
export async function cellMeans(ch: ClickHouseClient, q: CellScope): Promise<CellMeans[]> {
  const path = await meansPath(ch, q, new Map());
  const all = [...ALERT_METRIC_KEYS];
  const [cells] = await groupMeans(ch, q, [{ window: q.window, filters: q.filters, metrics: all }], path);
  return cells ?? [];
}

/**
 * Where a scope's means are read. Cell sizes that are multiples of 25 read telemetry.alert_cells (sums
 * and counts per day, device and base cell), 5 and 10 the samples. A profile with device filters reads
 * the samples with their effective device columns ("devices") for every size when the project sent any
 * device_info in the window (the rollup and the samples keep their own device columns, and a
 * device_info may name the device of samples stored before it); without one, the stored columns are
 * the effective ones. `seen` remembers the device_info look-ups of one call.
 */
async function meansPath(
  ch: ClickHouseClient,
  q: CellScope,
  seen: Map<string, Promise<boolean>>,
): Promise<"rollup" | "samples" | "devices"> {
  const stored = fromRollup(q.cellSize) ? "rollup" : "samples";
  if (!filtersDevice(q.filters)) {
    return stored;
  }
  const key = `${q.projectId} ${q.window.from} ${q.window.to}`;
  let has = seen.get(key);
  if (!has) {
    has = hasSessionDevices(ch, q.projectId, q.window);
    seen.set(key, has);
  }
  return (await has) ? "devices" : stored;
}

/**
 * Many pairs judged at once: per pair, exactly what judgeScope gives it (counts, worst cells, their
 * failing shares), with one statement per (project, map, window, cell size, read path) for the cell
 * means of every profile of the call (-If aggregates: the pairs that differ in profile, metric or
 * threshold share the read), and one per (project, map, window) for the failing shares of the worst
 * cells of the pairs `wantShares` selects (the others keep failingShare 0). A failed read rejects the
 * whole call. The fewer, larger calls (one per project and map: docs/web-api.md) the fewer reads.
 */
export async function judgeScopeGroup<P extends PairQuery>(
  ch: ClickHouseClient,
  pairs: P[],
  wantShares: (pair: P, counts: CellCounts) => boolean = () => true,
): Promise<Map<string, CellJudgement>> {
  const seen = new Map<string, Promise<boolean>>();
  const paths = await Promise.all(pairs.map((p) => meansPath(ch, p, seen)));
  // The means: statements per (project, map, cell size, path), a column set per (window, profile's
  // filters); per window too on the "devices" path (the session join's bound is the window's days).
  // (In a mixed run of 1,000 pairs the local engine's HTTP stand-in cut connections after samples
  // statements of 10 sets × 40,000 cells of 5 units, not investigated: hence the sets per statement.)
  type MeansGroup = { q: PairQuery; path: "rollup" | "samples" | "devices"; sets: Map<string, P[]> };
  const groups = new Map<string, MeansGroup>();
  pairs.forEach((p, i) => {
    const path = paths[i] ?? "samples";
    // Every window of a (map, cell size) in one statement: the rollup reads the longest window's days
    // once, instead of each window's (1 + 7 + 14 + 30 days for the usual four, read apart); the samples'
    // key puts the base cell before the day, so a window reads about the map's samples whatever its
    // length, and fewer statements read them fewer times.
    const window = path === "devices" ? [p.window.from, p.window.to] : [];
    const key = JSON.stringify([p.projectId, p.mapId, ...window, p.cellSize, path]);
    const group = groups.get(key) ?? { q: p, path, sets: new Map() };
    groups.set(key, group);
    const set = JSON.stringify([p.window.from, p.window.to, filterKey(p.filters)]);
    group.sets.set(set, [...(group.sets.get(set) ?? []), p]);
  });
  const judged = new Map<string, CellJudgement>();
  // On the samples paths a statement answers every cell of the grid at 5 or 10 units (40,000 or 10,000
  // rows on a 1 km map) per set: at most SAMPLE_SETS sets each at 5, as many cells × sets at 10.
  const reads = [...groups.values()].flatMap(({ q, path, sets }) => {
    const all = [...sets.values()];
    const per = path === "rollup" ? all.length : SAMPLE_SETS * Math.max(1, Math.floor((q.cellSize / 5) ** 2));
    return Array.from({ length: Math.ceil(all.length / per) }, (_, i) => ({
      q,
      path,
      bySet: all.slice(i * per, (i + 1) * per),
    }));
  });
  await inRounds(reads, READS_AT_ONCE, async ({ q, path, bySet }) => {
    const cells = await groupMeans(
      ch,
      q,
      bySet.map((ps) => {
        const { window, filters } = ps[0] as P;
        return { window, filters, metrics: [...new Set(ps.map((p) => p.metric))] };
      }),
      path,
    );
    bySet.forEach((ps, i) => {
      for (const p of ps) {
        judged.set(p.key, judgeCells(cells[i] ?? [], p.metric, p.threshold, p.cellSize));
      }
    });
  });
  // The failing shares: a statement per (project, map) for the selected pairs' worst cells, every
  // window at once (the longest's samples read once); per (project, map, window) where the session
  // devices apply (their join is bounded by the window's days).
  const shareGroups = new Map<string, P[]>();
  const withDevices = new Set<string>();
  pairs.forEach((p, i) => {
    const j = judged.get(p.key) as CellJudgement;
    // A budget share's failing shares are exact from its counts already (judgeCells).
    const own = p.metric === BUDGET_SHARE.key;
    if (!own && j.worst.length && wantShares(p, { failCount: j.failCount, totalCount: j.totalCount })) {
      const devices = paths[i] === "devices";
      const window = devices ? [p.window.from, p.window.to] : [];
      const key = JSON.stringify([p.projectId, p.mapId, ...window]);
      shareGroups.set(key, [...(shareGroups.get(key) ?? []), p]);
      if (devices) {
        withDevices.add(key);
      }
    }
  });
  await inRounds([...shareGroups], READS_AT_ONCE, async ([key, ps]) => {
    const worst = (p: PairQuery) => (judged.get(p.key) as CellJudgement).worst;
    const shares = await failingShares(ch, ps, worst, withDevices.has(key));
    ps.forEach((p, i) => {
      const j = judged.get(p.key) as CellJudgement;
      judged.set(p.key, { ...j, worst: shares[i] ?? j.worst });
    });
  });
  return judged;
}

/**
 * Cells whose mean metric is worse than the threshold, out of the cells holding at least one sample of
 * that metric, and the worst of the failing ones in the same pass: the worst mean first (lowest fps,
 * highest time or memory, i.e. farthest beyond the threshold), then more samples, then the lower x,
 * then the lower y, so the order is total and the same on every run.
 */
export function judgeCells(
  cells: CellMeans[],
  metric: AlertMetricKey,
  threshold: number,
  cellSize: number,
): CellJudgement {
  const m = ALERT_METRIC[metric];
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
      // few worst cells kept. A budget share's failing samples are its heartbeats over budget: 1 − v.
      const n = c.samples[metric];
      const failingShare = metric === BUDGET_SHARE.key ? (n - Math.round(v * n)) / n : 0;
      failing.push({ x: c.x, y: c.y, cellSize, value: v, samples: n, failingShare });
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
  const judged = await judgeScopeGroup(ch, [{ ...q, key: "" }]);
  return judged.get("") as CellJudgement;
}

/**
 * The worst cells of pairs sharing a project and map (and window, with `devices`), each with the share
 * of its samples worse than its pair's threshold, in one statement over telemetry.cell_samples. Its key
 * is the map and base cell of 50 (every cell size divides 50), so the read is the worst cells' base
 * cells of the longest window, not the map's samples; each sample then meets, through a hash join on
 * (cell size, cell), the pairs whose worst cells hold it, and is counted for those whose window holds
 * it and whose filters it passes. Exact: the samples the cell means were taken over, compared one by
 * one (equal passes), as a count over a count.
 */
async function failingShares(
  ch: ClickHouseClient,
  pairs: PairQuery[],
  worstOf: (p: PairQuery) => WorstCell[],
  devices: boolean,
): Promise<WorstCell[][]> {
  const first = pairs[0];
  if (!first) {
    return [];
  }
  // The worst cells, base cells and thresholds are numbers the evaluation made (finite, checked) and
  // go into the statement as literals: a call's hundreds of cells would not fit a URL's parameters.
  // Profile filters are text and bound, once per distinct profile.
  const from = pairs.map((p) => p.window).reduce((a, b) => (a.fromMs <= b.fromMs ? a : b));
  const to = pairs.map((p) => p.window).reduce((a, b) => (a.toMs >= b.toMs ? a : b));
  const params: Record<string, unknown> = mapWindowParams({
    ...first,
    window: { ...from, to: to.to, toMs: to.toMs },
  });
  // Per pair k its window, bound once per distinct window.
  const windows = new Map<string, number>();
  const windowOf: number[] = [];
  const items: string[] = [];
  const bases = new Set<string>();
  const sizes = new Set<number>();
  const profiles = new Map<string, string>();
  // Per pair k (1-based in SQL): its profile, metric (METRICS' order) and threshold.
  const profileOf: number[] = [];
  const metricOf: number[] = [];
  const thresholdOf: string[] = [];
  pairs.forEach((p, k) => {
    sizes.add(p.cellSize);
    for (const c of worstOf(p)) {
      items.push(`(${k + 1}, ${literal(p.cellSize)}, ${literal(c.x)}, ${literal(c.y)})`);
      bases.add(`(${literal(Math.floor(c.x / BASE_CELL))}, ${literal(Math.floor(c.y / BASE_CELL))})`);
    }
    const fk = filterKey(p.filters);
    if (!profiles.has(fk)) {
      profiles.set(fk, filterSql(p.filters, profiles.size, params));
    }
    profileOf.push([...profiles.keys()].indexOf(fk) + 1);
    metricOf.push(METRICS.findIndex((m) => m.key === p.metric));
    thresholdOf.push(literal(p.threshold));
    const wk = `${p.window.from} ${p.window.to}`;
    if (!windows.has(wk)) {
      params[`w${windows.size}_from`] = p.window.from;
      params[`w${windows.size}_to`] = p.window.to;
      windows.set(wk, windows.size);
    }
    windowOf.push((windows.get(wk) as number) + 1);
  });
  const bound = (edge: "from" | "to") =>
    `[${[...windows.values()].map((w) => `{w${w}_${edge}:DateTime64(6, 'UTC')}`).join(", ")}]`;
  // A sample's value of the pair's metric, exactly (Float32 to Float64 is exact; memory is Float64).
  const value = `multiIf(${METRICS.map((m, i) => `m = ${i}, toFloat64(${m.column})`).join(", ")}, NULL)`;
  const worse = `multiIf(${METRICS.map((m, i) => `m = ${i}, v ${worseOp(m)} thr`).join(", ")}, 0)`;
  const where = `${SAMPLES_SCOPE} AND (bx, by) IN (${[...bases].join(", ")})`;
  const rows = await selectRows(
    ch,
    `
    SELECT k, cx, cy, countIf(${worse}) AS failing, count(v) AS samples
    FROM (
      SELECT k, cx, cy,
        [${metricOf.join(", ")}]::Array(UInt8)[k] AS m,
        [${thresholdOf.join(", ")}]::Array(Float64)[k] AS thr,
        ${value} AS v,
        passes[[${profileOf.join(", ")}]::Array(UInt32)[k]] AS passing,
        [${windowOf.join(", ")}]::Array(UInt32)[k] AS w,
        timestamp >= ${bound("from")}[w] AND timestamp < ${bound("to")}[w] AS within
      FROM (
        SELECT size, floor(position_x / size) * size AS cx, floor(position_y / size) * size AS cy,
          timestamp,
          [${[...profiles.values()].join(", ")}] AS passes,
          ${METRICS.map((m) => m.column).join(", ")}
        FROM ${samplesOf(where, devices)}
        ARRAY JOIN [${[...sizes].map(literal).join(", ")}]::Array(UInt8) AS size
        WHERE ${where} AND (${[...profiles.values()].join(" OR ")})
      ) AS s
      INNER JOIN (
        SELECT t.1 AS k, t.2 AS size, t.3 AS cx, t.4 AS cy
        FROM (SELECT arrayJoin([${items.join(", ")}]::Array(Tuple(UInt32, UInt8, Float64, Float64))) AS t)
      ) AS i USING (size, cx, cy)
    )
    WHERE passing AND within
    GROUP BY k, cx, cy`,
    params,
    { k: "unknown", cx: "unknown", cy: "unknown", failing: "unknown", samples: "unknown" },
  );
  const shares = new Map(
    rows.map((r) => [
      `${Number(r.k)},${Number(r.cx)},${Number(r.cy)}`,
      Number(r.failing) / Math.max(1, Number(r.samples)),
    ]),
  );
  return pairs.map((p, k) =>
    worstOf(p).map((c) => ({ ...c, failingShare: shares.get(`${k + 1},${c.x},${c.y}`) ?? 0 })),
  );
}

/** `fn` over `items`, `limit` at a time (in rounds: the statements of a call are few). */
async function inRounds<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += limit) {
    await Promise.all(items.slice(i, i + limit).map(fn));
  }
}

/** A number the evaluation computed, as an SQL literal (JavaScript's shortest round-trip form). */
function literal(n: number): string {
  if (!Number.isFinite(n)) {
    throw new Error(`not a finite number: ${n}`);
  }
  return String(n);
}

function finite(v: unknown): number | null {
  if (v === null || v === undefined) {
    return null;
  }
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}
