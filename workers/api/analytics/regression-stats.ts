// The statistics of build regressions (docs/analytics.md, "Build regressions"), pure functions over
// session values: no I/O, no randomness, so the same data always gives the same answer.
//
// A build's value in a group is the median of its sessions' values (nearest-rank: the k-th smallest of
// n, k = ceil(n / 2), as every percentile of the house). The interval for the relative difference of the
// two medians is the percentile interval of the *exact* bootstrap distribution of the ratio of medians:
// the distribution that infinitely many resamples would give, computed instead of sampled. For sorted
// values x, the k-th smallest of n draws with replacement is ≤ x_j exactly when at least k draws are
// ≤ x_j, a Binomial(n, c_j / n) event (c_j: how many values are ≤ x_j), so each build's bootstrap median
// has a closed-form distribution (Maritz & Jarrett 1978); the two builds' resamples are independent, so
// the ratio's distribution is their product, and its quantiles are found by bisection on the ratio.
// No seed is needed: there is no sampling error to seed.

/** Two-sided level of each interval before the correction for the number of groups. */
export const ALPHA = 0.05;

/** Probability mass below which the tails of a bootstrap median's distribution are cut. */
const TAIL_CUT = 1e-13;

/**
 * A build's session values of one group, ascending, as their distinct values with how many sessions
 * have each: all of them (rankedOf), or only the values holding the central ranks (centralRanks), which
 * is all the median, its bootstrap distribution and the test read. `n` counts every value, `min` is the
 * smallest of all (null when there is none), `below` how many values lie below `values[0]`.
 */
export type RankedValues = {
  n: number;
  min: number | null;
  below: number;
  values: number[];
  counts: number[];
};

/** Ascending values as RankedValues, every distinct value kept. */
export function rankedOf(sorted: readonly number[]): RankedValues {
  const values: number[] = [];
  const counts: number[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const v = sorted[i] as number;
    if (i > 0 && sorted[i - 1] === v) {
      counts[counts.length - 1] = (counts[counts.length - 1] as number) + 1;
    } else {
      values.push(v);
      counts.push(1);
    }
  }
  return { n: sorted.length, min: sorted.length ? (sorted[0] as number) : null, below: 0, values, counts };
}

/**
 * The ranks that can matter of n values (1-based, inclusive): k ± (⌈6·√n⌉ + 2) around the median's
 * rank k = ⌈n / 2⌉. A value whose ranks all lie below k − t has bootstrap cdf P(Binomial(n, c / n) ≥ k)
 * ≤ exp(−2t² / n) < 1e-31 by Hoeffding's inequality (c < k − t values are ≤ it), and one above k + t
 * follows a value whose cdf misses 1 by as little: far inside medianDistribution's 1e-13 tail cut, so
 * the values outside change neither its support nor its probabilities, nor the median. The statement
 * that sends the values (regressions.ts, sessionValueRanks) keeps the same ranks.
 */
export function centralSpan(n: number): [number, number] {
  const k = Math.max(1, Math.ceil(n / 2));
  const t = Math.ceil(6 * Math.sqrt(n)) + 2;
  return [k - t, k + t];
}

/** The distinct values holding a rank of centralSpan (and `below` the count of the values left out below). */
export function centralRanks(r: RankedValues): RankedValues {
  const [lo, hi] = centralSpan(r.n);
  const values: number[] = [];
  const counts: number[] = [];
  let atMost = r.below;
  let below = r.below;
  for (let i = 0; i < r.values.length; i++) {
    const c = r.counts[i] as number;
    const first = atMost + 1;
    atMost += c;
    if (atMost < lo) {
      below = atMost;
    } else if (first <= hi) {
      values.push(r.values[i] as number);
      counts.push(c);
    }
  }
  return { n: r.n, min: r.min, below, values, counts };
}

/** Nearest-rank median of ascending values (the k-th smallest, k = ceil(n / 2)); null when empty. */
export function nearestRankMedian(sorted: readonly number[]): number | null {
  if (sorted.length === 0) {
    return null;
  }
  return sorted[Math.max(1, Math.ceil(sorted.length / 2)) - 1] ?? null;
}

