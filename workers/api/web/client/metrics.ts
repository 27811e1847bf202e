// The performance metrics as the heatmap cells and threshold profiles carry them, and how a profile
// judges a cell. The metrics themselves (keys, labels, units, directions, the heatmap's and profiles'
// fields) are the metric table's, workers/shared/telemetry/metrics.ts: the one module outside this
// folder the bundle imports (.dependency-cruiser.cjs). Threshold semantics are the alert evaluation's
// (docs/web-api.md: Alerting): a value fails a threshold when it is worse than it: fps below it, frame
// time, memory and GPU time above it; equal passes. Memory thresholds are megabytes, as avg_memory is.

import {
  BUDGET_SHARE,
  type ProfileField,
  sampleNoun,
  METRICS as TABLE,
  type MetricKey as TableKey,
} from "../../../shared/telemetry/metrics.js";
import type { Answer, Schemas } from "./api.js";
import { fmt } from "./format.js";

/** The metric keys as the API documents them (the generated schema). */
export type MetricKey = Schemas["HeatmapCellDrilldown"]["metric"];

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

// The API's keys are the table's, both ways: a metric added to the table but not to the API (or the API
// regenerated without it: `npm run generate:api`) fails the typecheck here.
true satisfies Equal<MetricKey, TableKey>;

export type Cell = Schemas["HeatmapCell"];

export type Profile = Schemas["ThresholdProfile"];

/**
 * One cell's distributions as heatmap/cell answers them: the heatmap's bulk answer carries no tails
 * (they cost most of its read), so the tooltip asks for the cell under the pointer.
 */
export type CellTails = Answer<"getHeatmapCell">["distributions"];

export type Metric = {
  key: MetricKey;
  label: string;
  unit: string;
  higherIsBetter: boolean;
  /** The profile's fields of its two levels, e.g. fpsGood and fpsWarn. */
  profile: { good: ProfileField; warn: ProfileField };
  /** The cell's mean; the SDKs' zero is "not collected", so a mean of 0 (or null) is no sample. */
  value(c: Cell): number | null;
  /** The cell's tail figure for the tooltip (p05 for fps, p95 or max for the others): the heatmap's own. */
  tail: { label: string; of(d: CellTails): number | null };
  good(p: Profile): number | null;
  warn(p: Profile): number | null;
};

const sampled = (v: number | null) => (v === null || v === 0 ? null : v);

// Each field the table names is looked up in the generated types: a name the API lacks fails typecheck.
export const METRICS: Metric[] = TABLE.map((m) => ({
  key: m.key,
  label: m.label,
  unit: m.unit,
  higherIsBetter: m.better === "higher",
  profile: m.profile,
  value: (c: Cell) => sampled(c[m.heatmap.mean]),
  tail: { label: m.tail, of: (d: CellTails) => d[m.key][m.tail] },
  good: (p: Profile) => p[m.profile.good],
  warn: (p: Profile) => p[m.profile.warn],
}));

/** What an alert rule may judge, as the API documents it: the metrics, then the frame-budget share. */
export type AlertMetricKey = Schemas["AlertRule"]["metric"];

/** An alert metric as the Alerts page names it and shows a cell's value (the budget share in percent). */
export type AlertMetric = {
  key: AlertMetricKey;
  label: string;
  unit: string;
  /** What its samples are: heartbeats for the budget share. */
  sample: "heartbeat" | "sample";
  show(v: number): string;
};

export const ALERT_METRICS: AlertMetric[] = [
  ...TABLE.map((m) => ({
    key: m.key,
    label: m.label,
    unit: m.unit,
    sample: sampleNoun(m.key),
    show: (v: number) => fmt(v, m.unit),
  })),
  {
    key: BUDGET_SHARE.key,
    label: BUDGET_SHARE.label,
    unit: "% of heartbeats",
    sample: sampleNoun(BUDGET_SHARE.key),
    show: (v: number) => `${fmt(Math.round(v * 1000) / 10)} % within budget`,
  },
];

export function metricOf(key: string): Metric {
  return METRICS.find((m) => m.key === key) ?? (METRICS[0] as Metric);
}

import { type Judgement, judgeMarks } from "./fills.js";

export type { Judgement } from "./fills.js";

/** Whether `value` passes `threshold` for this metric (equal passes). */
export function passes(m: Metric, value: number, threshold: number): boolean {
  return m.higherIsBetter ? value >= threshold : value <= threshold;
}

/**
 * good: passes the good threshold; warn: fails good but passes warn; bad: fails every threshold the
 * profile defines for the metric. A profile defining only one of them has no middle band. Null when the
 * profile defines neither (the page then says so and uses the continuous scale).
 */
export function judge(m: Metric, p: Profile, value: number): Judgement | null {
  return judgeMarks(value, m.good(p), m.warn(p), m.higherIsBetter);
}

export { NO_SAMPLE_FILL } from "./diff-colours.js";
export { JUDGEMENT_FILL } from "./fills.js";
