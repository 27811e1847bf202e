import type { GenEvent } from "./analytics-dataset.js";
import { REF_BOUNDS, type RefBound, refBound, sessionMemoryTotals } from "./frame-causes-reference.js";
import { bucketFloor } from "./quantize.js";

// Session verdicts and the frame causes of a build's groups (docs/analytics.md, "Session verdicts"),
// computed over the generated events in plain TypeScript from the documented rule: each session's
// heartbeats listed, their lower median taken by sorting, each heartbeat judged by its display's budget.
// Nothing here reads the service's code.

const round2 = (v: number) => Math.round(v * 100) / 100;

export type RefVerdictSide = {
  sessionVerdicts: {
    good: number;
    acceptable: number;
    poor: number;
    unjudged: number;
    poorShare: number | null;
  };
  frames: {
    heartbeats: number;
    slow: number;
    bounds: Record<RefBound, number>;
    hitches: number;
    minutesPlayed: number;
    hitchesPerMinute: number | null;
  };
};

type Acc = {
  good: number;
  acceptable: number;
  poor: number;
  unjudged: number;
  heartbeats: number;
  slow: number;
  bounds: Record<RefBound, number>;
  hitches: number;
  playedUs: number;
};

export const emptyAcc = (): Acc => ({
  good: 0,
  acceptable: 0,
  poor: 0,
  unjudged: 0,
  heartbeats: 0,
  slow: 0,
  bounds: Object.fromEntries(REF_BOUNDS.map((b) => [b, 0])) as Record<RefBound, number>,
  hitches: 0,
  playedUs: 0,
});

export function addAcc(a: Acc, b: Acc): Acc {
  return {
    good: a.good + b.good,
    acceptable: a.acceptable + b.acceptable,
    poor: a.poor + b.poor,
    unjudged: a.unjudged + b.unjudged,
    heartbeats: a.heartbeats + b.heartbeats,
    slow: a.slow + b.slow,
    bounds: Object.fromEntries(REF_BOUNDS.map((k) => [k, a.bounds[k] + b.bounds[k]])) as Record<
      RefBound,
      number
    >,
    hitches: a.hitches + b.hitches,
    playedUs: a.playedUs + b.playedUs,
  };
}

export function sideOf(a: Acc = emptyAcc()): RefVerdictSide {
  const judged = a.good + a.acceptable + a.poor;
  const minutes = a.playedUs / 60_000_000;
  return {
    sessionVerdicts: {
      good: a.good,
      acceptable: a.acceptable,
      poor: a.poor,
      unjudged: a.unjudged,
      poorShare: judged ? Math.round((a.poor / judged) * 10_000) / 10_000 : null,
    },
    frames: {
      heartbeats: a.heartbeats,
      slow: a.slow,
      bounds: a.bounds,
      hitches: a.hitches,
      minutesPlayed: round2(minutes),
      hitchesPerMinute: minutes > 0 ? round2(a.hitches / minutes) : null,
    },
  };
}

/** A verdict of one session's heartbeats, by the documented rule. */
export function refVerdictOf(
  frames: number[],
  slow: number,
): { verdict: "good" | "acceptable" | "poor" | "unjudged"; hitches: number } {
  const sorted = [...frames].sort((a, b) => a - b);
  const n = sorted.length;
  const median = n ? Math.fround(bucketFloor(sorted[Math.ceil(n / 2) - 1] as number)) : 0;
  const hitches = sorted.filter((v) => v > 2 * median).length;
  const frozen = sorted.filter((v) => v >= 700).length;
  if (n < 6) {
    return { verdict: "unjudged", hitches };
  }
  if (slow / n > 0.5 || frozen > 0) {
    return { verdict: "poor", hitches };
  }
  if (slow / n > 0.25 || hitches / n > 0.05) {
    return { verdict: "acceptable", hitches };
  }
  return { verdict: "good", hitches };
}

/**
 * Per build and group (`keyOf` of each heartbeat; "" for the whole build's entry under `whole`), the
 * sessions by verdict and their heartbeats' causes, over the performance-bearing events of a non-empty
 * build in [fromUs, toUs) (on `mapId` when given). A session with heartbeats in two groups counts in each.
 */
export function refVerdicts(
  all: GenEvent[],
  q: { fromUs: number; toUs: number; mapId?: string; keyOf: (e: GenEvent) => string },
): (build: string, key: string | null) => Acc {
  const totals = sessionMemoryTotals(all, q.fromUs, q.toUs);
  type S = { frames: number[]; slow: number; bounds: RefBound[]; first: number; last: number };
  const sessions = new Map<string, Map<string, S>>();
  const add = (group: string, e: GenEvent) => {
    const key = `${e.buildId}\n${e.sessionId}`;
    const byGroup = sessions.get(group) ?? new Map<string, S>();
    sessions.set(group, byGroup);
    const s = byGroup.get(key) ?? { frames: [], slow: 0, bounds: [], first: e.tsUs, last: e.tsUs };
    byGroup.set(key, s);
    s.first = Math.min(s.first, e.tsUs);
    s.last = Math.max(s.last, e.tsUs);
    const p = e.perf ?? {};
    const frame = p.frameTimeMs ? Math.fround(p.frameTimeMs) : p.fps ? 1000 / Math.fround(p.fps) : null;
    if (frame === null) {
      return;
    }
    s.frames.push(Math.fround(frame));
    const hzSent = e.metrics?.["display.hz"];
    const hz = hzSent !== undefined && hzSent > 0 ? hzSent : 60;
    if (frame > 1000 / hz) {
      s.slow++;
      s.bounds.push(refBound(e, totals.get(e.sessionId) ?? 0));
    }
  };
  for (const e of all) {
    const p = e.perf ?? {};
    const perf = !!(p.fps || p.frameTimeMs || p.memoryUsedBytes || p.gpuTimeMs);
    if (
      !perf ||
      e.buildId === "" ||
      e.tsUs < q.fromUs ||
      e.tsUs >= q.toUs ||
      (q.mapId !== undefined && e.mapId !== q.mapId)
    ) {
      continue;
    }
    add("\u0000whole", e);
    add(`k:${q.keyOf(e)}`, e);
  }
  return (build, key) => {
    const acc = emptyAcc();
    const group = sessions.get(key === WHOLE_KEY ? "\u0000whole" : `k:${key ?? ""}`) ?? new Map<string, S>();
    for (const [id, s] of group) {
      if (!id.startsWith(`${build}\n`) || s.frames.length === 0) {
        continue;
      }
      const v = refVerdictOf(s.frames, s.slow);
      acc[v.verdict]++;
      acc.heartbeats += s.frames.length;
      acc.slow += s.slow;
      for (const b of s.bounds) {
        acc.bounds[b]++;
      }
      acc.hitches += v.hitches;
      acc.playedUs += s.last - s.first;
    }
    return acc;
  };
}

/** The whole build's key for refVerdicts' lookup. */
export const WHOLE_KEY = "\u0000whole";