/** nearestRankMedian of ranked values (the median's rank is always among those kept). */
export function rankedMedian(r: RankedValues): number | null {
  if (r.n === 0) {
    return null;
  }
  const k = Math.max(1, Math.ceil(r.n / 2));
  let atMost = r.below;
  for (let i = 0; i < r.values.length; i++) {
    atMost += r.counts[i] as number;
    if (atMost >= k) {
      return r.values[i] as number;
    }
  }
  return null;
}

/** The distinct values a build's bootstrap median takes, ascending, with their probabilities. */
export type MedianDistribution = { values: number[]; probs: number[] };

/**
 * The exact bootstrap distribution of the nearest-rank median of `sorted` (ascending, n ≥ 1):
 * P(median* ≤ v_i) = P(Binomial(n, c_i / n) ≥ k) = I_{c_i/n}(k, n − k + 1), the regularized incomplete
 * beta function. Values whose probability is below 1e-13 on either tail are left out (at most 2e-13 of
 * the mass); that keeps about 8·√n values of a large build instead of all n.
 */
export function medianDistribution(sorted: readonly number[]): MedianDistribution {
  return rankedDistribution(rankedOf(sorted));
}

/** medianDistribution of ranked values: the same answer from all of them or from centralRanks. */
export function rankedDistribution(r: RankedValues): MedianDistribution {
  const n = r.n;
  const k = Math.max(1, Math.ceil(n / 2));
  // How many values are ≤ each distinct value.
  const distinct = r.values;
  const atMost: number[] = [];
  let sum = r.below;
  for (const c of r.counts) {
    sum += c;
    atMost.push(sum);
  }
  const cdf = (i: number) => betaRegularized((i < 0 ? r.below : (atMost[i] as number)) / n, k, n - k + 1);
  // The first index whose cdf passes TAIL_CUT and the first whose cdf reaches 1 − TAIL_CUT: the cdf is
  // monotone, so two binary searches bound the support without evaluating every value.
  const firstAbove = (limit: number) => {
    let lo = 0;
    let hi = distinct.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf(mid) > limit) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  };
  const from = firstAbove(TAIL_CUT);
  const to = Math.max(from, firstAbove(1 - TAIL_CUT));
  const values: number[] = [];
  const probs: number[] = [];
  let prev = cdf(from - 1);
  for (let i = from; i <= to; i++) {
    // The largest of all values: exactly 1.
    const c = atMost[i] === n ? 1 : cdf(i);
    values.push(distinct[i] as number);
    probs.push(c - prev);
    prev = c;
  }
  return { values, probs };
}

/**
 * P(C / B ≤ r) (strict: P(C / B < r)) for independent B and C with these distributions, all values > 0:
 * Σ_i P(B = b_i) · P(C ≤ r · b_i), one pass as r · b_i ascends with b_i.
 */
function ratioCdf(b: MedianDistribution, c: MedianDistribution, r: number, strict: boolean): number {
  let total = 0;
  let j = 0;
  let below = 0;
  for (let i = 0; i < b.values.length; i++) {
    const t = r * (b.values[i] as number);
    while (j < c.values.length && (strict ? (c.values[j] as number) < t : (c.values[j] as number) <= t)) {
      below += c.probs[j] as number;
      j++;
    }
    total += (b.probs[i] as number) * below;
  }
  return total;
}

