import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_CELL_SAMPLES } from "../../shared/clickhouse.js";
import {
  METRIC,
  METRIC_KEYS,
  METRICS,
  type MetricKey,
  type ProfileField,
  worseOp,
} from "../../shared/telemetry/metrics.js";
import type { Window } from "../window.js";
import { CELL_SAMPLE_DEVICE_COLUMNS, withSessionDevices } from "./device.js";
import {
  BOUNDS,
  type Bound,
  boundCodeSql,
  boundCounts,
  HITCH_JUDGED,
  IS_HITCH,
  MAX_HEARTBEAT_GAP_MS,
  OVER_BUDGET,
  redMark,
  type SlowBasis,
  sessionTypicalFrames,
  slowBasis,
  slowSql,
} from "./frame-causes.js";
import { quantized } from "./percentiles.js";
import { byText, num, pct, selectRows } from "./select.js";

// One heatmap cell in depth: what its frame rate looks like, for whom it is bad, the sessions that
// suffered most there, and where and how to stand to reproduce it. Reads telemetry.cell_samples
// (0005_cell_samples.sql), ordered by map and base cell of 50, so its one statement (cellRows) reads the
// cell's base cell of the window only (a few granules), whatever the size of the project. No SELECT alias repeats a
// column name: ClickHouse would put the alias in place of the column in WHERE too.

// The metrics, their sample columns, directions and histogram edges: the metric table
// (workers/shared/telemetry/metrics.ts).

/** The base cell of telemetry.cell_samples: every heatmap cell size divides it. */
export const BASE_CELL = 50;

export const BREAKDOWN_DIMENSIONS = [
  "build_id",
  "platform",
  "engine_version",
  "gpu",
  "device_model",
  "resolution",
  "os_version",
] as const;
export type BreakdownDimension = (typeof BREAKDOWN_DIMENSIONS)[number];

/** Groups kept per breakdown dimension (worst first). */
export const BREAKDOWN_LIMIT = 20;
export const WORST_SESSIONS = 10;

/** A threshold profile's marks, as the heatmap and alert evaluation read them. */
export type ProfileMarks = { id: string; name: string } & Record<
  MetricKey,
  { good: number | null; warn: number | null }
>;

/** The marks of a threshold profile (a threshold_profiles row: its fields named in the metric table). */
export function profileMarks(
  p: { id: string; name: string } & Record<ProfileField, number | null>,
): ProfileMarks {
  const marks = Object.fromEntries(
    METRICS.map((m) => [m.key, { good: p[m.profile.good], warn: p[m.profile.warn] }]),
  ) as Record<MetricKey, { good: number | null; warn: number | null }>;
  return { id: p.id, name: p.name, ...marks };
}

export type CellQuery = {
  /** The user's map identifier, as events carry it. */
  mapId: string;
  cellSize: number;
  x: number;
  y: number;
  /** A 3-D cell (the heatmap with includeZ): only the samples with a height in [z, z + cellSize). */
  z?: number;
  buildId?: string;
  platform?: string;
  /** The metric whose tail makes the worst samples (repro) and whose profile marks make "failing". */
  metric: MetricKey;
  profile?: ProfileMarks;
};

export type Distribution = {
  samples: number;
  mean: number | null;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  /** The low tail (fps: the heatmap's p05_fps) and the exact maximum (memory: its max_memory). */
  p05: number | null;
  max: number | null;
  edges: number[];
  counts: number[];
};

export type BreakdownGroup = {
  key: string | null;
  samples: number;
  meanFps: number | null;
  p95FrameTime: number | null;
  failingPct: number | null;
  /** The group's slow heartbeats (the drill-down's `why.basis`) and what bounds their frames. */
  slow: number;
  bounds: Record<Bound, number>;
  /** Heartbeats judged for hitches (a frame time and a session median) and the hitches among them. */
  hitchJudged: number;
  hitches: number;
  hitchesPerMinute: number | null;
};

/** Heartbeats judged for hitches, and the hitches among them. */
export type HitchCount = { judged: number; hitches: number; pct: number | null };

/** Why the cell is slow: what bounds its slow heartbeats' frames, and its hitches (frame-causes.ts). */
export type CellWhy = SlowBasis & {
  heartbeats: number;
  slow: number;
  bounds: Array<{ bound: Bound; slow: number; pct: number | null }>;
  hitches: HitchCount & {
    /** The median gap between a session's consecutive heartbeats in the cell (at most a minute), ms. */
    heartbeatIntervalMs: number | null;
    minutesPlayed: number | null;
    perMinute: number | null;
    /** Each session's first heartbeat in the cell, against its later ones. */
    firstVisit: HitchCount;
    laterVisits: HitchCount;
  };
};

