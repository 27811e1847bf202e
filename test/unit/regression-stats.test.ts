import { describe, expect, it } from "vitest";
import {
  adjustedLevel,
  betaRegularized,
  medianDistribution,
} from "../../workers/api/analytics/regression-stats.js";
import { judgeGroups, type SessionSides } from "../../workers/api/analytics/regressions.js";
import { normal, rng } from "../support/regressions-dataset.js";
import { refJudge } from "../support/regressions-reference.js";

// The statistics of builds/regressions over session values drawn here (the endpoint's own tests,
// builds-regressions.test.ts, go through ingest and the rollups). Session values are what a rollup
// gives: the quantized median of a session's lognormal samples around its own lognormal level.

const quantize = (v: number) => {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, v);
  dv.setUint32(0, dv.getUint32(0) & 0xfffff000);
  dv.setUint32(4, 0);
  return dv.getFloat64(0);
};

function sessionValues(
  r: () => number,
  n: number,
  o: { level: number; sessionSd: number; sampleSd: number; samples: number; shift?: number },
): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const level = o.level * Math.exp(o.sessionSd * normal(r));
    const xs = Array.from({ length: o.samples }, () =>
      quantize(Math.fround(level * (o.shift ?? 1) * Math.exp(o.sampleSd * normal(r)))),
    ).sort((a, b) => a - b);
    out.push(xs[Math.ceil(o.samples / 2) - 1] as number);
  }
  return out.sort((a, b) => a - b);
}

const NOISY = { level: 16, sessionSd: 0.15, sampleSd: 0.2, samples: 10 };

/** A family of 4 groups of 20–59 sessions per build, both builds from one distribution. */
function aaFamily(r: () => number): SessionSides[] {
  return [0, 1, 2, 3].map((g) => ({
    key: `g${g}`,
    b: sessionValues(r, 20 + Math.floor(r() * 40), NOISY),
    c: sessionValues(r, 20 + Math.floor(r() * 40), NOISY),
  }));
}

describe("regression statistics", () => {
  it("agree with the reference (binomial sums, every pair of medians, BH step-up) on 150 families", () => {
    const r = rng(11);
    for (let i = 0; i < 150; i++) {
      const shift = [1, 1, 1.05, 1.12, 0.9][i % 5] as number;
      const family = [0, 1, 2].map((g) => ({
        key: g === 2 ? null : `g${g}`,
        b: sessionValues(r, 3 + Math.floor(r() * 45), NOISY),
        c: sessionValues(r, 3 + Math.floor(r() * 45), { ...NOISY, shift }),
      }));
      for (const metric of ["frame_time", "fps"] as const) {
        const q = { metric, minEffectPct: i % 2 === 0 ? 3 : 0, minSessions: 20 };
        expect(judgeGroups(family, q), `family ${i} ${metric}`).toEqual(refJudge(family, q));
      }
    }
  });

  it("the exact bootstrap distribution of a median is what resampling converges to", () => {
    const r = rng(5);
    const xs = sessionValues(r, 25, NOISY);
    const exact = medianDistribution(xs);
    expect(exact.probs.reduce((s, p) => s + p, 0)).toBeCloseTo(1, 12);
    // 40,000 seeded resamples: every cumulative probability within 0.01 of the exact one (the
    // resampling error is about 0.0025 at most).
    const draws = 40_000;
    const counts = new Map<number, number>();
    for (let i = 0; i < draws; i++) {
      const resample = Array.from(
        { length: xs.length },
        () => xs[Math.floor(r() * xs.length)] as number,
      ).sort((a, b) => a - b);
      const m = resample[Math.ceil(resample.length / 2) - 1] as number;
      counts.set(m, (counts.get(m) ?? 0) + 1);
    }
    let cumExact = 0;
    let cumDrawn = 0;
    exact.values.forEach((v, i) => {
      cumExact += exact.probs[i] as number;
      cumDrawn += (counts.get(v) ?? 0) / draws;
      expect(Math.abs(cumExact - cumDrawn)).toBeLessThan(0.01);
    });
  });

  it("the incomplete beta function gives binomial tails", () => {
    // P(Bin(10, 0.3) ≥ 5) = 0.15026833…; P(Bin(1, p) ≥ 1) = p.
    expect(betaRegularized(0.3, 5, 6)).toBeCloseTo(0.1502683326, 9);
    expect(betaRegularized(0.42, 1, 1)).toBeCloseTo(0.42, 12);
  });

  it("Benjamini–Hochberg leaves level R · α / m, and α / m without discoveries", () => {
    expect(adjustedLevel([0.001, 0.02, 0.04, 0.5])).toBeCloseTo((2 * 0.05) / 4, 12);
    expect(adjustedLevel([0.2, 0.5])).toBeCloseTo(0.05 / 2, 12);
    expect(adjustedLevel([0.01])).toBeCloseTo(0.05, 12);
  });

  it("a +12 % shift of 30 sessions per build is regressed in ≥ 95 % of draws, and fps drops as regressed", () => {
    const r = rng(3);
    let regressed = 0;
    let fpsRegressed = 0;
    const draws = 200;
    for (let i = 0; i < draws; i++) {
      const o = { level: 16, sessionSd: 0.06, sampleSd: 0.1, samples: 10 };
      const b = sessionValues(r, 30, o);
      const c = sessionValues(r, 30, { ...o, shift: 1.12 });
      const [g] = judgeGroups([{ key: null, b, c }], {
        metric: "frame_time",
        minEffectPct: 3,
        minSessions: 20,
      });
      regressed += g?.verdict === "regressed" ? 1 : 0;
      // The same sessions as fps (1000 / frame time): lower is worse.
      const fps = (xs: number[]) => xs.map((v) => 1000 / v).sort((x, y) => x - y);
      const [f] = judgeGroups([{ key: null, b: fps(b), c: fps(c) }], {
        metric: "fps",
        minEffectPct: 3,
        minSessions: 20,
      });
      fpsRegressed += f?.verdict === "regressed" ? 1 : 0;
    }
    expect(regressed / draws).toBeGreaterThanOrEqual(0.95);
    expect(fpsRegressed / draws).toBeGreaterThanOrEqual(0.95);
  });

  it("A/A: 600 build pairs from one distribution, 4 groups each, give ≤ 5 % regressed verdicts", () => {
    const r = rng(2026);
    const rates: Record<string, number> = {};
    for (const minEffectPct of [0, 3]) {
      let regressed = 0;
      let verdicts = 0;
      for (let pair = 0; pair < 600; pair++) {
        for (const g of judgeGroups(aaFamily(r), { metric: "frame_time", minEffectPct, minSessions: 20 })) {
          verdicts++;
          regressed += g.verdict === "regressed" ? 1 : 0;
        }
      }
      rates[`minEffectPct=${minEffectPct}`] = regressed / verdicts;
      expect(regressed / verdicts).toBeLessThanOrEqual(0.05);
    }
    // The measured rates (docs/analytics.md, "Build regressions", quotes a larger run).
    console.log("A/A false-positive rate of regressed", rates);
  });
});
