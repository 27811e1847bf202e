// builds/regressions computed in plain TypeScript over the generated events, written from the
// definitions in docs/analytics.md ("Build regressions") and not from the SQL or the Worker's
// statistics: session medians from the raw samples, the bootstrap distribution of a median by summing
// binomial terms (not the incomplete beta function), the ratio's distribution by listing every pair of
// medians (not bisection), Benjamini–Hochberg by its step-up rule.
import type { GenEvent } from "./analytics-dataset.js";
import { bucketFloor as quantize } from "./analytics-reference.js";
import { addAcc, emptyAcc, refVerdicts, sideOf, WHOLE_KEY } from "./session-verdicts-reference.js";

type Metric = "frame_time" | "fps" | "gpu_time" | "memory";
type Judged = Metric | "poor_session_share";
type By = "platform" | "gpu" | "device_model" | "resolution" | "os_version" | "gpu_tier";

export type RegressionParams = {
  candidate: string;
  baseline: string;
  metric: Judged;
  by: By;
  days: number;
  mapId?: string;
  minEffectPct: number;
  minSessions: number;
  /** Each side's sessions by verdict and frame causes (always with poor_session_share). */
  sessionVerdicts?: boolean;
};

const DAY_MS = 86_400_000;
const ALPHA = 0.05;
const round2 = (v: number) => Math.round(v * 100) / 100;

/** The k-th smallest, k = ceil(n / 2). */
function median(sorted: number[]): number | null {
  return sorted.length ? (sorted[Math.max(1, Math.ceil(sorted.length / 2)) - 1] as number) : null;
}

function sampleOf(e: GenEvent, m: Metric): number | undefined {
  const p = e.perf ?? {};
  const v =
    m === "frame_time"
      ? p.frameTimeMs
      : m === "fps"
        ? p.fps
        : m === "gpu_time"
          ? p.gpuTimeMs
          : p.memoryUsedBytes === undefined
            ? undefined
            : p.memoryUsedBytes / 1_048_576;
  if (v === undefined || v <= 0) {
    return undefined;
  }
  return m === "memory" ? v : Math.fround(v);
}

/** A session's latest device_info attributes (docs/ingest.md: within a day either side of the window). */
type DeviceInfos = Map<string, Record<string, string>>;

function deviceInfos(events: GenEvent[], fromUs: number, toUs: number): DeviceInfos {
  const latest = new Map<string, GenEvent>();
  for (const e of events) {
    if (e.eventName !== "device_info" || e.tsUs < fromUs - DAY_MS * 1000 || e.tsUs >= toUs + DAY_MS * 1000) {
      continue;
    }
    const seen = latest.get(e.sessionId);
    if (seen === undefined || e.tsUs > seen.tsUs) {
      latest.set(e.sessionId, e);
    }
  }
  return new Map([...latest].map(([s, e]) => [s, e.attributes ?? {}]));
}

/** The sample's own device field where sent, else its session's device_info (platform: the batch's). */
function hardwareOf(e: GenEvent, by: By, infos: DeviceInfos): string {
  const own = (v: string | undefined, name: string) => (v ? v : (infos.get(e.sessionId)?.[name] ?? ""));
  switch (by) {
    case "platform":
      return e.platform;
    case "gpu":
    case "gpu_tier":
      return own(e.device?.gpu, "gpu");
    case "device_model":
      return own(e.device?.deviceModel, "device_model");
    case "resolution":
      return own(e.device?.resolution, "resolution");
    case "os_version":
      return own(e.device?.osVersion, "os_version");
  }
}

const isPerf = (e: GenEvent) => {
  const p = e.perf ?? {};
  return (
    (p.fps ?? 0) > 0 || (p.frameTimeMs ?? 0) > 0 || (p.memoryUsedBytes ?? 0) > 0 || (p.gpuTimeMs ?? 0) > 0
  );
};

/** Each session's median of the metric, per grouping `keyOf` of its samples. */
function sessionMedians(xs: GenEvent[], m: Metric, keyOf: (e: GenEvent) => string): Map<string, number[]> {
  const bySession = new Map<string, Map<string, number[]>>();
  for (const e of xs) {
    const v = sampleOf(e, m);
    if (v === undefined) {
      continue;
    }
    const key = keyOf(e);
    const sessions = bySession.get(key) ?? new Map<string, number[]>();
    sessions.set(e.sessionId, [...(sessions.get(e.sessionId) ?? []), quantize(v)]);
    bySession.set(key, sessions);
  }
  return new Map(
    [...bySession].map(([key, sessions]) => [
      key,
      [...sessions.values()].map((vs) => median(vs.sort((a, b) => a - b)) as number).sort((a, b) => a - b),
    ]),
  );
}