export type Device = {
  gpu: string | null;
  deviceModel: string | null;
  resolution: string | null;
  osVersion: string | null;
};

export type WorstSession = {
  sessionId: string;
  player: string;
  buildId: string;
  platform: string;
  device: Device | null;
  samples: number;
  p95FrameTime: number | null;
  p05Fps: number | null;
  firstSeen: string;
  lastSeen: string;
};

export type CellDrilldown = {
  mapId: string;
  cellSize: number;
  x: number;
  y: number;
  z?: number;
  metric: MetricKey;
  samples: number;
  sessions: number;
  players: number;
  firstSeen: string | null;
  lastSeen: string | null;
  distributions: Record<MetricKey, Distribution>;
  profile: {
    id: string;
    name: string;
    marks: Array<{
      metric: MetricKey;
      good: number | null;
      warn: number | null;
      samples: number;
      failingGoodPct: number | null;
      failingWarnPct: number | null;
    }>;
  } | null;
  breakdowns: Record<BreakdownDimension, BreakdownGroup[]>;
  why: CellWhy;
  worstSessions: WorstSession[];
  repro: {
    mapId: string;
    bounds: { minX: number; maxX: number; minY: number; maxY: number; minZ?: number; maxZ?: number };
    metric: MetricKey;
    worstSamples: number;
    threshold: number | null;
    position: { x: number; y: number; z: number | null } | null;
    camera: { yaw: number; pitch: number } | null;
    buildId: string | null;
    platform: string | null;
    device: Device | null;
    filters: { buildId: string | null; platform: string | null };
  };
};

/** The cell's rows: the primary key prunes to the base cell (bx, by) of the window; the rest is exact. */
function scope(q: CellQuery): string {
  const at = (v: string, p: string) => `floor(${v} / {cellSize:UInt8}) * {cellSize:UInt8} = {${p}:Float64}`;
  return `project_id = {projectId:UUID} AND map_id = {mapId:String}
      AND bx = {bx:Int32} AND by = {by:Int32}
      AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}
      AND ${at("position_x", "x")} AND ${at("position_y", "y")}
      ${q.z === undefined ? "" : `AND isNotNull(position_z) AND ${at("position_z", "z")}`}
      ${q.buildId === undefined ? "" : "AND build_id = {buildId:String}"}
      ${q.platform === undefined ? "" : "AND platform = {platform:String}"}`;
}

/** Whether a sample of `m` is worse than `mark` (fps below it, the others above it; equal passes). */
const worse = (m: MetricKey, mark: string) => `${METRIC[m].column} ${worseOp(METRIC[m])} ${mark}`;

/**
 * The cell's samples with their effective device (their own, else their session's device_info:
 * device.ts), for the statements that group by device: breakdowns, worst sessions, the repro's device.
 */
const withDevices = (where: string) =>
  withSessionDevices(
    CH_CELL_SAMPLES,
    where,
    [...CELL_SAMPLE_DEVICE_COLUMNS, "memory_total_mb"],
    ["memory_mb"],
    undefined,
    true,
  );

/**
 * Each session's median frame time on the map over the window's days (frame-causes.ts
 * sessionTypicalFrames), for the sessions and builds of the cell's samples: the key of session_values
 * (project, build, day, map, session) keeps the read to the cell's builds' days of the map and, within
 * them, the granules holding the cell's sessions. Cost: a busy cell's sessions are spread over every
 * granule of the map's days, so this join reads the map's rows of the window (2.06M rows and 169 MB of
 * frame-time states for the busiest cell at 100M events, docs/benchmarks.md): bounded by the map's
 * days, never by the project.
 */
const cellTypicalFrames = (where: string) =>
  sessionTypicalFrames(`build_id IN (SELECT build_id FROM ${CH_CELL_SAMPLES} WHERE ${where})
        AND session IN (SELECT cityHash64(session_id) FROM ${CH_CELL_SAMPLES} WHERE ${where})`);

/** The profile mark a sample must pass not to count as failing: warn, or good where warn is unset (the heatmap's red). */
function failMark(q: CellQuery): number | null {
  return redMark(q.profile?.[q.metric]);
}

const FORMAT_TS = (expr: string) => `formatDateTime(${expr}, '%Y-%m-%dT%H:%i:%S.%fZ')`;

