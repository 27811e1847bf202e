// The performance metrics as data: the four per-sample measures of the wire's performance-bearing
// fields (fields.ts, `perf: true`) that the heatmap draws, threshold profiles mark, alert rules judge
// and the cell drill-down describes. Analytics (workers/api/analytics/cell.ts), alerting
// (workers/api/alerts/) and the dashboard (workers/api/web/client/metrics.ts) read their keys, columns,
// directions, units and edges from here; the API's metric enums and the Postgres enum lists are built
// from METRIC_KEYS. test/node/telemetry-metrics.test.ts holds the table against the wire's fields, the
// ClickHouse columns, the Postgres columns and enum lists, the zod enums and the OpenAPI document.
//
// Pure data and pure functions only: the dashboard's browser bundle imports this module (the one file
// outside its folder it may import, .dependency-cruiser.cjs), so it imports nothing but types.
//
// Not in the family: VRAM (metrics["mem.vram"], a map key, not a wire field) has heatmap fields
// (avg_mem_vram, p95_mem_vram) and a build-comparison diff, but no threshold, alert or drill-down; the
// build comparison's io.* and load_time_ms are map keys too (workers/api/analytics/compare.ts).

import type { MESSAGES } from "./fields.js";

/** A field of GameTelemetryEvent, by name. */
type EventField = (typeof MESSAGES.event.fields)[number]["name"];

export type MetricSpec = {
  /** The key of the API's `metric` parameters and fields, and of the Postgres `metric` columns. */
  readonly key: string;
  /** As the dashboard titles it. */
  readonly label: string;
  /** As a sentence names it (notifications). */
  readonly phrase: string;
  /** The unit of a sample, a mean, a threshold and a histogram edge. */
  readonly unit: "fps" | "ms" | "MB";
  /** fps is better higher; a value fails a threshold by being worse than it (equal passes). */
  readonly better: "higher" | "lower";
  /** The wire field (fields.ts) a sample is read from. */
  readonly field: EventField;
  /** The column of telemetry.events and telemetry.cell_samples holding one sample, in `unit`. */
  readonly column: string;
  /** The stem of the rollups' <stem>_sum and <stem>_n (telemetry.heatmap_cells, telemetry.alert_cells). */
  readonly rollup: string;
  /** The heatmap cell's (HeatmapCell) mean field and its tail field. */
  readonly heatmap: { readonly mean: string; readonly tail: string };
  /** Which figure of the cell's distribution is the heatmap's tail (p05 for fps: its low tail). */
  readonly tail: "p05" | "p95" | "max";
  /** The threshold profile's fields (threshold_profiles, the API's ThresholdProfile) of each level. */
  readonly profile: { readonly good: string; readonly warn: string };
  /**
   * The drill-down's histogram edges: counts[0] holds the samples below the first edge, counts[i]
   * those in [edges[i−1], edges[i]), the last those at or above the last edge.
   */
  readonly edges: readonly number[];
};

/** Log-spaced histogram edges, 4 per octave: 2^(k/4) for k = fromK…toK. */
const logEdges = (fromK: number, toK: number): readonly number[] =>
  Object.freeze(Array.from({ length: toK - fromK + 1 }, (_, i) => 2 ** ((fromK + i) / 4)));

// fps, frame time and GPU time from 1 to 1,024 (k = 0…40: a 1 s hitch has its own bucket), memory
// from 16 MB to 64 GiB (k = 16…64 of 1 MB).
const TIMES = logEdges(0, 40);

const ROWS = [
  {
    key: "fps",
    label: "FPS",
    phrase: "fps",
    unit: "fps",
    better: "higher",
    field: "fps",
    column: "fps",
    rollup: "fps",
    heatmap: { mean: "avg_fps", tail: "p05_fps" },
    tail: "p05",
    profile: { good: "fpsGood", warn: "fpsWarn" },
    edges: TIMES,
  },
  {
    key: "frame_time",
    label: "Frame time",
    phrase: "frame time",
    unit: "ms",
    better: "lower",
    field: "frame_time_ms",
    column: "frame_time_ms",
    rollup: "frame",
    heatmap: { mean: "avg_frame_time", tail: "p95_frame_time" },
    tail: "p95",
    profile: { good: "frameTimeGood", warn: "frameTimeWarn" },
    edges: TIMES,
  },
  {
    key: "memory",
    label: "Memory",
    phrase: "memory",
    unit: "MB",
    better: "lower",
    field: "memory_used_bytes",
    // memory_used_bytes / 1,048,576 (an ALIAS column).
    column: "memory_mb",
    rollup: "mem",
    heatmap: { mean: "avg_memory", tail: "max_memory" },
    tail: "max",
    profile: { good: "memoryGood", warn: "memoryWarn" },
    edges: logEdges(16, 64),
  },
  {
    key: "gpu_time",
    label: "GPU time",
    phrase: "GPU time",
    unit: "ms",
    better: "lower",
    field: "gpu_time_ms",
    column: "gpu_time_ms",
    rollup: "gpu",
    heatmap: { mean: "avg_gpu_time", tail: "p95_gpu_time" },
    tail: "p95",
    profile: { good: "gpuTimeGood", warn: "gpuTimeWarn" },
    edges: TIMES,
  },
] as const satisfies readonly MetricSpec[];

