import { describe, expect, it } from "vitest";
import {
  centralRanks,
  centralSpan,
  medianDistribution,
  nearestRankMedian,
  rankedDistribution,
  rankedMedian,
  rankedOf,
} from "../../workers/api/analytics/regression-stats.js";
import {
  judgeGroups,
  judgeRankedGroups,
  type SessionSides,
} from "../../workers/api/analytics/regressions.js";
import { normal, rng } from "../support/regressions-dataset.js";

// builds/compare sends each build's session values as the distinct values of their central ranks
// (regression-stats.ts centralRanks; regressions.ts sessionValueRanks does the same in SQL): these
// judge exactly as all the values do, bit for bit, however many sessions are left out.

const quantize = (v: number) => {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, v);
  dv.setUint32(0, dv.getUint32(0) & 0xfffff000);
  dv.setUint32(4, 0);
  return Math.fround(dv.getFloat64(0));
};

/** n quantized session values around `level` (lognormal, sd `sd`), ascending. */
function values(r: () => number, n: number, level: number, sd: number): number[] {
  return Array.from({ length: n }, () => quantize(level * Math.exp(sd * normal(r)))).sort((a, b) => a - b);
}

const central = (g: SessionSides) => ({
  key: g.key,
  b: centralRanks(rankedOf(g.b)),
  c: centralRanks(rankedOf(g.c)),
});

describe("central ranks", () => {
  it("keep k ± (⌈6·√n⌉ + 2) and count the values left out below", () => {
    expect(centralSpan(1)).toEqual([-7, 9]);
    expect(centralSpan(400)).toEqual([200 - 122, 200 + 122]);
    // 1..1000 once each, then 400 twice: ranks 78..322 of 1000 values ascend with a tie at 400.
    const xs = [...Array.from({ length: 999 }, (_, i) => i + 1), 400].sort((a, b) => a - b);
    const r = centralRanks(rankedOf(xs));
    const [lo, hi] = centralSpan(1000);
    expect(r.n).toBe(1000);
    expect(r.min).toBe(1);
    expect(r.below).toBe(lo - 1);
    expect(r.values[0]).toBe(lo);
    expect(r.values.at(-1)).toBe(hi - 1);
    expect(r.counts.reduce((s, c) => s + c, 0)).toBe(hi - lo + 1);
    expect(rankedMedian(r)).toBe(nearestRankMedian(xs));
  });

  it("give the same bootstrap distribution and median as all the values, from 1 to 20,000 sessions", () => {
    const r = rng(42);
    let trimmed = 0;
    for (const n of [1, 2, 3, 20, 57, 150, 151, 400, 1000, 5000, 20_000]) {
      for (const sd of [0.001, 0.05, 0.3, 1.5]) {
        const xs = values(r, n, 16, sd);
        const all = rankedOf(xs);
        const kept = centralRanks(all);
        trimmed += all.values.length - kept.values.length;
        expect(rankedDistribution(kept), `n ${n} sd ${sd}`).toEqual(medianDistribution(xs));
        expect(rankedMedian(kept)).toBe(nearestRankMedian(xs));
      }
    }
    // The cut did leave values out.
    expect(trimmed).toBeGreaterThan(5000);
  });

  it("judge every family exactly as all the values do (verdicts, intervals, medians, counts)", () => {
    const r = rng(7);
    for (let i = 0; i < 60; i++) {
      const shift = [1, 1.02, 1.05, 0.95, 1.2][i % 5] as number;
      const family: SessionSides[] = [0, 1, 2, 3].map((g) => {
        const n = [15, 40, 300, 3000][(g + i) % 4] as number;
        const sd = [0.02, 0.1, 0.4][(g + i) % 3] as number;
        return {
          key: g === 3 ? null : `g${g}`,
          b: values(r, n, 16, sd),
          c: values(r, n + g, 16 * shift, sd),
        };
      });
      for (const metric of ["frame_time", "fps"] as const) {
        const q = { metric, minEffectPct: i % 2 === 0 ? 3 : 0, minSessions: 20 };
        expect(judgeRankedGroups(family.map(central), q), `family ${i} ${metric}`).toEqual(
          judgeGroups(family, q),
        );
      }
    }
  });

  it("a value ≤ 0 anywhere, even among those left out, is no_change as with all the values", () => {
    const b = [0, ...values(rng(3), 999, 16, 0.1)];
    const c = values(rng(4), 1000, 17, 0.1);
    const q = { metric: "frame_time" as const, minEffectPct: 3, minSessions: 20 };
    const [whole] = judgeGroups([{ key: null, b, c }], q);
    expect(whole?.verdict).toBe("no_change");
    expect(judgeRankedGroups([central({ key: null, b, c })], q)).toEqual([whole]);
  });
});