/** The WHERE every statement of the drill-down shares, and its parameters (the benchmark EXPLAINs it). */
export function cellScope(projectId: string, w: Window, q: CellQuery) {
  const mark = failMark(q);
  const slow = slowBasis(q.profile);
  const params = {
    slowMark: slow.threshold ?? 0,
    projectId,
    from: w.from,
    to: w.to,
    retainedFrom: w.retainedFrom,
    mapId: q.mapId,
    cellSize: q.cellSize,
    x: q.x,
    y: q.y,
    z: q.z,
    bx: Math.floor(q.x / BASE_CELL),
    by: Math.floor(q.y / BASE_CELL),
    buildId: q.buildId,
    platform: q.platform,
    mark: mark ?? 0,
    ...Object.fromEntries(METRIC_KEYS.map((m) => [`${m}Edges`, METRIC[m].edges])),
    ...Object.fromEntries(
      METRIC_KEYS.flatMap((m) => [
        [`${m}Good`, q.profile?.[m].good ?? 0],
        [`${m}Warn`, q.profile?.[m].warn ?? 0],
      ]),
    ),
  };
  return { where: scope(q), params, mark, slow };
}

export async function cellDrilldown(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: CellQuery,
): Promise<CellDrilldown> {
  const scoped = cellScope(projectId, w, q);
  const { where, params, mark } = scoped;
  const rows = await cellRows(ch, where, params, q, scoped.slow);
  const summary = (rows.find((r) => num(r.role) === ROLE.summary) ?? {}) as Record<string, unknown>;
  // Without a profile mark, the display's budget judges where the cell's heartbeats carry a refresh
  // rate: the statement counted both (the `_b` columns are the budget's).
  const byBudget = scoped.slow.basis === "all" && num(summary.budget_n) > 0;
  const slow: SlowBasis = byBudget ? { basis: "budget", threshold: null } : scoped.slow;
  const total = num(summary.samples);
  const distributions = Object.fromEntries(
    METRIC_KEYS.map((m) => {
      const [keys, sums] = (summary[`${m}_hist`] as [unknown[], unknown[]] | undefined) ?? [[], []];
      const { edges } = METRIC[m];
      const counts = new Array<number>(edges.length + 1).fill(0);
      keys.forEach((k, i) => {
        counts[num(k)] = num(sums[i]);
      });
      const n = num(summary[`${m}_n`]);
      const levels = levelsOf(summary, m);
      return [
        m,
        {
          samples: n,
          mean: n ? orNull(summary[`${m}_mean`]) : null,
          p50: levels.p50,
          p95: levels.p95,
          p99: levels.p99,
          p05: levels.p05,
          max: n ? orNull(summary[`${m}_max`]) : null,
          edges: [...edges],
          counts,
        },
      ];
    }),
  ) as Record<MetricKey, Distribution>;
  const bounds = {
    minX: q.x,
    maxX: q.x + q.cellSize,
    minY: q.y,
    maxY: q.y + q.cellSize,
    ...(q.z === undefined ? {} : { minZ: q.z, maxZ: q.z + q.cellSize }),
  };
  const repro = reproOf(rows, q, summary);
  return {
    mapId: q.mapId,
    cellSize: q.cellSize,
    x: q.x,
    y: q.y,
    ...(q.z === undefined ? {} : { z: q.z }),
    metric: q.metric,
    samples: total,
    sessions: num(summary.sessions),
    players: num(summary.players),
    firstSeen: total ? String(summary.first_seen) : null,
    lastSeen: total ? String(summary.last_seen) : null,
    distributions,
    profile: q.profile
      ? {
          id: q.profile.id,
          name: q.profile.name,
          marks: METRIC_KEYS.filter((m) => q.profile?.[m].good !== null || q.profile?.[m].warn !== null).map(
            (m) => {
              const marks = q.profile?.[m] ?? { good: null, warn: null };
              const n = num(summary[`${m}_n`]);
              const share = (failing: unknown, set: number | null) =>
                set === null || n === 0 ? null : pct(num(failing), n);
              return {
                metric: m,
                good: marks.good,
                warn: marks.warn,
                samples: n,
                failingGoodPct: share(summary[`${m}_fail_good`], marks.good),
                failingWarnPct: share(summary[`${m}_fail_warn`], marks.warn),
              };
            },
          ),
        }
      : null,
    breakdowns: breakdownsOf(rows, mark, intervalOf(summary), byBudget),
    why: whyOf(summary, slow, byBudget),
    worstSessions: worstSessionsOf(rows),
    repro: {
      mapId: q.mapId,
      bounds,
      metric: q.metric,
      worstSamples: repro.worstSamples,
      threshold: repro.threshold,
      position: repro.position,
      camera: repro.camera,
      buildId: repro.buildId,
      platform: repro.platform,
      device: repro.device,
      filters: { buildId: q.buildId ?? null, platform: q.platform ?? null },
    },
  };
}