/** ln(i!) for i ≤ n, by summing logarithms. */
function logFactorials(n: number): number[] {
  const out = [0];
  for (let i = 1; i <= n; i++) {
    out.push((out[i - 1] as number) + Math.log(i));
  }
  return out;
}

/** The bootstrap median's distribution: P(median* ≤ x_j) = Σ_{i ≥ k} C(n, i) p^i (1 − p)^(n − i), p = c_j / n. */
function bootstrapMedian(sorted: number[]): Array<{ v: number; p: number }> {
  const n = sorted.length;
  const k = Math.max(1, Math.ceil(n / 2));
  const lf = logFactorials(n);
  const atLeastK = (p: number) => {
    if (p >= 1) {
      return 1;
    }
    let s = 0;
    for (let i = k; i <= n; i++) {
      s += Math.exp(
        (lf[n] as number) -
          (lf[i] as number) -
          (lf[n - i] as number) +
          i * Math.log(p) +
          (n - i) * Math.log1p(-p),
      );
    }
    return s;
  };
  const out: Array<{ v: number; p: number }> = [];
  let prev = 0;
  for (let j = 0; j < n; j++) {
    if (j + 1 < n && sorted[j + 1] === sorted[j]) {
      continue;
    }
    const cdf = atLeastK((j + 1) / n);
    out.push({ v: sorted[j] as number, p: cdf - prev });
    prev = cdf;
  }
  return out;
}

type Pair = { ratio: number; p: number };

function ratioPairs(b: number[], c: number[]): Pair[] {
  const pairs: Pair[] = [];
  for (const x of bootstrapMedian(b)) {
    for (const y of bootstrapMedian(c)) {
      pairs.push({ ratio: y.v / x.v, p: x.p * y.p });
    }
  }
  return pairs.sort((u, v) => u.ratio - v.ratio);
}

/** The smallest listed ratio whose cumulative probability reaches q. */
function quantileOf(pairs: Pair[], q: number): number {
  let cum = 0;
  for (const pair of pairs) {
    cum += pair.p;
    if (cum >= q - 1e-12) {
      return pair.ratio;
    }
  }
  return (pairs[pairs.length - 1] as Pair).ratio;
}

function pValue(pairs: Pair[]): number {
  const atMost = pairs.filter((x) => x.ratio <= 1).reduce((s, x) => s + x.p, 0);
  const atLeast = pairs.filter((x) => x.ratio >= 1).reduce((s, x) => s + x.p, 0);
  return Math.min(1, 2 * Math.min(atMost, atLeast));
}

type Side = { sessions: number; median: number | null };
export type RefGroup = {
  key: string | null;
  baseline: Side;
  candidate: Side;
  diffPct: number | null;
  ci95: [number, number] | null;
  verdict: "regressed" | "improved" | "no_change" | "insufficient_data";
};

/** One family judged together: tests, Benjamini–Hochberg, intervals at the level it leaves, verdicts. */
export function refJudge(
  family: Array<{ key: string | null; b: number[]; c: number[] }>,
  q: { metric: Metric; minEffectPct: number; minSessions: number },
): RefGroup[] {
  const worse = q.metric === "fps" ? -1 : 1;
  const pairs = family.map((g) =>
    g.b.length >= q.minSessions && g.c.length >= q.minSessions ? ratioPairs(g.b, g.c) : null,
  );
  const ps = pairs.flatMap((x) => (x === null ? [] : [pValue(x)])).sort((a, b) => a - b);
  let discoveries = 0;
  ps.forEach((p, i) => {
    if (p <= ((i + 1) * ALPHA) / ps.length) {
      discoveries = i + 1;
    }
  });
  const level = ps.length ? (Math.max(1, discoveries) * ALPHA) / ps.length : ALPHA;
  return family.map((g, i) => {
    const bm = median(g.b);
    const cm = median(g.c);
    const diff = bm === null || cm === null ? null : ((cm - bm) / bm) * 100;
    const ps2 = pairs[i];
    const ci: [number, number] | null =
      ps2 === null || ps2 === undefined
        ? null
        : [(quantileOf(ps2, level / 2) - 1) * 100, (quantileOf(ps2, 1 - level / 2) - 1) * 100];
    let verdict: RefGroup["verdict"] = "insufficient_data";
    if (ci !== null && diff !== null) {
      const worseSide = worse === 1 ? ci[0] > 0 : ci[1] < 0;
      const betterSide = worse === 1 ? ci[1] < 0 : ci[0] > 0;
      verdict =
        worseSide && diff * worse >= q.minEffectPct
          ? "regressed"
          : betterSide && -diff * worse >= q.minEffectPct
            ? "improved"
            : "no_change";
    }
    return {
      key: g.key,
      baseline: { sessions: g.b.length, median: bm },
      candidate: { sessions: g.c.length, median: cm },
      diffPct: diff === null ? null : round2(diff),
      ci95: ci === null ? null : [round2(ci[0]), round2(ci[1])],
      verdict,
    };
  });
}

