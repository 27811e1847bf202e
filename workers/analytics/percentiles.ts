// Percentiles at a fixed resolution of 0.01 of the metric's unit (fps, ms, MB, bytes, operations), so
// rollups can keep them as mergeable histograms (schema/clickhouse/migrations/0004_rollups.sql): a
// sample v counts as q(v) = floor(v · 100 + 0.5) / 100. Rounding is monotone, so the percentile of the
// rounded samples is the rounded exact percentile: within 0.005 units of quantileExact's answer. Raw
// event queries round the same way, so an answer does not depend on which path computed it.

/** The percentile's rounding, as SQL over a Float64 expression (the same operations as `roundToResolution`). */
export const rounded = (expr: string) => `floor(${expr} * 100 + 0.5) / 100`;

/** The rounding in TypeScript, for references and callers that round a value themselves. */
export const roundToResolution = (v: number) => Math.floor(v * 100 + 0.5) / 100;

/**
 * From raw events: quantileExact (the sample at index floor(level · n) of the n ascending samples),
 * rounded. NULL without samples.
 */
export const rawPercentile = (level: number, expr: string) =>
  rounded(`toFloat64(quantileExact(${level})(${expr}))`);

/**
 * From a merged histogram `h` (sumMap of (rounded value, count), keys ascending): the same index
 * floor(level · n) into the samples, found by the running count. NULL without samples.
 */
export const histogramPercentile = (level: number, h: string) =>
  `if(arraySum(${h}.2) = 0, NULL,
        arrayElement(${h}.1, arrayFirstIndex(c -> c > floor(${level} * arraySum(${h}.2)), arrayCumSum(${h}.2))))`;