/**
 * What each row of the drill-down's statement is (its `role`) and what its `key` holds: the summary
 * (no key), one breakdown dimension each (the group's value), a session (its id), the worst samples by
 * build, platform and device (those six values), and the worst samples together (no key).
 */
const ROLE = {
  summary: 0,
  breakdown: 1,
  session: 1 + BREAKDOWN_DIMENSIONS.length,
  tailGroup: 2 + BREAKDOWN_DIMENSIONS.length,
  tail: 3 + BREAKDOWN_DIMENSIONS.length,
} as const;

/** The device columns of the repro's groups, after its build and platform. */
const TAIL_GROUP = ["build_id", "platform", ...CELL_SAMPLE_DEVICE_COLUMNS] as const;

/** The summary's percentile levels of each metric, in the order of its `<metric>_levels` array. */
const SUMMARY_LEVELS = [0.05, 0.5, 0.95, 0.99] as const;

/** A metric's p05, p50, p95 and p99 from the summary row: null each without a sample. */
function levelsOf(summary: Record<string, unknown>, m: MetricKey) {
  const levels = num(summary[`${m}_n`]) ? ((summary[`${m}_levels`] ?? []) as unknown[]) : [];
  return { p05: orNull(levels[0]), p50: orNull(levels[1]), p95: orNull(levels[2]), p99: orNull(levels[3]) };
}

/** The columns the drill-down reads of each sample (the window keeps them, not every column). */
const CELL_COLUMNS = [
  "session_id",
  "player",
  "timestamp",
  ...new Set([...BREAKDOWN_DIMENSIONS, ...TAIL_GROUP]),
  ...METRIC_KEYS.map((m) => METRIC[m].column),
  "position_x",
  "position_y",
  "position_z",
  "camera_yaw",
  "camera_pitch",
];

/**
 * The whole drill-down in one statement over one read of the cell's rows (with their effective device:
 * withDevices). Each sample is counted once per role (ARRAY JOIN, as the breakdowns always were), and
 * every aggregate keeps to its role (-If), so each computes exactly what its statement of its own did:
 * the summary (counts, each metric's mean, percentiles, histogram and profile failing counts), per
 * breakdown dimension and value its samples, mean fps, p95 frame time and failing share of `metric`,
 * per session its samples, p95 frame time, p05 fps, first and last time and its last build and device,
 * and the worst samples of `metric` (repro). The worst samples are those quantized at or beyond the
 * summary's own percentile (p05 for fps, p95 for the others), which a window over the cell's rows gives
 * every row before the roles are formed. Only the 10 worst sessions leave ClickHouse (row_number per
 * role).
 *
 * Cost: the base cell's granules of the window once (the primary key: project, map, bx, by, day), plus
 * its session hashes once more and those sessions' device_info rows for the device join (narrow); the
 * roles multiply the rows aggregated by 9 (and the worst samples by 11), not the rows read. On a cell of
 * a few thousand samples most of its CPU is ClickHouse analysing the statement (about 100 ms of CPU in
 * chdb), still less than the five statements it replaced spent together. The `why` adds per sample its
 * bound, slow and hitch flags and its visit (window functions per session over the cell's samples), and
 * one join: the sessions' median frame times (sessionTypicalFrames), which is most of the rows read.
 */
