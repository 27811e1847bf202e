// Percentiles over quantized samples, so rollups can keep them as small mergeable states
// (schema/clickhouse/migrations/0004_rollups.sql) and raw-event queries give the very same answers.
//
// A sample v counts as q(v): v with all but the 8 leading bits of its Float64 mantissa cleared, the lower
// bound of its bucket (256 buckets per octave). For v > 0, 0 ≤ v − q(v) < 2^-8 · v (0.39 %); values with
// at most 9 significant bits stay exact (integers below 512: fps 30, 60, 144; 16.5 ms; 4,096 MB). A state
// holds one entry per bucket whatever the volume (about 850 for a metric spanning a factor of 10), where
// rounding to a fixed step kept one per distinct value (memory in MB at 0.01 had hundreds of thousands).
//
// The percentile at `level` of n quantized samples is the nearest-rank one: the k-th smallest, with
// k = max(1, ceil(level · n)) (ClickHouse's quantileExactWeighted with weight 1). q is monotone, so it is
// q of the raw samples' own nearest-rank percentile.

/** q(v) in SQL over a non-null Float64 expression (the top 20 bits of its Float64). */
export const quantized = (expr: string) =>
  `reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(${expr}), 0xFFFFF00000000000))`;

/**
 * From raw events: the nearest-rank percentile of the quantized non-null values of `expr` (any numeric
 * type, nullable or not). NULL without samples.
 */
export const rawPercentile = (level: number, expr: string) =>
  `quantileExactWeighted(${level})(if(isNull(${expr}), NULL, ${quantized(`toFloat64(assumeNotNull(${expr}))`)}), toUInt8(1))`;