type Metrics = typeof ROWS;

/** The metrics, in the order the API lists them. */
export const METRICS: Metrics = Object.freeze(ROWS);

export type MetricKey = Metrics[number]["key"];

/** One metric's row, with its literal types (e.g. METRIC.fps.profile.good is "fpsGood"). */
export type Metric<K extends MetricKey = MetricKey> = Extract<Metrics[number], { key: K }>;

/** The keys in table order, as a tuple (what z.enum and drizzle's text enums take). */
export const METRIC_KEYS = Object.freeze(METRICS.map((m) => m.key)) as unknown as KeysOf<Metrics>;

type KeysOf<T extends readonly { key: string }[]> = {
  readonly [I in keyof T]: T[I] extends { key: infer K } ? K : never;
};

/** The rows by key. */
export const METRIC: { readonly [K in MetricKey]: Metric<K> } = Object.freeze(
  Object.fromEntries(METRICS.map((m) => [m.key, m])) as { [K in MetricKey]: Metric<K> },
);

/** The threshold profile field of a metric at a level, e.g. (fps, warn) → "fpsWarn". */
export type ProfileField = Metrics[number]["profile"][keyof MetricSpec["profile"]];

/** Whether `value` is worse than `threshold` (fails it): below it for fps, above it for the others. */
export function isWorse(m: Pick<MetricSpec, "better">, value: number, threshold: number): boolean {
  return m.better === "higher" ? value < threshold : value > threshold;
}

/** The SQL comparison `value <op> threshold` that is true when the value is worse. */
export function worseOp(m: Pick<MetricSpec, "better">): "<" | ">" {
  return m.better === "higher" ? "<" : ">";
}

/**
 * The share of a cell's heartbeats within their display's frame budget (one refresh: 1000 / display.hz,
 * 60 Hz where the SDK does not send the rate; docs/analytics.md, "Budgets that follow the display"), which
 * a threshold profile marks with budgetShareGood / budgetShareWarn and an alert rule may judge. Not a row
 * of the table: it has no wire field or sample of its own. A cell's value is (heartbeats − slow) /
 * heartbeats, from the frame time (else 1000 / fps) of each heartbeat, as the heatmap's "Frame budget"
 * mode counts them; a heartbeat is its sample.
 */
export const BUDGET_SHARE = Object.freeze({
  key: "budget_share",
  label: "Within frame budget",
  phrase: "share of heartbeats within their frame budget",
  unit: "share",
  better: "higher",
  profile: Object.freeze({ good: "budgetShareGood", warn: "budgetShareWarn" }),
} as const);

/** What an alert rule may judge: every metric of the table, then the frame-budget share. */
export const ALERT_METRIC_KEYS = Object.freeze([...METRIC_KEYS, BUDGET_SHARE.key] as const);

export type AlertMetricKey = (typeof ALERT_METRIC_KEYS)[number];

/** An alert metric's row: the table's, or the frame-budget share's (unit "share": 0 to 1). */
export type AlertMetric = Metric | typeof BUDGET_SHARE;

/** The threshold profile field of an alert metric at a level, e.g. (budget_share, good) → "budgetShareGood". */
export type AlertProfileField = AlertMetric["profile"]["good" | "warn"];

/** What one of an alert metric's samples is, as a sentence counts them: a budget share's are heartbeats. */
export const sampleNoun = (m: AlertMetricKey): "heartbeat" | "sample" =>
  m === BUDGET_SHARE.key ? "heartbeat" : "sample";

/** The alert metrics' rows by key. */
export const ALERT_METRIC: {
  readonly [K in AlertMetricKey]: K extends MetricKey ? Metric<K> : typeof BUDGET_SHARE;
} = Object.freeze({ ...METRIC, [BUDGET_SHARE.key]: BUDGET_SHARE });