async function cellRows(
  ch: ClickHouseClient,
  where: string,
  params: Record<string, unknown>,
  q: CellQuery,
  slow: SlowBasis,
): Promise<Record<string, unknown>[]> {
  const { column: c, better } = METRIC[q.metric];
  const tailLevel = better === "higher" ? 0.05 : 0.95;
  // qv_<metric>: the sample's quantized value (percentiles.ts; null without a sample), computed once
  // per sample for every percentile below.
  const isTail = `isNotNull(qv_${q.metric}) AND qv_${q.metric} ${better === "higher" ? "<=" : ">="} tail_at`;
  const roleIs = (role: number) => `role = ${role}`;
  const summary = roleIs(ROLE.summary);
  const breakdown = `role BETWEEN ${ROLE.breakdown} AND ${ROLE.breakdown + BREAKDOWN_DIMENSIONS.length - 1}`;
  const session = roleIs(ROLE.session);
  const tail = roleIs(ROLE.tail);
  // Without a profile mark the display's budget may judge instead (cellDrilldown picks it when the cell's
  // heartbeats carry a refresh rate): its counts (`_b`) come only then.
  const budget = slow.basis === "all";
  const budgetFlags = budget
    ? `
          ${OVER_BUDGET} AS over_budget,
          isNotNull(display_hz) AS has_hz,`
    : "";
  const budgetColumns = budget
    ? `
        countIf(has_hz AND ${summary}) AS budget_n,
        countIf(over_budget AND ${summary}) AS why_slow_b,
        sumMapIf([bound_code], [toUInt64(1)], over_budget AND ${summary}) AS why_bounds_b,
        countIf(over_budget AND ${breakdown}) AS b_slow_b,
        sumMapIf([bound_code], [toUInt64(1)], over_budget AND ${breakdown}) AS b_bounds_b,`
    : "";
  const percentileIf = (level: number, m: MetricKey, cond: string) =>
    `quantileExactWeightedIf(${level})(qv_${m}, toUInt8(1), ${cond})`;
  const perSample = METRIC_KEYS.map((m) => {
    const mc = METRIC[m].column;
    // The bucket of a sample is the number of edges at or below it (0: below the first edge).
    return `if(isNull(${mc}), NULL, ${quantized(`toFloat64(assumeNotNull(${mc}))`)}) AS qv_${m},
          toUInt8(arraySum(arrayMap(e -> toFloat64(assumeNotNull(${mc})) >= e, {${m}Edges:Array(Float64)}))) AS bucket_${m}`;
  });
  // Each metric's p05, p50, p95 and p99 from one state (SUMMARY_LEVELS): the same nearest ranks as a
  // state per level.
  const perMetric = METRIC_KEYS.map((m) => {
    const mc = METRIC[m].column;
    return `countIf(isNotNull(${mc}) AND ${summary}) AS ${m}_n, avgIf(${mc}, ${summary}) AS ${m}_mean,
        quantilesExactWeightedIf(${SUMMARY_LEVELS.join(", ")})(qv_${m}, toUInt8(1), ${summary}) AS ${m}_levels,
        maxIf(toFloat64(${mc}), ${summary}) AS ${m}_max,
        sumMapIf([bucket_${m}], [toUInt64(1)], isNotNull(${mc}) AND ${summary}) AS ${m}_hist,
        countIf(${worse(m, `{${m}Good:Float64}`)} AND ${summary}) AS ${m}_fail_good,
        countIf(${worse(m, `{${m}Warn:Float64}`)} AND ${summary}) AS ${m}_fail_warn`;
  });
  const median = (v: string, cond: string) =>
    `quantileExactWeightedIf(0.5)(toFloat64(assumeNotNull(${v})), toUInt8(1), ${cond})`;
  const roles = [
    `(${ROLE.summary}, CAST([], 'Array(String)'))`,
    ...BREAKDOWN_DIMENSIONS.map((d, i) => `(${ROLE.breakdown + i}, [toString(${d})])`),
    `(${ROLE.session}, [toString(session_id)])`,
  ];
  const tailRoles = [
    `(${ROLE.tailGroup}, [${TAIL_GROUP.map((g) => `toString(${g})`).join(", ")}])`,
    `(${ROLE.tail}, CAST([], 'Array(String)'))`,
  ];
  return selectRows(
    ch,
    `SELECT * FROM (
      SELECT role, key,
        countIf(${summary}) AS samples,
        uniqExactIf(cityHash64(session_id), ${summary}) AS sessions,
        uniqExactIf(cityHash64(player), ${summary}) AS players,
        ${FORMAT_TS(`minIf(timestamp, ${summary})`)} AS first_seen,
        ${FORMAT_TS(`maxIf(timestamp, ${summary})`)} AS last_seen,
        ${perMetric.join(",\n        ")},
        countIf(is_slow AND ${summary}) AS why_slow,
        sumMapIf([bound_code], [toUInt64(1)], is_slow AND ${summary}) AS why_bounds,
${budgetColumns}
        countIf(hitch_judged AND ${summary}) AS h_judged, countIf(is_hitch AND ${summary}) AS h_hitches,
        countIf(hitch_judged AND first_visit AND ${summary}) AS h_first_judged,
        countIf(is_hitch AND first_visit AND ${summary}) AS h_first_hitches,
        quantileExactLowIf(0.5)(gap_ms, gap_ms <= ${MAX_HEARTBEAT_GAP_MS} AND ${summary}) AS h_interval,
        countIf(gap_ms <= ${MAX_HEARTBEAT_GAP_MS} AND ${summary}) AS h_gaps,
        countIf(is_slow AND ${breakdown}) AS b_slow,
        sumMapIf([bound_code], [toUInt64(1)], is_slow AND ${breakdown}) AS b_bounds,
        countIf(hitch_judged AND ${breakdown}) AS b_h_judged, countIf(is_hitch AND ${breakdown}) AS b_hitches,
        countIf(${breakdown}) AS b_samples, avgIf(fps, ${breakdown}) AS b_mean_fps,
        ${percentileIf(0.95, "frame_time", breakdown)} AS b_p95_frame_time,
        countIf(isNotNull(${c}) AND ${breakdown}) AS b_judged,
        countIf(${worse(q.metric, "{mark:Float64}")} AND ${breakdown}) AS b_failing,
        argMaxIf(player, timestamp, ${session}) AS s_player,
        toString(argMaxIf(build_id, timestamp, ${session})) AS s_build_id,
        toString(argMaxIf(platform, timestamp, ${session})) AS s_platform,
        toString(argMaxIf(gpu, timestamp, ${session})) AS s_gpu,
        toString(argMaxIf(device_model, timestamp, ${session})) AS s_device_model,
        toString(argMaxIf(resolution, timestamp, ${session})) AS s_resolution,
        toString(argMaxIf(os_version, timestamp, ${session})) AS s_os_version,
        countIf(${session}) AS s_samples,
        ${percentileIf(0.95, "frame_time", session)} AS s_p95_frame_time,
        ${percentileIf(0.05, "fps", session)} AS s_p05_fps,
        ${FORMAT_TS(`minIf(timestamp, ${session})`)} AS s_first_seen,
        ${FORMAT_TS(`maxIf(timestamp, ${session})`)} AS s_last_seen,
        countIf(${roleIs(ROLE.tailGroup)}) AS g_n,
        countIf(${tail}) AS worst,
        ${median("position_x", tail)} AS tail_x, ${median("position_y", tail)} AS tail_y,
        ${median("position_z", `isNotNull(position_z) AND ${tail}`)} AS tail_z,
        countIf(isNotNull(position_z) AND ${tail}) AS tail_z_n,
        groupArrayIf(toFloat64(assumeNotNull(camera_yaw)), isNotNull(camera_yaw) AND ${tail}) AS tail_yaws,
        ${median("camera_pitch", `isNotNull(camera_pitch) AND ${tail}`)} AS tail_pitch,
        countIf(isNotNull(camera_yaw) AND ${tail}) AS tail_camera_n,
        row_number() OVER (PARTITION BY role
          ORDER BY s_p95_frame_time DESC NULLS LAST, s_p05_fps ASC NULLS LAST, key) AS session_rank
      FROM (
        SELECT ${CELL_COLUMNS.join(", ")}, ${perSample.join(", ")},
          quantileExactWeighted(${tailLevel})(qv_${q.metric}, toUInt8(1)) OVER () AS tail_at,
          ${boundCodeSql("memory_total_mb")} AS bound_code,
          ${slowSql(slow)} AS is_slow,
${budgetFlags}
          ${HITCH_JUDGED("st_frame")} AS hitch_judged,
          ${IS_HITCH("st_frame")} AS is_hitch,
          row_number() OVER visits = 1 AS first_visit,
          if(first_visit, NULL, dateDiff('microsecond', lagInFrame(timestamp) OVER visits, timestamp) / 1000) AS gap_ms
        FROM ${withDevices(where)} AS c
        LEFT JOIN ${cellTypicalFrames(where)} AS st ON st.st_session = cityHash64(c.session_id)
        WHERE ${where}
        WINDOW visits AS (PARTITION BY session_id ORDER BY timestamp, batch_id, event_index
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
      )
      ARRAY JOIN arrayConcat([${roles.join(", ")}], if(ifNull(${isTail}, 0), [${tailRoles.join(", ")}], [])) AS rk
      GROUP BY rk.1 AS role, rk.2 AS key
    )
    WHERE role != ${ROLE.session} OR session_rank <= ${WORST_SESSIONS}`,
    params,
    { role: "unknown", key: "unknown" },
  ) as Promise<Record<string, unknown>[]>;
}

