/**
 * builds/compare's answer without its session-level verdict fields (verdict, ci95, sessionDiffPct and
 * the session counts), as the sample reference (analytics-reference.ts refCompare) computes it. Those
 * fields are builds/regressions' statistics, proven by its reference tests and build-verdicts.test.ts.
 */
export function samplesOnly(c: unknown): unknown {
  const cmp = c as { diffs: Array<Record<string, unknown>> };
  return {
    ...cmp,
    diffs: cmp.diffs.map(
      ({ verdict: _v, ci95: _c, sessionDiffPct: _s, baselineSessions: _b, candidateSessions: _n, ...d }) => d,
    ),
  };
}