const RANK = { regressed: 0, no_change: 1, improved: 2, insufficient_data: 3 } as const;
function worstFirst(metric: Metric) {
  const worse = metric === "fps" ? -1 : 1;
  const keyRank = (k: string | null) => (k === null ? "\uffff" : k);
  return (a: RefGroup, b: RefGroup) =>
    RANK[a.verdict] - RANK[b.verdict] ||
    (b.diffPct ?? -Infinity) * worse - (a.diffPct ?? -Infinity) * worse ||
    (keyRank(a.key) < keyRank(b.key) ? -1 : keyRank(a.key) > keyRank(b.key) ? 1 : 0);
}

/** gpu_tier: GPUs with ≥ minSessions baseline frame-time sessions, fastest first, in up to 3 tiers of about equal sessions. */
function tiers(baseFrame: Map<string, number[]>, minSessions: number): Map<string, string> {
  const gpus = [...baseFrame]
    .filter(([gpu, vs]) => gpu !== "" && vs.length >= minSessions)
    .map(([gpu, vs]) => ({ gpu, m: median(vs) as number, n: vs.length }))
    .sort((a, b) => a.m - b.m || (a.gpu < b.gpu ? -1 : 1));
  const names = [[], ["mid"], ["fast", "slow"], ["fast", "mid", "slow"]][
    Math.min(3, gpus.length)
  ] as string[];
  const total = gpus.reduce((s, g) => s + g.n, 0);
  const out = new Map<string, string>();
  let seen = 0;
  for (const g of gpus) {
    const mid = (seen + g.n / 2) / total;
    out.set(g.gpu, names[Math.min(names.length - 1, Math.floor(mid * names.length))] as string);
    seen += g.n;
  }
  return out;
}