/**
 * Per dimension and value: samples, mean fps, p95 frame time, and the share of the samples carrying the
 * chosen metric that fail the profile's mark; worst first, BREAKDOWN_LIMIT per dimension.
 */
function breakdownsOf(
  rows: Record<string, unknown>[],
  mark: number | null,
  intervalMs: number | null,
  byBudget: boolean,
): Record<BreakdownDimension, BreakdownGroup[]> {
  const out = Object.fromEntries(BREAKDOWN_DIMENSIONS.map((d) => [d, [] as BreakdownGroup[]])) as Record<
    BreakdownDimension,
    BreakdownGroup[]
  >;
  for (const r of rows) {
    const dim = BREAKDOWN_DIMENSIONS[num(r.role) - ROLE.breakdown];
    if (dim === undefined || num(r.role) < ROLE.breakdown) {
      continue;
    }
    const key = String((r.key as unknown[])[0] ?? "");
    const judged = num(r.b_judged);
    out[dim].push({
      // '' is "not sent": the SDKs that send no device context, an event without a build id.
      key: key === "" ? null : key,
      samples: num(r.b_samples),
      meanFps: orNull(r.b_mean_fps),
      p95FrameTime: orNull(r.b_p95_frame_time),
      failingPct: mark === null || judged === 0 ? null : pct(num(r.b_failing), judged),
      slow: num(byBudget ? r.b_slow_b : r.b_slow),
      bounds: boundCounts(byBudget ? r.b_bounds_b : r.b_bounds),
      hitchJudged: num(r.b_h_judged),
      hitches: num(r.b_hitches),
      hitchesPerMinute: perMinute(num(r.b_hitches), num(r.b_h_judged), intervalMs),
    });
  }
  for (const d of BREAKDOWN_DIMENSIONS) {
    out[d] = out[d].sort(worstFirst).slice(0, BREAKDOWN_LIMIT);
  }
  return out;
}

