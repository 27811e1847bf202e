// The peer of each analytics endpoint: the plain SQL over telemetry.events that answers the same
// question, as a team wiring ClickHouse by hand would write it (one GROUP BY over the project's events
// of the window, exact distinct counts over the strings, no rollup), and each side's answer in one
// comparable form, so that the benchmark can check both give the same answer before it compares what
// they read (docs/benchmarks.md, "bench:analytics").
import type { ClickHouseClient } from "@clickhouse/client-web";
import type { Build } from "../../workers/api/analytics/builds.js";
import type { CellDrilldown } from "../../workers/api/analytics/cell.js";
import { COMPARE_METRICS, type CompareQuery, type Comparison } from "../../workers/api/analytics/compare.js";
import type { DashboardDistincts, DashboardTotals } from "../../workers/api/analytics/dashboard.js";
import type { FunnelStep } from "../../workers/api/analytics/funnels.js";
import {
  type HeatmapCell,
  type HeatmapQuery,
  heatmapEventsSql,
} from "../../workers/api/analytics/heatmap.js";
import type { InsightGroup } from "../../workers/api/analytics/insights.js";
import { rawPercentile } from "../../workers/api/analytics/percentiles.js";
import type { RetentionCohort } from "../../workers/api/analytics/player-retention.js";
import type { EventKpis } from "../../workers/api/analytics/project-status.js";
import { num, pct, selectRows } from "../../workers/api/analytics/select.js";
import { addDays, chTime, DAY_MS, type Window } from "../../workers/api/window.js";
import { CH_CELL_SAMPLES, CH_EVENTS } from "../../workers/shared/clickhouse.js";

/** An answer in comparable form: numbers, strings, nulls, arrays and records of them. */
export type Answer = unknown;

const EVENTS = `${CH_EVENTS} WHERE project_id = {projectId:UUID}`;
const WINDOW = "timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}";
const TS = (expr: string) => `formatDateTime(${expr}, '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC')`;

const rows = (ch: ClickHouseClient, sql: string, params: Record<string, unknown>) =>
  selectRows(ch, sql, params, {}) as Promise<Array<Record<string, unknown>>>;

/** A number, or null where there is none (NULL, NaN): both sides' "no sample". */
const orNull = (v: unknown) =>
  v === null || v === undefined || !Number.isFinite(Number(v)) ? null : Number(v);

// dashboard ------------------------------------------------------------------------------------------

export function dashboardOurs([d, t]: [DashboardDistincts, DashboardTotals]): Answer {
  return {
    mau: d.mau,
    sessions: d.sessions,
    days: d.dailyActiveUsers.map((x) => [x.date, x.count]),
    dau: d.dau,
    events: t.events,
    top: t.topEvents.map((x) => [x.event_name, x.count]),
  };
}

export async function dashboardPlain(ch: ClickHouseClient, projectId: string, w: Window, nowMs: number) {
  const params = {
    projectId,
    from: w.from,
    to: w.to,
    lo: chTime(Math.min(w.fromMs, nowMs - 30 * DAY_MS)),
    month: chTime(nowMs - 30 * DAY_MS),
    day: chTime(nowMs - DAY_MS),
    now: chTime(nowMs),
  };
  const at = (p: string) => `{${p}:DateTime64(6, 'UTC')}`;
  const [[totals], days, top] = await Promise.all([
    rows(
      ch,
      `SELECT uniqExactIf(player, timestamp >= ${at("month")} AND timestamp <= ${at("now")}) AS mau,
        uniqExactIf(player, timestamp >= ${at("day")} AND timestamp <= ${at("now")}) AS dau,
        uniqExactIf(session_id, ${WINDOW}) AS sessions,
        countIf(${WINDOW}) AS events
      FROM ${EVENTS} AND timestamp >= ${at("lo")} AND timestamp < greatest(${at("to")}, ${at("now")})`,
      params,
    ),
    rows(
      ch,
      `SELECT toString(toDate(timestamp)) AS date, uniqExact(player) AS players
      FROM ${EVENTS} AND ${WINDOW} GROUP BY date`,
      params,
    ),
    rows(
      ch,
      `SELECT toString(event_name) AS name, count() AS events FROM ${EVENTS} AND ${WINDOW}
      GROUP BY name ORDER BY events DESC, name ASC LIMIT 10`,
      params,
    ),
  ]);
  const perDay = new Map(days.map((r) => [String(r.date), num(r.players)]));
  return {
    mau: num(totals?.mau),
    sessions: num(totals?.sessions),
    days: w.dates.map((date) => [date, perDay.get(date) ?? 0]),
    dau: num(totals?.dau),
    events: num(totals?.events),
    top: top.map((r) => [String(r.name), num(r.events)]),
  };
}

