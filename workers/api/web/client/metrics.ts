// The four performance metrics as the heatmap cells and threshold profiles carry them, and how a
// profile judges a cell. Threshold semantics are the alert evaluation's (docs/web-api.md: Alerting): a value
// fails a threshold when it is worse than it: fps below it, frame time, memory and GPU time above it;
// equal passes. Memory thresholds are megabytes, as avg_memory is.

import type { Answer, Schemas } from "./api.js";

export type MetricKey = "fps" | "frame_time" | "memory" | "gpu_time";

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
  /** The cell's mean; the SDKs' zero is "not collected", so a mean of 0 (or null) is no sample. */
  value(c: Cell): number | null;
  /** The cell's tail figure for the tooltip (p05 for fps, p95 or max for the others): the heatmap's own. */
  tail: { label: string; of(d: CellTails): number | null };
  good(p: Profile): number | null;
  warn(p: Profile): number | null;
};

const sampled = (v: number | null) => (v === null || v === 0 ? null : v);

export const METRICS: Metric[] = [
  {
    key: "fps",
    label: "FPS",
    unit: "fps",
    higherIsBetter: true,
    value: (c) => sampled(c.avg_fps),
    tail: { label: "p05", of: (d) => d.fps.p05 },
    good: (p) => p.fpsGood,
    warn: (p) => p.fpsWarn,
  },
  {
    key: "frame_time",
    label: "Frame time",
    unit: "ms",
    higherIsBetter: false,
    value: (c) => sampled(c.avg_frame_time),
    tail: { label: "p95", of: (d) => d.frame_time.p95 },
    good: (p) => p.frameTimeGood,
    warn: (p) => p.frameTimeWarn,
  },
  {
    key: "memory",
    label: "Memory",
    unit: "MB",
    higherIsBetter: false,
    value: (c) => sampled(c.avg_memory),
    tail: { label: "max", of: (d) => d.memory.max },
    good: (p) => p.memoryGood,
    warn: (p) => p.memoryWarn,
  },
  {
    key: "gpu_time",
    label: "GPU time",
    unit: "ms",
    higherIsBetter: false,
    value: (c) => sampled(c.avg_gpu_time),
    tail: { label: "p95", of: (d) => d.gpu_time.p95 },
    good: (p) => p.gpuTimeGood,
    warn: (p) => p.gpuTimeWarn,
  },
];

export function metricOf(key: string): Metric {
  return METRICS.find((m) => m.key === key) ?? (METRICS[0] as Metric);
}

export type Judgement = "good" | "warn" | "bad";

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
  const good = m.good(p);
  const warn = m.warn(p);
  if (good === null && warn === null) {
    return null;
  }
  if (good !== null && passes(m, value, good)) {
    return "good";
  }
  if (warn !== null && passes(m, value, warn)) {
    return good === null ? "good" : "warn";
  }
  return "bad";
}

export const JUDGEMENT_FILL: Record<Judgement, string> = {
  good: "#1f9d55",
  warn: "#f2b01e",
  bad: "#d7263d",
};
export const NO_SAMPLE_FILL = "#8a8f98";
