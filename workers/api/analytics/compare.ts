import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_COMPARE_ROLLUP } from "../../shared/clickhouse.js";
import type { Window } from "../window.js";
import { num, selectRows } from "./select.js";

/**
 * The metrics `framedash perf-diff` gates on, in its order; all lower-is-better. What a sample of each
 * is (a non-null fixed field, or a metrics-map key where present: a missing key reads 0, which for io.*
 * and load_time_ms would be a real-looking sample) and its unit (ms, megabytes for memory and
 * mem.vram, bytes, operations) is defined where telemetry.compare_rollup is filled, as n0..n7 and q0..q7
 * in this order (schema/clickhouse/migrations/0028_compare_rollup.sql).
 */
export const COMPARE_METRICS = [
  "frame_time",
  "memory",
  "gpu_time",
  "io.read_bytes",
  "io.read_time_ms",
  "io.read_ops",
  "load_time_ms",
  "mem.vram",
] as const;
export type CompareMetric = (typeof COMPARE_METRICS)[number];

/** The tail percentile reported beside each p50 (the CLI prints "P50/P95"). */
export const TAIL_LEVEL = 0.95;

export type CompareQuery = {
  baseline: string;
  candidate: string;
  /** User map id as events carry it (map_load events carry none, so load_time_ms has no sample then). */
  mapId?: string;
  platform?: string;
};

export type BuildSummary = {
  build_id: string;
  /** Events of the build in the window and filters that carry at least one compared metric. */
  event_count: number;
  session_count: number;
  player_count: number;
  first_seen: string | null;
  last_seen: string | null;
};

export type MetricDiff = {
  metric: CompareMetric;
  baselineP50: number | null;
  candidateP50: number | null;
  /** (candidate − baseline) / baseline × 100, 2 decimals; null without both p50s or when baseline is 0. */
  diffPct: number | null;
  /** The candidate's p50 is higher (worse) than the baseline's; false without both p50s. */
  isRegression: boolean;
  baselineTail: number | null;
  candidateTail: number | null;
  baselineSamples: number;
  candidateSamples: number;
};

export type Comparison = { baseline: BuildSummary; candidate: BuildSummary; diffs: MetricDiff[] };

type Stats = { summary: BuildSummary; p50: (number | null)[]; tail: (number | null)[]; n: number[] };

/**
 * Two builds side by side over one window and the same filters, from telemetry.compare_rollup's
 * 'map_platform' rows (a row per build, day, map and platform; windows are whole days), or without filters
 * from its 'build' rows (a row per build and day, 0028_compare_rollup.sql): per metric the p50 and p95 of each build,
 * nearest-rank over quantized samples (percentiles.ts: within 0.049 % of the raw samples' own), and
 * exact session and player counts from bitmaps of their dense numbers (0034_compare_bitmaps.sql: a
 * build's sets over a month merge in milliseconds, where exact sets of hashes took hundreds). A build with no
 * sample of a metric has nulls there; an unknown build id is an all-empty build.
 */
/** Each metric's sample count and its two percentiles: n0..n7, p50_0..p50_7, tail_0..tail_7. */
const SAMPLE_COLUMNS: Record<`${"n" | "p50_" | "tail_"}${number}`, "unknown"> = Object.fromEntries(
  COMPARE_METRICS.flatMap((_, i) => [`n${i}`, `p50_${i}`, `tail_${i}`].map((c) => [c, "unknown"])),
);
const COMPARE_COLUMNS = Object.assign(
  {
    build: "string",
    first: "string",
    last: "string",
    event_count: "unknown",
    session_count: "unknown",
    player_count: "unknown",
  } as const,
  SAMPLE_COLUMNS,
);

export async function compareBuilds(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: CompareQuery,
): Promise<Comparison> {
  // n0..n7 and q0..q7 hold the metrics in COMPARE_METRICS order (0028_compare_rollup.sql); each q state
  // answers [p50, p95] (TAIL_LEVEL).
  const columns = COMPARE_METRICS.map(
    (_, i) => `sum(n${i}) AS n${i},
      quantilesExactWeightedMerge(0.5, ${TAIL_LEVEL})(q${i}) AS p${i},
      p${i}[1] AS p50_${i}, p${i}[2] AS tail_${i}`,
  ).join(",\n      ");
  const rows = await selectRows(
    ch,
    `
    SELECT toString(build_id) AS build,
      sum(events) AS event_count,
      groupBitmapMerge(sessions) AS session_count,
      groupBitmapMerge(players) AS player_count,
      formatDateTime(min(first_seen), '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC') AS first,
      formatDateTime(max(last_seen), '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC') AS last,
      ${columns}
    FROM ${CH_COMPARE_ROLLUP}
    WHERE project_id = {projectId:UUID}
      AND level = '${q.mapId === undefined && q.platform === undefined ? "build" : "map_platform"}'
      AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})
      AND build_id IN ({baseline:String}, {candidate:String})
      ${q.mapId === undefined ? "" : "AND map_id = {mapId:String}"}
      ${q.platform === undefined ? "" : "AND platform = {platform:String}"}
    GROUP BY build_id`,
    {
      projectId,
      from: w.from,
      to: w.to,
      baseline: q.baseline,
      candidate: q.candidate,
      mapId: q.mapId,
      platform: q.platform,
    },
    COMPARE_COLUMNS,
  );
  const statsOf = (buildId: string): Stats => {
    const r = rows.find((row) => row.build === buildId);
    const n = COMPARE_METRICS.map((_, i) => num(r?.[`n${i}`]));
    const sample = (key: "p50_" | "tail_", i: number) =>
      (n[i] ?? 0) > 0 ? finiteOrNull(r?.[`${key}${i}`]) : null;
    return {
      summary: {
        build_id: buildId,
        event_count: num(r?.event_count),
        session_count: num(r?.session_count),
        player_count: num(r?.player_count),
        first_seen: r?.first ?? null,
        last_seen: r?.last ?? null,
      },
      p50: COMPARE_METRICS.map((_, i) => sample("p50_", i)),
      tail: COMPARE_METRICS.map((_, i) => sample("tail_", i)),
      n,
    };
  };
  const base = statsOf(q.baseline);
  const cand = statsOf(q.candidate);
  return {
    baseline: base.summary,
    candidate: cand.summary,
    diffs: COMPARE_METRICS.map((metric, i) => {
      const b = base.p50[i] ?? null;
      const c = cand.p50[i] ?? null;
      return {
        metric,
        baselineP50: b,
        candidateP50: c,
        diffPct: diffPct(b, c),
        isRegression: b !== null && c !== null && c > b,
        baselineTail: base.tail[i] ?? null,
        candidateTail: cand.tail[i] ?? null,
        baselineSamples: base.n[i] ?? 0,
        candidateSamples: cand.n[i] ?? 0,
      };
    }),
  };
}

/** Signed percent change, 2 decimals; a change from 0 has no percentage. */
export function diffPct(baseline: number | null, candidate: number | null): number | null {
  if (baseline === null || candidate === null || baseline === 0) {
    return null;
  }
  const pct = ((candidate - baseline) / baseline) * 100;
  return Math.round(pct * 100) / 100;
}

function finiteOrNull(v: unknown): number | null {
  if (v === null || v === undefined) {
    return null;
  }
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}
