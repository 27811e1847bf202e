import type { GenEvent } from "./analytics-dataset.js";
import { bucketFloor } from "./quantize.js";

// The cell drill-down's `why` and its breakdown groups' bounds and hitches (docs/analytics.md, "Why a
// cell is slow"), computed over the generated events in plain TypeScript: each heartbeat's bound by the
// documented rule, each session's median frame time on the map from its events, visits from its samples
// in the cell. Nothing here reads the service's code.

export const REF_BOUNDS = ["gpu", "game_thread", "render_thread", "io", "memory", "unknown"] as const;
export type RefBound = (typeof REF_BOUNDS)[number];

const round2 = (v: number) => Math.round(v * 100) / 100;
const pctOf = (part: number, whole: number) => (whole === 0 ? null : round2((part / whole) * 100));
const f32 = (v: number | undefined) => (v ? Math.fround(v) : 0);

/** The frame's length: frame time, else 1000 / fps; null with neither. */
function frameLength(e: GenEvent): number | null {
  const p = e.perf ?? {};
  if (p.frameTimeMs) {
    return Math.fround(p.frameTimeMs);
  }
  return p.fps ? 1000 / Math.fround(p.fps) : null;
}

/** The bound of one heartbeat; `memoryTotalMb` is its device's total (0: unknown). */
export function refBound(e: GenEvent, memoryTotalMb: number): RefBound {
  const frame = frameLength(e);
  if (frame === null) {
    return "unknown";
  }
  const p = e.perf ?? {};
  const stages: Array<[RefBound, number]> = [
    ["gpu", f32(p.gpuTimeMs)],
    ["game_thread", f32(p.gameThreadMs)],
    ["render_thread", f32(p.renderThreadMs)],
  ];
  // The longest stage; on a tie the earlier in this order.
  const [stage, longest] = stages.reduce((best, s) => (s[1] > best[1] ? s : best));
  if (longest > 0 && longest >= 0.8 * frame) {
    return stage;
  }
  const io = e.metrics?.["io.read_time_ms"];
  if (io !== undefined && io > 0 && io >= frame) {
    return "io";
  }
  if (memoryTotalMb > 0 && (p.memoryUsedBytes ?? 0) >= 0.9 * memoryTotalMb * 1_048_576) {
    return "memory";
  }
  return "unknown";
}

const dayOf = (us: number) => new Date(Math.floor(us / 1000)).toISOString().slice(0, 10);

/** Each session's device memory total (MB): its latest device_info of the window's days ± 1. */
export function sessionMemoryTotals(all: GenEvent[], fromUs: number, toUs: number): Map<string, number> {
  const dayMs = 86_400_000;
  const fromDay = dayOf(fromUs - dayMs * 1000);
  const toDay = dayOf(toUs + dayMs * 1000);
  const totals = new Map<string, { ts: number; mb: number }>();
  for (const e of all) {
    const d = dayOf(e.tsUs);
    if (e.eventName !== "device_info" || d < fromDay || d > toDay) {
      continue;
    }
    const prev = totals.get(e.sessionId);
    if (!prev || e.tsUs > prev.ts) {
      totals.set(e.sessionId, { ts: e.tsUs, mb: Number(e.attributes?.memory_total_mb ?? 0) || 0 });
    }
  }
  return new Map([...totals].map(([session, t]) => [session, t.mb]));
}

export type RefWhyQuery = {
  mapId: string;
  /** The profile's marks of frame time and fps, when a profile is given. */
  marks?: {
    frame_time: { good: number | null; warn: number | null };
    fps: { good: number | null; warn: number | null };
  };
  /** The window [fromUs, toUs); the session medians read its whole UTC days. */
  fromUs: number;
  toUs: number;
};

/**
 * `cell`: the cell's samples (positioned, performance-bearing, in the window, under the read's filters);
 * `all`: every event, for the sessions' medians on the map and their device_info. Returns the `why`
 * and the fields a breakdown group of some of the cell's samples adds.
 */
