// No DOM here: the unit test (test/unit/bar-range.test.ts) imports it under the Workers' types.

/** A bar chart's value range: zero and the data's extremes, with a little room past the longest bar. */
export function barRange(min: number | null, max: number | null): [number, number] {
  const lo = Math.min(0, min ?? 0);
  const hi = Math.max(0, max ?? 0);
  if (lo === hi) {
    return [0, 1];
  }
  const pad = (hi - lo) * 0.05;
  return [lo < 0 ? lo - pad : 0, hi > 0 ? hi + pad : 0];
}