/** The cell's heartbeat interval: the median gap between a session's consecutive heartbeats there. */
function intervalOf(summary: Record<string, unknown>): number | null {
  return num(summary.h_gaps) ? orNull(summary.h_interval) : null;
}

/**
 * Hitches per minute played: the judged heartbeats stand for `intervalMs` of play each (the SDKs send
 * one per interval), so the minutes played are judged × interval. Null without an interval or a
 * judged heartbeat.
 */
function perMinute(hitches: number, judged: number, intervalMs: number | null): number | null {
  const minutes = minutesOf(judged, intervalMs);
  return minutes === null ? null : Math.round((hitches / minutes) * 100) / 100;
}

const minutesOf = (judged: number, intervalMs: number | null) =>
  intervalMs === null || intervalMs <= 0 || judged === 0 ? null : (judged * intervalMs) / 60_000;

const hitchCount = (judged: number, hitches: number) => ({
  judged,
  hitches,
  pct: judged === 0 ? null : pct(hitches, judged),
});

/** The summary's `why`: the slow heartbeats' bounds, and the cell's hitches (first visits apart). */
function whyOf(summary: Record<string, unknown>, slow: SlowBasis, byBudget: boolean): CellWhy {
  const slowN = num(byBudget ? summary.why_slow_b : summary.why_slow);
  const counts = boundCounts(byBudget ? summary.why_bounds_b : summary.why_bounds);
  const judged = num(summary.h_judged);
  const hitches = num(summary.h_hitches);
  const firstJudged = num(summary.h_first_judged);
  const firstHitches = num(summary.h_first_hitches);
  const interval = intervalOf(summary);
  const minutes = minutesOf(judged, interval);
  return {
    ...slow,
    heartbeats: num(summary.samples),
    slow: slowN,
    bounds: BOUNDS.map((bound) => ({
      bound,
      slow: counts[bound],
      pct: slowN === 0 ? null : pct(counts[bound], slowN),
    })),
    hitches: {
      ...hitchCount(judged, hitches),
      heartbeatIntervalMs: interval,
      minutesPlayed: minutes === null ? null : Math.round(minutes * 100) / 100,
      perMinute: perMinute(hitches, judged, interval),
      firstVisit: hitchCount(firstJudged, firstHitches),
      laterVisits: hitchCount(judged - firstJudged, hitches - firstHitches),
    },
  };
}

/** Highest failing share, then highest p95 frame time (none last), then most samples, then by key. */
export function worstFirst(a: BreakdownGroup, b: BreakdownGroup): number {
  return (
    (b.failingPct ?? -1) - (a.failingPct ?? -1) ||
    (b.p95FrameTime ?? -1) - (a.p95FrameTime ?? -1) ||
    b.samples - a.samples ||
    byText(a.key ?? "", b.key ?? "")
  );
}

const deviceOf = (gpu: string, deviceModel: string, resolution: string, osVersion: string): Device | null =>
  gpu || deviceModel || resolution || osVersion
    ? {
        gpu: gpu || null,
        deviceModel: deviceModel || null,
        resolution: resolution || null,
        osVersion: osVersion || null,
      }
    : null;

/**
 * The 10 sessions with the highest p95 frame time in the cell (then lowest p05 fps, then id: the
 * statement's session_rank); their build and device as last seen there.
 */