// heatmap --------------------------------------------------------------------------------------------

const HEAT_FIELDS = [
  "event_count",
  "avg_fps",
  "avg_frame_time",
  "avg_memory",
  "avg_gpu_time",
  "avg_mem_vram",
];
const TAIL_FIELDS = ["p05_fps", "p95_frame_time", "max_memory", "p95_gpu_time", "p95_mem_vram"];

/** Cells as [x, y, fields…]; an average without samples is null on both sides (ours answers 0). */
export function heatmapOurs(cells: HeatmapCell[], tails: boolean): Answer {
  const fields = tails ? [...HEAT_FIELDS, ...TAIL_FIELDS] : HEAT_FIELDS;
  return cells.map((c) => [
    c.x,
    c.y,
    ...fields.map((f) => {
      const v = orNull((c as Record<string, unknown>)[f]);
      return f.startsWith("avg_") && v === 0 ? null : v;
    }),
  ]);
}

/** The events statement the heatmap itself runs off its rollup: it is the plain SQL of this question. */
export async function heatmapPlain(ch: ClickHouseClient, projectId: string, w: Window, q: HeatmapQuery) {
  const fields = q.tails ? [...HEAT_FIELDS, ...TAIL_FIELDS] : HEAT_FIELDS;
  const cells = await rows(ch, heatmapEventsSql(q), {
    projectId,
    from: w.from,
    to: w.to,
    mapId: q.mapId,
    cellSize: q.cellSize,
  });
  return cells.map((r) => [
    num(r.cx),
    num(r.cy),
    ...fields.map((f) => {
      const v = orNull(r[f]);
      return f.startsWith("avg_") && v === 0 ? null : v;
    }),
  ]);
}

// heatmap/cell ---------------------------------------------------------------------------------------

const PERF =
  "(ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0 OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)";

/**
 * The drill-down's own statements over the events instead of cell_samples: the project's
 * performance-bearing events of the map (the rows cell_samples copies), without the base-cell key.
 */
