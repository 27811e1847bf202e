// A sample as percentiles count it (docs/analytics.md: Percentiles, workers/api/analytics/percentiles.ts),
// for the references: computed here from the Float64 bits, not with the service's code.

/**
 * The lower bound of its bucket, the Float64 values sharing sign, exponent and the 8 leading mantissa bits.
 */
export function bucketFloor(v: number): number {
  const bits = new DataView(new ArrayBuffer(8));
  bits.setFloat64(0, v);
  // Big-endian: the first 32 bits hold sign, exponent and the top 20 mantissa bits; keep 1 + 11 + 8.
  bits.setUint32(0, bits.getUint32(0) & 0xfffff000);
  bits.setUint32(4, 0);
  return bits.getFloat64(0);
}
