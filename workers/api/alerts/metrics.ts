import type { AlertMetric, ThresholdLevel } from "../../../schema/pg/columns.js";
import type { ThresholdProfileRow as ProfileRow } from "../../../schema/pg/schema.js";

// The lists live below the schema, which types the alert columns with them.
export {
  ALERT_METRICS,
  type AlertMetric,
  THRESHOLD_LEVELS,
  type ThresholdLevel,
} from "../../../schema/pg/columns.js";

export const CELL_SIZES = [5, 10, 25, 50] as const;

type ThresholdField = {
  [K in keyof ProfileRow]: K extends `${string}${"Good" | "Warn"}` ? K : never;
}[keyof ProfileRow];

/** The profile field holding the threshold of a metric at a level, e.g. fps + warn → fpsWarn. */
export function thresholdField(metric: AlertMetric, level: ThresholdLevel): ThresholdField {
  const stem = { fps: "fps", frame_time: "frameTime", memory: "memory", gpu_time: "gpuTime" }[metric];
  return `${stem}${level === "good" ? "Good" : "Warn"}` as ThresholdField;
}

export function thresholdOf(profile: ProfileRow, metric: AlertMetric, level: ThresholdLevel): number | null {
  return profile[thresholdField(metric, level)];
}

/** FPS fails by being too low; times and memory by being too high. */
export function lowerIsWorse(metric: AlertMetric): boolean {
  return metric === "fps";
}
