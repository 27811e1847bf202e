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
import { quantized, rawPercentile } from "./percentiles.js";
import { byText, distinct, num, pct, selectRows } from "./select.js";

// One heatmap cell in depth: what its frame rate looks like, for whom it is bad, the sessions that
// suffered most there, and where and how to stand to reproduce it. Reads telemetry.cell_samples
// (0005_cell_samples.sql), ordered by map and base cell of 50, so every statement reads the cell's base
// cell of the window only (a few granules), whatever the size of the project. No SELECT alias repeats a
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
  withSessionDevices(CH_CELL_SAMPLES, where, CELL_SAMPLE_DEVICE_COLUMNS, ["memory_mb"], undefined, true);

/** The profile mark a sample must pass not to count as failing: warn, or good where warn is unset (the heatmap's red). */
function failMark(q: CellQuery): number | null {
  const marks = q.profile?.[q.metric];
  return marks ? (marks.warn ?? marks.good) : null;
}

const FORMAT_TS = (expr: string) => `formatDateTime(${expr}, '%Y-%m-%dT%H:%i:%S.%fZ')`;

/** The WHERE every statement of the drill-down shares, and its parameters (the benchmark EXPLAINs it). */
export function cellScope(projectId: string, w: Window, q: CellQuery) {
  const mark = failMark(q);
  const params = {
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
  return { where: scope(q), params, mark };
}

export async function cellDrilldown(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: CellQuery,
): Promise<CellDrilldown> {
  const { where, params, mark } = cellScope(projectId, w, q);
  // Statements over the same few granules, in parallel: each groups differently. The repro's tail is
  // the summary's own percentile of the metric, so its two statements follow the summary rather than
  // each reading the cell once more for it.
  const summarized = summaryOf(ch, where, params);
  const [summary, groups, sessions, repro] = await Promise.all([
    summarized,
    breakdownsOf(ch, where, params, q, mark),
    worstSessionsOf(ch, where, params),
    summarized.then((s) => reproOf(ch, where, params, q, s)),
  ]);
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
      return [
        m,
        {
          samples: n,
          mean: n ? orNull(summary[`${m}_mean`]) : null,
          p50: orNull(summary[`${m}_p50`]),
          p95: orNull(summary[`${m}_p95`]),
          p99: orNull(summary[`${m}_p99`]),
          p05: orNull(summary[`${m}_p05`]),
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
    breakdowns: groups,
    worstSessions: sessions,
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

/** Counts, each metric's mean, percentiles and histogram, and the profile's failing counts: one row. */
async function summaryOf(ch: ClickHouseClient, where: string, params: Record<string, unknown>) {
  const perMetric = METRIC_KEYS.map((m) => {
    const c = METRIC[m].column;
    // The bucket of a sample is the number of edges at or below it (0: below the first edge).
    const bucket = `toUInt8(arraySum(arrayMap(e -> toFloat64(assumeNotNull(${c})) >= e, {${m}Edges:Array(Float64)})))`;
    return `count(${c}) AS ${m}_n, avg(${c}) AS ${m}_mean,
      ${rawPercentile(0.5, c)} AS ${m}_p50, ${rawPercentile(0.95, c)} AS ${m}_p95, ${rawPercentile(0.99, c)} AS ${m}_p99,
      ${rawPercentile(0.05, c)} AS ${m}_p05, max(toFloat64(${c})) AS ${m}_max,
      sumMapIf([${bucket}], [toUInt64(1)], isNotNull(${c})) AS ${m}_hist,
      countIf(${worse(m, `{${m}Good:Float64}`)}) AS ${m}_fail_good,
      countIf(${worse(m, `{${m}Warn:Float64}`)}) AS ${m}_fail_warn`;
  });
  const [row] = await selectRows(
    ch,
    `SELECT count() AS samples, ${distinct("session_id")} AS sessions, ${distinct("player")} AS players,
      ${FORMAT_TS("min(timestamp)")} AS first_seen, ${FORMAT_TS("max(timestamp)")} AS last_seen,
      ${perMetric.join(",\n      ")}
    FROM ${CH_CELL_SAMPLES}
    WHERE ${where}`,
    params,
    {
      samples: "unknown",
      sessions: "unknown",
      players: "unknown",
      first_seen: "string",
      last_seen: "string",
      ...Object.fromEntries(
        METRIC_KEYS.flatMap((m) =>
          ["n", "mean", "p50", "p95", "p99", "p05", "max", "hist", "fail_good", "fail_warn"].map((s) => [
            `${m}_${s}`,
            "unknown" as const,
          ]),
        ),
      ),
    },
  );
  return (row ?? {}) as Record<string, unknown>;
}

/**
 * Per dimension and value: samples, mean fps, p95 frame time, and the share of the samples carrying the
 * chosen metric that fail the profile's mark. One pass: each row is counted once per dimension (ARRAY JOIN).
 */
async function breakdownsOf(
  ch: ClickHouseClient,
  where: string,
  params: Record<string, unknown>,
  q: CellQuery,
  mark: number | null,
): Promise<Record<BreakdownDimension, BreakdownGroup[]>> {
  const c = METRIC[q.metric].column;
  const rows = await selectRows(
    ch,
    `SELECT d.1 AS dim, d.2 AS key, count() AS samples, avg(fps) AS mean_fps,
      ${rawPercentile(0.95, "frame_time_ms")} AS p95_frame_time,
      count(${c}) AS judged, countIf(${worse(q.metric, "{mark:Float64}")}) AS failing
    FROM ${withDevices(where)}
    ARRAY JOIN [${BREAKDOWN_DIMENSIONS.map((d) => `('${d}', toString(${d}))`).join(", ")}] AS d
    WHERE ${where}
    GROUP BY dim, key`,
    params,
    {
      dim: "string",
      key: "string",
      samples: "unknown",
      mean_fps: "unknown",
      p95_frame_time: "unknown",
      judged: "unknown",
      failing: "unknown",
    },
  );
  const out = Object.fromEntries(BREAKDOWN_DIMENSIONS.map((d) => [d, [] as BreakdownGroup[]])) as Record<
    BreakdownDimension,
    BreakdownGroup[]
  >;
  for (const r of rows) {
    const judged = num(r.judged);
    out[r.dim as BreakdownDimension]?.push({
      // '' is "not sent": the SDKs that send no device context, an event without a build id.
      key: r.key === "" ? null : r.key,
      samples: num(r.samples),
      meanFps: orNull(r.mean_fps),
      p95FrameTime: orNull(r.p95_frame_time),
      failingPct: mark === null || judged === 0 ? null : pct(num(r.failing), judged),
    });
  }
  for (const d of BREAKDOWN_DIMENSIONS) {
    out[d] = out[d].sort(worstFirst).slice(0, BREAKDOWN_LIMIT);
  }
  return out;
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

/** The 10 sessions with the highest p95 frame time in the cell; their build and device as last seen there. */
async function worstSessionsOf(
  ch: ClickHouseClient,
  where: string,
  params: Record<string, unknown>,
): Promise<WorstSession[]> {
  const rows = await selectRows(
    ch,
    `SELECT session_id, argMax(player, timestamp) AS last_player, toString(argMax(build_id, timestamp)) AS last_build_id,
      toString(argMax(platform, timestamp)) AS last_platform, toString(argMax(gpu, timestamp)) AS last_gpu,
      toString(argMax(device_model, timestamp)) AS last_device_model, toString(argMax(resolution, timestamp)) AS last_resolution,
      toString(argMax(os_version, timestamp)) AS last_os_version, count() AS samples,
      ${rawPercentile(0.95, "frame_time_ms")} AS p95_frame_time, ${rawPercentile(0.05, "fps")} AS p05_fps,
      ${FORMAT_TS("min(timestamp)")} AS first_seen, ${FORMAT_TS("max(timestamp)")} AS last_seen
    FROM ${withDevices(where)}
    WHERE ${where}
    GROUP BY session_id
    ORDER BY p95_frame_time DESC NULLS LAST, p05_fps ASC NULLS LAST, session_id
    LIMIT ${WORST_SESSIONS}`,
    params,
    {
      session_id: "string",
      last_player: "string",
      last_build_id: "string",
      last_platform: "string",
      last_gpu: "string",
      last_device_model: "string",
      last_resolution: "string",
      last_os_version: "string",
      samples: "unknown",
      p95_frame_time: "unknown",
      p05_fps: "unknown",
      first_seen: "string",
      last_seen: "string",
    },
  );
  return rows.map((r) => ({
    sessionId: r.session_id,
    player: r.last_player,
    buildId: r.last_build_id,
    platform: r.last_platform,
    device: deviceOf(r.last_gpu, r.last_device_model, r.last_resolution, r.last_os_version),
    samples: num(r.samples),
    p95FrameTime: orNull(r.p95_frame_time),
    p05Fps: orNull(r.p05_fps),
    firstSeen: r.first_seen,
    lastSeen: r.last_seen,
  }));
}

/**
 * The worst samples are the chosen metric's tail: quantized at or below its p05 (fps) or at or above its
 * p95 (the others), the samples the heatmap's tail figures describe. The repro is their median position
 * and camera pitch (nearest-rank, raw values), the circular median of their camera yaw, and the build,
 * platform and device they most often came from.
 */
async function reproOf(
  ch: ClickHouseClient,
  where: string,
  cellParams: Record<string, unknown>,
  q: CellQuery,
  summary: Record<string, unknown>,
) {
  const { column: c, better } = METRIC[q.metric];
  // summaryOf's nearest-rank percentile of the quantized samples (p05 for fps, p95 for the others),
  // the statement the tail was: null without a sample, and then there is no worst sample.
  const threshold = orNull(summary[`${q.metric}_${better === "higher" ? "p05" : "p95"}`]);
  if (threshold === null) {
    return {
      worstSamples: 0,
      threshold: null,
      position: null,
      camera: null,
      buildId: null,
      platform: null,
      device: null,
    };
  }
  const params = { ...cellParams, tail: threshold };
  const q64 = quantized(`toFloat64(assumeNotNull(${c}))`);
  const tailWhere = `${where} AND isNotNull(${c}) AND ${q64} ${better === "higher" ? "<=" : ">="} {tail:Float64}`;
  const median = (v: string, cond = "1") =>
    `quantileExactWeightedIf(0.5)(toFloat64(assumeNotNull(${v})), toUInt8(1), ${cond})`;
  const [[m], groups] = await Promise.all([
    selectRows(
      ch,
      `SELECT count() AS worst,
        ${median("position_x")} AS x, ${median("position_y")} AS y,
        ${median("position_z", "isNotNull(position_z)")} AS z, count(position_z) AS z_n,
        groupArrayIf(toFloat64(assumeNotNull(camera_yaw)), isNotNull(camera_yaw)) AS yaws,
        ${median("camera_pitch", "isNotNull(camera_pitch)")} AS pitch,
        count(camera_yaw) AS camera_n
      FROM ${CH_CELL_SAMPLES}
      WHERE ${tailWhere}`,
      params,
      {
        worst: "unknown",
        x: "unknown",
        y: "unknown",
        z: "unknown",
        z_n: "unknown",
        yaws: "unknown",
        pitch: "unknown",
        camera_n: "unknown",
      },
    ),
    selectRows(
      ch,
      `SELECT toString(build_id) AS g_build_id, toString(platform) AS g_platform, toString(gpu) AS g_gpu,
        toString(device_model) AS g_device_model, toString(resolution) AS g_resolution,
        toString(os_version) AS g_os_version, count() AS n
      FROM ${withDevices(where)}
      WHERE ${tailWhere}
      GROUP BY g_build_id, g_platform, g_gpu, g_device_model, g_resolution, g_os_version`,
      params,
      {
        g_build_id: "string",
        g_platform: "string",
        g_gpu: "string",
        g_device_model: "string",
        g_resolution: "string",
        g_os_version: "string",
        n: "unknown",
      },
    ),
  ]);
  const worst = num(m?.worst);
  const mode = (key: (g: (typeof groups)[number]) => string) => {
    const counts = new Map<string, number>();
    for (const g of groups) {
      counts.set(key(g), (counts.get(key(g)) ?? 0) + num(g.n));
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
  const device = mode((g) => JSON.stringify([g.g_gpu, g.g_device_model, g.g_resolution, g.g_os_version]));
  const [gpu = "", model = "", resolution = "", os = ""] = device ? (JSON.parse(device) as string[]) : [];
  return {
    worstSamples: worst,
    threshold: worst ? threshold : null,
    position: worst ? { x: num(m?.x), y: num(m?.y), z: num(m?.z_n) ? orNull(m?.z) : null } : null,
    camera:
      worst && num(m?.camera_n)
        ? { yaw: circularMedian(((m?.yaws ?? []) as unknown[]).map(num)) ?? 0, pitch: num(m?.pitch) }
        : null,
    buildId: worst ? mode((g) => g.g_build_id) || null : null,
    platform: worst ? mode((g) => g.g_platform) || null : null,
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