export function refRegressions(events: GenEvent[], q: RegressionParams, nowMs: number) {
  const today = Date.parse(new Date(nowMs).toISOString().slice(0, 10));
  const fromUs = (today - (q.days - 1) * DAY_MS) * 1000;
  const toUs = (today + DAY_MS) * 1000;
  const of = (build: string) =>
    events.filter(
      (e) =>
        e.tsUs >= fromUs &&
        e.tsUs < toUs &&
        e.buildId === build &&
        isPerf(e) &&
        (q.mapId === undefined || e.mapId === q.mapId),
    );
  const base = of(q.baseline);
  const cand = of(q.candidate);
  const infos = deviceInfos(events, fromUs, toUs);
  // Every group's sides add their sessions' verdicts and frame causes; a GPU tier's are its GPUs' added.
  const keyBy = q.by === "gpu_tier" ? "gpu" : q.by;
  const verdicts = refVerdicts(events, {
    fromUs,
    toUs,
    mapId: q.mapId,
    keyOf: (e) => hardwareOf(e, keyBy, infos),
  });
  const tierOf =
    q.by === "gpu_tier"
      ? tiers(
          sessionMedians(base, "frame_time", (e) => hardwareOf(e, "gpu", infos)),
          q.minSessions,
        )
      : null;
  const gpus = [...new Set([...base, ...cand].map((e) => hardwareOf(e, "gpu", infos)))];
  const tierKey = (g: string) => (g === "" ? null : (tierOf?.get(g) ?? "unknown"));
  const acc = (build: string, key: string | null) => {
    if (tierOf === null || key === WHOLE_KEY) {
      return verdicts(build, key);
    }
    const inTier = gpus.filter((g) => tierKey(g) === key);
    return inTier.map((g) => verdicts(build, g === "" ? null : g)).reduce(addAcc, emptyAcc());
  };
  const side = (build: string, key: string | null) => sideOf(acc(build, key));
  const withSides = <G extends RefGroup>(g: G, key: string | null): G =>
    q.sessionVerdicts || q.metric === "poor_session_share"
      ? {
          ...g,
          baseline: { ...g.baseline, ...side(q.baseline, key) },
          candidate: { ...g.candidate, ...side(q.candidate, key) },
        }
      : g;
  if (q.metric === "poor_session_share") {
    const judged = (a: ReturnType<typeof emptyAcc>) => ({ x: a.poor, n: a.good + a.acceptable + a.poor });
    const sessionsIn = (a: ReturnType<typeof emptyAcc>) => a.good + a.acceptable + a.poor + a.unjudged;
    const keys = new Set<string | null>();
    for (const e of [...base, ...cand]) {
      const k = hardwareOf(e, keyBy, infos);
      if (sessionsIn(verdicts(e.buildId, k === "" ? null : k)) > 0) {
        keys.add(tierOf === null ? (k === "" ? null : k) : tierKey(k));
      }
    }
    const pair = (key: string | null) => ({
      key,
      b: judged(acc(q.baseline, key)),
      c: judged(acc(q.candidate, key)),
    });
    const overall = refShareJudge([{ ...pair(WHOLE_KEY), key: null }], q)[0] as RefGroup;
    const groups = refShareJudge([...keys].map(pair), q).sort(worstFirst("frame_time"));
    return {
      candidate: q.candidate,
      baseline: q.baseline,
      metric: q.metric,
      by: q.by,
      overall: withSides(overall, WHOLE_KEY),
      groups: groups.map((g) => withSides(g, g.key)),
      cells: [] as Array<Omit<RefGroup, "key"> & { x: number; y: number; cellSize: number }>,
    };
  }
  const metric = q.metric;
  const mq = { ...q, metric };
  const all = (xs: GenEvent[]) => sessionMedians(xs, metric, () => "").get("") ?? [];
  const overall = refJudge([{ key: null, b: all(base), c: all(cand) }], mq)[0] as RefGroup;

  const bGroups = sessionMedians(base, metric, (e) => hardwareOf(e, q.by, infos));
  const cGroups = sessionMedians(cand, metric, (e) => hardwareOf(e, q.by, infos));
  let family: Array<{ key: string | null; b: number[]; c: number[] }>;
  if (q.by === "gpu_tier") {
    const tierOf = tiers(
      sessionMedians(base, "frame_time", (e) => hardwareOf(e, "gpu", infos)),
      q.minSessions,
    );
    // A tier's sessions: each (session, gpu) value of the GPUs in it.
    const merged = new Map<string | null, { key: string | null; b: number[]; c: number[] }>();
    for (const [groups, side] of [
      [bGroups, "b"],
      [cGroups, "c"],
    ] as const) {
      for (const [gpu, vs] of groups) {
        const key = gpu === "" ? null : (tierOf.get(gpu) ?? "unknown");
        const g = merged.get(key) ?? { key, b: [], c: [] };
        g[side].push(...vs);
        merged.set(key, g);
      }
    }
    family = [...merged.values()].map((g) => ({
      ...g,
      b: g.b.sort((x, y) => x - y),
      c: g.c.sort((x, y) => x - y),
    }));
  } else {
    const keys = new Set([...bGroups.keys(), ...cGroups.keys()]);
    family = [...keys].map((k) => ({
      key: k === "" ? null : k,
      b: bGroups.get(k) ?? [],
      c: cGroups.get(k) ?? [],
    }));
  }
  const groups = refJudge(family, mq).sort(worstFirst(metric));

  let cells: Array<Omit<RefGroup, "key"> & { x: number; y: number; cellSize: number }> = [];
  if (q.mapId !== undefined) {
    const cellOf = (e: GenEvent) =>
      e.pos === undefined ? "" : `${Math.floor(e.pos.x / 25) * 25},${Math.floor(e.pos.y / 25) * 25}`;
    const positioned = (xs: GenEvent[]) => xs.filter((e) => e.pos !== undefined);
    const bc = sessionMedians(positioned(base), metric, cellOf);
    const cc = sessionMedians(positioned(cand), metric, cellOf);
    const tested = [...bc.keys()]
      .filter((k) => (bc.get(k)?.length ?? 0) >= q.minSessions && (cc.get(k)?.length ?? 0) >= q.minSessions)
      .map((k) => ({ key: k, b: bc.get(k) ?? [], c: cc.get(k) ?? [] }));
    cells = refJudge(tested, mq)
      .filter((g) => g.verdict === "regressed" || g.verdict === "improved")
      .sort(worstFirst(metric))
      .map(({ key, ...g }) => {
        const [x, y] = (key ?? "0,0").split(",").map(Number);
        return { x: x as number, y: y as number, cellSize: 25, ...g };
      });
  }
  return {
    candidate: q.candidate,
    baseline: q.baseline,
    metric: q.metric,
    by: q.by,
    overall: withSides(overall, WHOLE_KEY),
    groups: groups.map((g) => withSides(g, g.key)),
    cells,
  };
}