export function overEvents(ch: ClickHouseClient): ClickHouseClient {
  // cell_samples' io_read_time_ms and display_hz are the event's metrics (0035_cell_samples_frame_causes.sql).
  const io =
    "if(mapContains(metrics, 'io.read_time_ms'), metrics['io.read_time_ms'], NULL) AS io_read_time_ms";
  const hz =
    "if(mapContains(metrics, 'display.hz') AND metrics['display.hz'] > 0, metrics['display.hz'], NULL) AS display_hz";
  const events = `(SELECT *, player, memory_mb, ${io}, ${hz} FROM ${EVENTS} AND map_id = {mapId:String} AND ${PERF})`;
  return new Proxy(ch, {
    get(target, prop, receiver) {
      if (prop === "query") {
        return (params: Parameters<ClickHouseClient["query"]>[0]) => {
          const query = params.query
            .replaceAll(CH_CELL_SAMPLES, events)
            .replaceAll("AND bx = {bx:Int32} AND by = {by:Int32}", "");
          return target.query({ ...params, query });
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

export const cellOurs = (c: CellDrilldown): Answer => c;

// retention ------------------------------------------------------------------------------------------

export const retentionOurs = (cohorts: RetentionCohort[]): Answer =>
  cohorts.map((c) => [c.cohort_date, c.cohort_size, c.day1, c.day7, c.day30]);

export async function retentionPlain(ch: ClickHouseClient, projectId: string, w: Window) {
  const cohorts = await rows(
    ch,
    `SELECT toString(cohort) AS date, count() AS size,
      countIf(has(days, cohort + 1)) AS d1, countIf(has(days, cohort + 7)) AS d7, countIf(has(days, cohort + 30)) AS d30
    FROM (
      SELECT player, min(toDate(timestamp)) AS cohort, groupUniqArray(toDate(timestamp)) AS days
      FROM ${EVENTS} AND timestamp < {to:DateTime64(6, 'UTC')}
      GROUP BY player
      HAVING cohort >= toDate({from:DateTime64(6, 'UTC')})
    )
    GROUP BY cohort`,
    { projectId, from: w.from, to: w.to },
  );
  const byDate = new Map(cohorts.map((r) => [String(r.date), r]));
  return w.dates.map((date) => {
    const r = byDate.get(date);
    const size = num(r?.size);
    const rate = (n: number, k: string) => (addDays(date, n) >= w.today ? null : pct(num(r?.[k]), size));
    return [date, size, rate(1, "d1"), rate(7, "d7"), rate(30, "d30")];
  });
}

// funnels --------------------------------------------------------------------------------------------

export const funnelOurs = (steps: FunnelStep[]): Answer => steps.map((s) => s.count);

export async function funnelPlain(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  steps: string[],
  windowSeconds: number,
) {
  const levels = await rows(
    ch,
    `SELECT level, count() AS players FROM (
      SELECT windowFunnel({window:UInt64})(toUInt64(toUnixTimestamp64Micro(timestamp)), ${steps.map((_, i) => `event_name = {steps:Array(String)}[${i + 1}]`).join(", ")}) AS level
      FROM ${EVENTS} AND ${WINDOW} AND event_name IN {steps:Array(String)}
      GROUP BY player
    ) GROUP BY level`,
    { projectId, from: w.from, to: w.to, steps, window: windowSeconds * 1_000_000 },
  );
  return steps.map((_, i) => levels.reduce((n, r) => n + (num(r.level) > i ? num(r.players) : 0), 0));
}

// insights -------------------------------------------------------------------------------------------

export const insightsOurs = ([groups, total]: [InsightGroup[], number]): Answer => ({
  groups: groups.map((g) => [g.key, g.value]),
  total,
});

/** Unique players by day over the last `limit` days of the window, and over the whole window. */
export async function insightsPlain(ch: ClickHouseClient, projectId: string, w: Window, limit: number) {
  const dates = w.dates.slice(-limit);
  const [groups, [total]] = await Promise.all([
    rows(
      ch,
      `SELECT toString(toDate(timestamp)) AS key, uniqExact(player) AS value
      FROM ${EVENTS} AND timestamp >= {first:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}
      GROUP BY key`,
      { projectId, first: `${dates[0]} 00:00:00.000000`, to: w.to },
    ),
    rows(ch, `SELECT uniqExact(player) AS value FROM ${EVENTS} AND ${WINDOW}`, {
      projectId,
      from: w.from,
      to: w.to,
    }),
  ]);
  const byKey = new Map(groups.map((r) => [String(r.key), num(r.value)]));
  return { groups: dates.map((d) => [d, byKey.get(d) ?? 0]), total: num(total?.value) };
}

/** Unique players by a dimension (its top `limit` values, ties by value), and over the whole window. */
export async function insightsByPlain(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  limit: number,
  column: "map_id" | "event_name",
) {
  const params = { projectId, from: w.from, to: w.to, limit };
  const [groups, [total]] = await Promise.all([
    rows(
      ch,
      `SELECT toString(${column}) AS key, uniqExact(player) AS value
      FROM ${EVENTS} AND ${WINDOW}
      GROUP BY key
      ORDER BY value DESC, key ASC
      LIMIT {limit:UInt8}`,
      params,
    ),
    rows(ch, `SELECT uniqExact(player) AS value FROM ${EVENTS} AND ${WINDOW}`, params),
  ]);
  return { groups: groups.map((r) => [String(r.key), num(r.value)]), total: num(total?.value) };
}

// status -----------------------------------------------------------------------------------------------

export const statusOurs = (k: EventKpis): Answer => [k.events24h, k.players24h, k.totalEvents, k.lastEventAt];

/** The status KPIs from the events alone: the last 24 hours' events and players, every event, the last. */
export async function statusPlain(ch: ClickHouseClient, projectId: string, nowMs: number) {
  const [r] = await rows(
    ch,
    `SELECT countIf(timestamp > {day:DateTime64(6, 'UTC')} AND timestamp <= {now:DateTime64(6, 'UTC')}) AS events24h,
      uniqExactIf(player, timestamp > {day:DateTime64(6, 'UTC')} AND timestamp <= {now:DateTime64(6, 'UTC')}) AS players24h,
      count() AS total,
      if(total = 0, NULL, formatDateTime(max(timestamp), '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC')) AS last
    FROM ${EVENTS}`,
    { projectId, day: chTime(nowMs - DAY_MS), now: chTime(nowMs) },
  );
  return [num(r?.events24h), num(r?.players24h), num(r?.total), (r?.last as string | null) ?? null];
}

// builds ---------------------------------------------------------------------------------------------

export const buildsOurs = (builds: Build[]): Answer =>
  builds.map((b) => [b.build_id, b.first_seen, b.last_seen, b.event_count, b.session_count, b.player_count]);

export async function buildsPlain(ch: ClickHouseClient, projectId: string, w: Window) {
  const builds = await rows(
    ch,
    `SELECT toString(build_id) AS build, ${TS("min(timestamp)")} AS first, ${TS("max(timestamp)")} AS last,
      count() AS events, uniqExact(session_id) AS sessions, uniqExact(player) AS players
    FROM ${EVENTS} AND ${WINDOW} AND has_perf AND build_id != ''
    GROUP BY build_id
    ORDER BY min(timestamp) DESC, build ASC
    LIMIT 50`,
    { projectId, from: w.from, to: w.to },
  );
  return builds.map((r) => [
    String(r.build),
    String(r.first),
    String(r.last),
    num(r.events),
    num(r.sessions),
    num(r.players),
  ]);
}

// builds/compare -------------------------------------------------------------------------------------

/** Each compared metric's sample, as compare_rollup defines it (0028_compare_rollup.sql), in COMPARE_METRICS order. */
const COMPARE_SAMPLES = [
  "toNullable(toFloat64(frame_time_ms))",
  "memory_used_bytes / 1048576",
  "toNullable(toFloat64(gpu_time_ms))",
  ...["io.read_bytes", "io.read_time_ms", "io.read_ops", "load_time_ms"].map(
    (k) => `if(mapContains(metrics, '${k}'), metrics['${k}'], NULL)`,
  ),
  "if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL)",
];

export const compareOurs = (c: Comparison): Answer =>
  [c.baseline, c.candidate].map((b, side) => [
    b.event_count,
    b.session_count,
    b.player_count,
    b.first_seen,
    b.last_seen,
    ...c.diffs.flatMap((d) =>
      side === 0
        ? [d.baselineSamples, d.baselineP50, d.baselineTail]
        : [d.candidateSamples, d.candidateP50, d.candidateTail],
    ),
  ]);

export async function comparePlain(ch: ClickHouseClient, projectId: string, w: Window, q: CompareQuery) {
  const values = COMPARE_SAMPLES.map((s, i) => `${s} AS v${i}`).join(", ");
  const perMetric = COMPARE_METRICS.map(
    (_, i) =>
      `count(v${i}) AS n${i}, ${rawPercentile(0.5, `v${i}`)} AS p${i}, ${rawPercentile(0.95, `v${i}`)} AS t${i}`,
  ).join(",\n      ");
  const builds = await rows(
    ch,
    `SELECT toString(build_id) AS build, count() AS events, uniqExact(session_id) AS sessions,
      uniqExact(player) AS players, ${TS("min(timestamp)")} AS first, ${TS("max(timestamp)")} AS last,
      ${perMetric}
    FROM (
      SELECT build_id, timestamp, session_id, player, ${values}
      FROM ${EVENTS} AND ${WINDOW} AND build_id IN ({baseline:String}, {candidate:String})
    )
    WHERE ${COMPARE_METRICS.map((_, i) => `isNotNull(v${i})`).join(" OR ")}
    GROUP BY build_id`,
    { projectId, from: w.from, to: w.to, baseline: q.baseline, candidate: q.candidate },
  );
  return [q.baseline, q.candidate].map((id) => {
    const r = builds.find((b) => b.build === id);
    return [
      num(r?.events),
      num(r?.sessions),
      num(r?.players),
      r ? String(r.first) : null,
      r ? String(r.last) : null,
      ...COMPARE_METRICS.flatMap((_, i) => {
        const n = num(r?.[`n${i}`]);
        return [n, n ? orNull(r?.[`p${i}`]) : null, n ? orNull(r?.[`t${i}`]) : null];
      }),
    ];
  });
}

// comparing ------------------------------------------------------------------------------------------

/**
 * Where two answers differ ("" when they agree): numbers within `relative` of each other (sums
 * in another order differ in their last bits; the builds list's sketches are within 1 %), the rest equal.
 */
export function difference(ours: Answer, plain: Answer, relative: number, at = ""): string {
  if (typeof ours === "number" && typeof plain === "number") {
    const scale = Math.max(1, Math.abs(ours), Math.abs(plain));
    return Math.abs(ours - plain) <= relative * scale ? "" : `${at || "."}: ${ours} ≠ ${plain}`;
  }
  if (Array.isArray(ours) && Array.isArray(plain)) {
    if (ours.length !== plain.length) {
      return `${at || "."}: ${ours.length} items ≠ ${plain.length}`;
    }
    for (let i = 0; i < ours.length; i++) {
      const d = difference(ours[i], plain[i], relative, `${at}[${i}]`);
      if (d) {
        return d;
      }
    }
    return "";
  }
  if (ours && plain && typeof ours === "object" && typeof plain === "object") {
    const keys = new Set([...Object.keys(ours), ...Object.keys(plain)]);
    for (const k of keys) {
      const d = difference(
        (ours as Record<string, unknown>)[k],
        (plain as Record<string, unknown>)[k],
        relative,
        `${at}.${k}`,
      );
      if (d) {
        return d;
      }
    }
    return "";
  }
  return ours === plain ? "" : `${at || "."}: ${JSON.stringify(ours)} ≠ ${JSON.stringify(plain)}`;
}