function worstSessionsOf(rows: Record<string, unknown>[]): WorstSession[] {
  return rows
    .filter((r) => num(r.role) === ROLE.session)
    .sort((a, b) => num(a.session_rank) - num(b.session_rank))
    .map((r) => ({
      sessionId: String((r.key as unknown[])[0] ?? ""),
      player: String(r.s_player ?? ""),
      buildId: String(r.s_build_id ?? ""),
      platform: String(r.s_platform ?? ""),
      device: deviceOf(
        String(r.s_gpu ?? ""),
        String(r.s_device_model ?? ""),
        String(r.s_resolution ?? ""),
        String(r.s_os_version ?? ""),
      ),
      samples: num(r.s_samples),
      p95FrameTime: orNull(r.s_p95_frame_time),
      p05Fps: orNull(r.s_p05_fps),
      firstSeen: String(r.s_first_seen ?? ""),
      lastSeen: String(r.s_last_seen ?? ""),
    }));
}

/**
 * The worst samples are the chosen metric's tail: quantized at or below its p05 (fps) or at or above its
 * p95 (the others), the samples the heatmap's tail figures describe. The repro is their median position
 * and camera pitch (nearest-rank, raw values), the circular median of their camera yaw, and the build,
 * platform and device they most often came from.
 */
function reproOf(rows: Record<string, unknown>[], q: CellQuery, summary: Record<string, unknown>) {
  const { better } = METRIC[q.metric];
  // The summary's nearest-rank percentile of the quantized samples (p05 for fps, p95 for the others),
  // the one the statement's tail was cut at: null without a sample, and then there is no worst sample.
  const threshold = levelsOf(summary, q.metric)[better === "higher" ? "p05" : "p95"];
  const m = rows.find((r) => num(r.role) === ROLE.tail);
  const groups = rows
    .filter((r) => num(r.role) === ROLE.tailGroup)
    .map((r) => {
      const [build = "", platform = "", gpu = "", model = "", resolution = "", os = ""] = (
        r.key as unknown[]
      ).map(String);
      return { build, platform, device: JSON.stringify([gpu, model, resolution, os]), n: num(r.g_n) };
    });
  const worst = threshold === null ? 0 : num(m?.worst);
  const mode = (key: (g: (typeof groups)[number]) => string) => {
    const counts = new Map<string, number>();
    for (const g of groups) {
      counts.set(key(g), (counts.get(key(g)) ?? 0) + g.n);
    }
    let best: string | null = null;
    let bestN = 0;
    for (const [k, n] of counts) {
      if (n > bestN || (n === bestN && best !== null && k < best)) {
        best = k;
        bestN = n;
      }
    }
    return best;
  };
  const device = mode((g) => g.device);
  const [gpu = "", model = "", resolution = "", os = ""] = device ? (JSON.parse(device) as string[]) : [];
  return {
    worstSamples: worst,
    threshold: worst ? threshold : null,
    position: worst
      ? { x: num(m?.tail_x), y: num(m?.tail_y), z: num(m?.tail_z_n) ? orNull(m?.tail_z) : null }
      : null,
    camera:
      worst && num(m?.tail_camera_n)
        ? {
            yaw: circularMedian(((m?.tail_yaws ?? []) as unknown[]).map(num)) ?? 0,
            pitch: num(m?.tail_pitch),
          }
        : null,
    buildId: worst ? mode((g) => g.build) || null : null,
    platform: worst ? mode((g) => g.platform) || null : null,
    device: worst ? deviceOf(gpu, model, resolution, os) : null,
  };
}

/**
 * Circular median of yaws in [0, 360): the circle is cut in the middle of the widest empty arc between
 * neighbouring yaws (on a tie, the arc that starts at the smallest yaw), the yaws are read around from
 * that cut, and the nearest-rank median (the k-th, k = ceil(n / 2)) is taken. A plain median of yaws
 * around north (350°, 355°, 10°) would pick from the far end of the sorted list; this one is one of the
 * samples' yaws, in the middle of where the camera looked.
 */
export function circularMedian(yaws: number[]): number | null {
  const s = [...yaws].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) {
    return null;
  }
  // Arc i runs from s[i] to the next yaw; the last wraps through 360 to s[0].
  let cut = 0;
  let widest = -1;
  for (let i = 0; i < n; i++) {
    const arc =
      i < n - 1 ? (s[i + 1] as number) - (s[i] as number) : (s[0] as number) + 360 - (s[i] as number);
    if (arc > widest) {
      widest = arc;
      cut = i;
    }
  }
  const k = Math.max(1, Math.ceil(n / 2));
  return s[(cut + k) % n] as number;
}

/** NULL (no sample) and a NaN that an engine may give for an empty average both mean "none". */
function orNull(v: unknown): number | null {
  if (v === null || v === undefined) {
    return null;
  }
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}
