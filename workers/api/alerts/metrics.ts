import type { ThresholdLevel } from "../../../schema/pg/columns.js";
import type { ThresholdProfileRow as ProfileRow } from "../../../schema/pg/schema.js";
import { ALERT_METRIC, type AlertMetricKey, type AlertProfileField } from "../../shared/telemetry/metrics.js";

// The lists live below the schema, which types the alert columns with them.
export { THRESHOLD_LEVELS, type ThresholdLevel } from "../../../schema/pg/columns.js";

export const CELL_SIZES = [5, 10, 25, 50] as const;

/** The profile field holding the threshold of a metric at a level, e.g. fps + warn → fpsWarn. */
export function thresholdField(metric: AlertMetricKey, level: ThresholdLevel): AlertProfileField {
  return ALERT_METRIC[metric].profile[level];
}

/** The threshold; the alert metrics' profile fields must be number columns of the row (typechecked here). */
export function thresholdOf(
  profile: ProfileRow,
  metric: AlertMetricKey,
  level: ThresholdLevel,
): number | null {
  return profile[thresholdField(metric, level)];
}