export function refWhy(all: GenEvent[], cell: GenEvent[], q: RefWhyQuery) {
  const frameMark = q.marks ? (q.marks.frame_time.warn ?? q.marks.frame_time.good) : null;
  const fpsMark = q.marks ? (q.marks.fps.warn ?? q.marks.fps.good) : null;
  const hzOf = (e: GenEvent) => {
    const hz = e.metrics?.["display.hz"];
    return hz !== undefined && hz > 0 ? hz : undefined;
  };
  const basis =
    frameMark !== null
      ? "frame_time"
      : fpsMark !== null
        ? "fps"
        : cell.some((e) => hzOf(e) !== undefined)
          ? "budget"
          : "all";
  const isSlow = (e: GenEvent) => {
    if (basis === "frame_time") {
      return e.perf?.frameTimeMs ? Math.fround(e.perf.frameTimeMs) > (frameMark as number) : false;
    }
    if (basis === "fps") {
      return e.perf?.fps ? Math.fround(e.perf.fps) < (fpsMark as number) : false;
    }
    if (basis === "budget") {
      const hz = hzOf(e);
      const frame = frameLength(e);
      return hz !== undefined && frame !== null && frame > 1000 / hz;
    }
    return true;
  };
  const totals = sessionMemoryTotals(all, q.fromUs, q.toUs);
  const boundOf = (e: GenEvent) => refBound(e, totals.get(e.sessionId) ?? 0);
  // Each session's median frame time on the map over the window's days: the lower median of its
  // quantized frame times, over its performance-bearing events of a build the cell's samples carry.
  const first = dayOf(q.fromUs);
  const last = dayOf(q.toUs);
  const builds = new Set(cell.map((e) => e.buildId));
  const sessions = new Set(cell.map((e) => e.sessionId));
  const frames = new Map<string, number[]>();
  for (const e of all) {
    const d = dayOf(e.tsUs);
    const p = e.perf ?? {};
    const perf = !!(p.fps || p.frameTimeMs || p.memoryUsedBytes || p.gpuTimeMs);
    if (
      e.mapId === q.mapId &&
      sessions.has(e.sessionId) &&
      builds.has(e.buildId) &&
      e.buildId !== "" &&
      perf &&
      d >= first &&
      d <= last &&
      p.frameTimeMs
    ) {
      frames.set(e.sessionId, [...(frames.get(e.sessionId) ?? []), bucketFloor(Math.fround(p.frameTimeMs))]);
    }
  }
  const typical = new Map<string, number>();
  for (const [s, vs] of frames) {
    const sorted = [...vs].sort((a, b) => a - b);
    typical.set(s, sorted[Math.ceil(sorted.length / 2) - 1] as number);
  }
  const judged = (e: GenEvent) => !!e.perf?.frameTimeMs && (typical.get(e.sessionId) ?? 0) > 0;
  const hitch = (e: GenEvent) =>
    judged(e) && Math.fround(e.perf?.frameTimeMs ?? 0) > 2 * (typical.get(e.sessionId) as number);
  // Visits: each session's samples in the cell by time; the first is its first visit.
  const bySession = new Map<string, GenEvent[]>();
  for (const e of cell) {
    bySession.set(e.sessionId, [...(bySession.get(e.sessionId) ?? []), e]);
  }
  const firsts = new Set<GenEvent>();
  const gaps: number[] = [];
  for (const es of bySession.values()) {
    const sorted = [...es].sort((a, b) => a.tsUs - b.tsUs);
    firsts.add(sorted[0] as GenEvent);
    for (let i = 1; i < sorted.length; i++) {
      const gap = ((sorted[i] as GenEvent).tsUs - (sorted[i - 1] as GenEvent).tsUs) / 1000;
      if (gap <= 60_000) {
        gaps.push(gap);
      }
    }
  }
  const interval = gaps.length
    ? ([...gaps].sort((a, b) => a - b)[Math.ceil(gaps.length / 2) - 1] as number)
    : null;
  const minutes = (n: number) =>
    interval === null || interval <= 0 || n === 0 ? null : (n * interval) / 60_000;
  const perMinute = (h: number, n: number) => {
    const m = minutes(n);
    return m === null ? null : round2(h / m);
  };
  const hitchCount = (es: GenEvent[]) => {
    const j = es.filter(judged).length;
    const h = es.filter(hitch).length;
    return { judged: j, hitches: h, pct: pctOf(h, j) };
  };
  const slow = cell.filter(isSlow);
  const countBounds = (es: GenEvent[]) => {
    const out = Object.fromEntries(REF_BOUNDS.map((b) => [b, 0])) as Record<RefBound, number>;
    for (const e of es) {
      out[boundOf(e)] += 1;
    }
    return out;
  };
  const counts = countBounds(slow);
  const all$ = hitchCount(cell);
  const m = minutes(all$.judged);
  const why = {
    basis,
    threshold: basis === "frame_time" ? frameMark : basis === "fps" ? fpsMark : null,
    heartbeats: cell.length,
    slow: slow.length,
    bounds: REF_BOUNDS.map((bound) => ({
      bound,
      slow: counts[bound],
      pct: pctOf(counts[bound], slow.length),
    })),
    hitches: {
      ...all$,
      heartbeatIntervalMs: interval,
      minutesPlayed: m === null ? null : round2(m),
      perMinute: perMinute(all$.hitches, all$.judged),
      firstVisit: hitchCount(cell.filter((e) => firsts.has(e))),
      laterVisits: hitchCount(cell.filter((e) => !firsts.has(e))),
    },
  };
  /** The fields a breakdown group of `es` adds. */
  const group = (es: GenEvent[]) => {
    const h = hitchCount(es);
    return {
      slow: es.filter(isSlow).length,
      bounds: countBounds(es.filter(isSlow)),
      hitchJudged: h.judged,
      hitches: h.hitches,
      hitchesPerMinute: perMinute(h.hitches, h.judged),
    };
  };
  return { why, group };
}