/** The smallest ratio r with P(C / B ≤ r) ≥ p (the step function's jump), by bisection. */
function ratioQuantile(b: MedianDistribution, c: MedianDistribution, p: number): number {
  const bMin = b.values[0] as number;
  const bMax = b.values[b.values.length - 1] as number;
  const cMin = c.values[0] as number;
  const cMax = c.values[c.values.length - 1] as number;
  let lo = cMin / bMax;
  let hi = cMax / bMin;
  if (ratioCdf(b, c, lo, false) >= p) {
    return lo;
  }
  // Invariant: cdf(lo) < p ≤ cdf(hi). 200 halvings reach the jump to the last bit of a double.
  for (let i = 0; i < 200 && hi - lo > hi * 1e-15; i++) {
    const mid = (lo + hi) / 2;
    if (ratioCdf(b, c, mid, false) >= p) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  // The jump is a ratio of two medians in (lo, hi]: answer that ratio itself, not its approximation
  // (a ratio of exactly 1 must read 0 %, not +1e-13 %, or "wholly above 0" would hold by rounding).
  let exact = hi;
  for (const bv of b.values) {
    // The smallest c with c / bv > lo.
    let l = 0;
    let h = c.values.length;
    while (l < h) {
      const mid = (l + h) >> 1;
      if ((c.values[mid] as number) / bv > lo) {
        h = mid;
      } else {
        l = mid + 1;
      }
    }
    if (l < c.values.length) {
      const r = (c.values[l] as number) / bv;
      if (r <= hi && r < exact) {
        exact = r;
      }
    }
  }
  return exact;
}

/** What one comparison (a group or a cell) gives before the correction for the number of tests. */
export type Tested = {
  baseline: MedianDistribution;
  candidate: MedianDistribution;
  /** Two-sided bootstrap p-value of "the medians are equal": 2 · min(P(ratio ≤ 1), P(ratio ≥ 1)), ≤ 1. */
  p: number;
};

/** Both builds' bootstrap distributions and the p-value; null when a value is not positive. */
export function test(baseline: readonly number[], candidate: readonly number[]): Tested | null {
  return rankedTest(rankedOf(baseline), rankedOf(candidate));
}

/** test() of ranked values. */
export function rankedTest(baseline: RankedValues, candidate: RankedValues): Tested | null {
  if (
    baseline.n === 0 ||
    candidate.n === 0 ||
    (baseline.min as number) <= 0 ||
    (candidate.min as number) <= 0
  ) {
    return null;
  }
  const b = rankedDistribution(baseline);
  const c = rankedDistribution(candidate);
  const atMostOne = ratioCdf(b, c, 1, false);
  const atLeastOne = 1 - ratioCdf(b, c, 1, true);
  return { baseline: b, candidate: c, p: Math.min(1, 2 * Math.min(atMostOne, atLeastOne)) };
}

/**
 * The two-sided interval at level 1 − a for the relative difference of medians, in percent of the
 * baseline: [Q(a/2) − 1, Q(1 − a/2) − 1] · 100 with Q the ratio's bootstrap quantile.
 */
export function interval(t: Tested, a: number): [number, number] {
  const low = ratioQuantile(t.baseline, t.candidate, a / 2);
  const high = ratioQuantile(t.baseline, t.candidate, 1 - a / 2);
  return [(low - 1) * 100, (high - 1) * 100];
}

/**
 * Benjamini–Hochberg at ALPHA over the p-values of one family of tests: R, the number of discoveries
 * (the largest i with p_(i) ≤ i · ALPHA / m). The intervals are then taken at level 1 − max(R, 1) · ALPHA / m
 * (Benjamini & Yekutieli 2005, false-coverage-rate adjusted intervals): a test's interval excludes "no
 * difference" exactly when BH rejects it, so "the interval lies wholly on the worse side" already
 * carries the correction.
 */
export function adjustedLevel(ps: readonly number[]): number {
  const m = ps.length;
  if (m === 0) {
    return ALPHA;
  }
  const sorted = [...ps].sort((x, y) => x - y);
  let r = 0;
  for (let i = 1; i <= m; i++) {
    if ((sorted[i - 1] as number) <= (i * ALPHA) / m) {
      r = i;
    }
  }
  return (Math.max(r, 1) * ALPHA) / m;
}

/**
 * Regularized incomplete beta I_x(a, b) by its continued fraction (modified Lentz), with the symmetry
 * I_x(a, b) = 1 − I_{1−x}(b, a) where the fraction converges slowly. Accurate to about 1e-14 for the
 * integer a, b of a binomial tail.
 */
export function betaRegularized(x: number, a: number, b: number): number {
  if (x <= 0) {
    return 0;
  }
  if (x >= 1) {
    return 1;
  }
  const lnFront = logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x);
  if (x < (a + 1) / (a + b + 2)) {
    return (Math.exp(lnFront) * betaFraction(x, a, b)) / a;
  }
  return 1 - (Math.exp(lnFront) * betaFraction(1 - x, b, a)) / b;
}