/** Φ(z) by Simpson's rule over [0, |z|] (4,000 intervals), not by a closed-form approximation. */
function normalCdf(z: number): number {
  const steps = 4000;
  const h = Math.abs(z) / steps;
  let sum = 0;
  for (let i = 0; i <= steps; i++) {
    const w = i === 0 || i === steps ? 1 : i % 2 ? 4 : 2;
    sum += w * Math.exp(-((i * h) ** 2) / 2);
  }
  const half = (sum * h) / 3 / Math.sqrt(2 * Math.PI);
  return z >= 0 ? 0.5 + half : 0.5 - half;
}

/** The z with Φ(z) = p, by bisection. */
function normalInverse(p: number): number {
  let lo = -40;
  let hi = 40;
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (normalCdf(mid) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return (lo + hi) / 2;
}

/** Wilson's score bounds: the p0 where |x/n − p0| = z·√(p0(1 − p0)/n), found by bisection on each side. */
function wilsonBounds(x: number, n: number, z: number): [number, number] {
  const p = x / n;
  const score = (p0: number) => Math.abs(p - p0) - z * Math.sqrt((p0 * (1 - p0)) / n);
  const solve = (a: number, b: number) => {
    // score is ≤ 0 at p and > 0 at the far end (when that end is reachable).
    if (score(b) <= 0) {
      return b;
    }
    let inside = a;
    let outside = b;
    for (let i = 0; i < 200; i++) {
      const mid = (inside + outside) / 2;
      if (score(mid) <= 0) {
        inside = mid;
      } else {
        outside = mid;
      }
    }
    return (inside + outside) / 2;
  };
  return [solve(p, 0), solve(p, 1)];
}

/**
 * poor_session_share judged per group: the pooled two-proportion z-test's p-values through
 * Benjamini–Hochberg's step-up rule, Newcombe's hybrid score interval at the level it leaves, in points.
 */
export function refShareJudge(
  family: Array<{ key: string | null; b: { x: number; n: number }; c: { x: number; n: number } }>,
  q: { minEffectPct: number; minSessions: number },
): RefGroup[] {
  const testable = family.map((g) => g.b.n >= q.minSessions && g.c.n >= q.minSessions);
  const pOf = (g: (typeof family)[number]) => {
    const pooled = (g.b.x + g.c.x) / (g.b.n + g.c.n);
    const se = Math.sqrt(pooled * (1 - pooled) * (1 / g.b.n + 1 / g.c.n));
    return se === 0 ? 1 : Math.min(1, 2 * (1 - normalCdf(Math.abs(g.c.x / g.c.n - g.b.x / g.b.n) / se)));
  };
  const ps = family.flatMap((g, i) => (testable[i] ? [pOf(g)] : [])).sort((a, b) => a - b);
  let discoveries = 0;
  ps.forEach((p, i) => {
    if (p <= ((i + 1) * ALPHA) / ps.length) {
      discoveries = i + 1;
    }
  });
  const level = ps.length ? (Math.max(1, discoveries) * ALPHA) / ps.length : ALPHA;
  const z = normalInverse(1 - level / 2);
  return family.map((g, i) => {
    const pb = g.b.n ? g.b.x / g.b.n : null;
    const pc = g.c.n ? g.c.x / g.c.n : null;
    const diff = pb === null || pc === null ? null : (pc - pb) * 100;
    let ci: [number, number] | null = null;
    let verdict: RefGroup["verdict"] = "insufficient_data";
    if (testable[i] && pb !== null && pc !== null && diff !== null) {
      const [lb, ub] = wilsonBounds(g.b.x, g.b.n, z);
      const [lc, uc] = wilsonBounds(g.c.x, g.c.n, z);
      const d = pc - pb;
      ci = [(d - Math.hypot(pc - lc, ub - pb)) * 100, (d + Math.hypot(uc - pc, pb - lb)) * 100];
      verdict =
        ci[0] > 0 && diff >= q.minEffectPct
          ? "regressed"
          : ci[1] < 0 && -diff >= q.minEffectPct
            ? "improved"
            : "no_change";
    }
    const share = (p: number | null) => (p === null ? null : Math.round(p * 10_000) / 10_000);
    return {
      key: g.key,
      baseline: { sessions: g.b.n, median: share(pb) },
      candidate: { sessions: g.c.n, median: share(pc) },
      diffPct: diff === null ? null : round2(diff),
      ci95: ci === null ? null : [round2(ci[0]), round2(ci[1])],
      verdict,
    };
  });
}