function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = 1 / (Math.abs(d) < tiny ? tiny : d);
  let h = d;
  for (let m = 1; m <= 100_000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    d = 1 / (Math.abs(d) < tiny ? tiny : d);
    c = 1 + aa / c;
    c = Math.abs(c) < tiny ? tiny : c;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    d = 1 / (Math.abs(d) < tiny ? tiny : d);
    c = 1 + aa / c;
    c = Math.abs(c) < tiny ? tiny : c;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) {
      break;
    }
  }
  return h;
}

/** ln Γ(z) for z > 0 (Lanczos, g = 7, 9 terms): relative error about 1e-15. */
export function logGamma(z: number): number {
  const g = 7;
  const coef = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (z < 0.5) {
    return Math.log(Math.PI / Math.sin(Math.PI * z)) - logGamma(1 - z);
  }
  const x = z - 1;
  let sum = coef[0] as number;
  for (let i = 1; i < g + 2; i++) {
    sum += (coef[i] as number) / (x + i);
  }
  const t = x + g + 0.5;
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** A build's sessions judged in a group and how many of them were poor (session-verdicts.ts). */
export type Proportion = { x: number; n: number };

/** What comparing two proportions gives: the difference (candidate − baseline, 0–1) and its test. */
export type ProportionTested = { b: Proportion; c: Proportion; diff: number; p: number };

/**
 * Two proportions compared (the candidate's share of poor sessions against the baseline's): the two-sided
 * p-value of the pooled z-test of equal shares (1 when neither or both sides hold every session), for
 * Benjamini–Hochberg as the medians' p-values are; null without a session on either side.
 */
export function proportionTest(b: Proportion, c: Proportion): ProportionTested | null {
  if (b.n === 0 || c.n === 0) {
    return null;
  }
  const pb = b.x / b.n;
  const pc = c.x / c.n;
  const pooled = (b.x + c.x) / (b.n + c.n);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / b.n + 1 / c.n));
  const p = se === 0 ? 1 : Math.min(1, 2 * normalUpper(Math.abs(pc - pb) / se));
  return { b, c, diff: pc - pb, p };
}

/**
 * Newcombe's hybrid score interval (1998, method 10) for the difference of two proportions at level
 * 1 − a, in percentage points: each side's Wilson score interval, combined. It keeps its level at the
 * small counts and shares near 0 a regression's poor sessions have, where the Wald interval does not.
 */
export function proportionInterval(t: ProportionTested, a: number): [number, number] {
  const z = normalQuantile(1 - a / 2);
  const [lb, ub] = wilson(t.b, z);
  const [lc, uc] = wilson(t.c, z);
  const pb = t.b.x / t.b.n;
  const pc = t.c.x / t.c.n;
  const low = t.diff - Math.sqrt((pc - lc) ** 2 + (ub - pb) ** 2);
  const high = t.diff + Math.sqrt((uc - pc) ** 2 + (pb - lb) ** 2);
  return [low * 100, high * 100];
}

/** The Wilson score interval of a proportion at the normal quantile z. */
export function wilson(s: Proportion, z: number): [number, number] {
  const z2 = z * z;
  const centre = (s.x + z2 / 2) / (s.n + z2);
  const half = (z * Math.sqrt((s.x * (s.n - s.x)) / s.n + z2 / 4)) / (s.n + z2);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** P(Z > z) of the standard normal: erfc(z / √2) / 2, by erfc's Chebyshev fit (relative error < 1.2e-7). */
export function normalUpper(z: number): number {
  const x = z / Math.SQRT2;
  const t = 1 / (1 + 0.5 * Math.abs(x));
  const erfc =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return (x >= 0 ? erfc : 2 - erfc) / 2;
}

/** The standard normal's quantile (Acklam's rational approximation, relative error < 1.2e-9). */
export function normalQuantile(p: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  const poly = (k: number[], x: number) => k.reduce((s, v) => s * x + v, 0);
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return poly(c, q) / (poly(d, q) * q + 1);
  }
  if (p > 1 - low) {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    return -poly(c, q) / (poly(d, q) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return (poly(a, r) * q) / (poly(b, r) * r + 1);
}
