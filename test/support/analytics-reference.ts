// The metric definitions of ARCHITECTURE.md computed in plain TypeScript over the generated events,
// written without looking at the SQL: the analytics endpoints must agree with these.
import type { GenEvent } from "./analytics-dataset.js";
import { refWhy } from "./frame-causes-reference.js";
import { bucketFloor } from "./quantize.js";

export { bucketFloor };

const DAY_MS = 86_400_000;

export const playerOf = (e: GenEvent) => e.playerId || e.sessionId;
const dayOfUs = (us: number) => new Date(Math.floor(us / 1000)).toISOString().slice(0, 10);
const dayAfter = (date: string, n: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
const textOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const round2 = (v: number) => Math.round(v * 100) / 100;
const share = (part: number, whole: number) => (whole === 0 ? 0 : round2((part / whole) * 100));

export type RefWindow = { fromUs: number; toUs: number; dates: string[]; today: string };

/** N UTC calendar days ending today, today included. */
export function refWindow(days: number, nowMs: number): RefWindow {
  const today = new Date(nowMs).toISOString().slice(0, 10);
  const dates: string[] = [];
  for (let i = days - 1; i >= 0; i--) {
    dates.push(dayAfter(today, -i));
  }
  return {
    fromUs: Date.parse(`${dates[0]}T00:00:00Z`) * 1000,
    toUs: Date.parse(`${dayAfter(today, 1)}T00:00:00Z`) * 1000,
    dates,
    today,
  };
}

const inWindow = (w: RefWindow) => (e: GenEvent) => e.tsUs >= w.fromUs && e.tsUs < w.toUs;

function countBy<K>(xs: GenEvent[], key: (e: GenEvent) => K): Map<K, number> {
  const m = new Map<K, number>();
  for (const e of xs) {
    m.set(key(e), (m.get(key(e)) ?? 0) + 1);
  }
  return m;
}

function uniqueBy<K>(
  xs: GenEvent[],
  key: (e: GenEvent) => K,
  value: (e: GenEvent) => string,
): Map<K, number> {
  const sets = new Map<K, Set<string>>();
  for (const e of xs) {
    const s = sets.get(key(e)) ?? new Set<string>();
    s.add(value(e));
    sets.set(key(e), s);
  }
  return new Map([...sets].map(([k, s]) => [k, s.size]));
}

export function refDashboard(events: GenEvent[], days: number, fetchedAt: number) {
  const w = refWindow(days, fetchedAt);
  const nowUs = fetchedAt * 1000;
  const win = events.filter(inWindow(w));
  const lastHours = (h: number) =>
    new Set(events.filter((e) => e.tsUs >= nowUs - h * 3_600_000_000 && e.tsUs <= nowUs).map(playerOf)).size;
  const perDay = uniqueBy(win, (e) => dayOfUs(e.tsUs), playerOf);
  return {
    kpis: {
      dau: lastHours(24),
      mau: lastHours(24 * 30),
      sessions: new Set(win.map((e) => e.sessionId)).size,
      events: win.length,
      fetchedAt,
    },
    dailyActiveUsers: w.dates.map((date) => ({ date, count: perDay.get(date) ?? 0 })),
    topEvents: [...countBy(win, (e) => e.eventName)]
      .map(([event_name, count]) => ({ event_name, count }))
      .sort((a, b) => b.count - a.count || textOrder(a.event_name, b.event_name))
      .slice(0, 10),
  };
}

/**
 * Nearest-rank percentile of the bucketed samples: the k-th smallest, k = max(1, ceil(level · n)).
 */
function nearestRank(values: number[], level: number): number | null {
  if (!values.length) {
    return null;
  }
  const sorted = values.map(bucketFloor).sort((a, b) => a - b);
  const k = Math.max(1, Math.ceil(level * sorted.length));
  return sorted[k - 1] as number;
}

const mean = (vs: number[]) => (vs.length ? vs.reduce((a, b) => a + b, 0) / vs.length : null);
const maxOf = (vs: number[]) => (vs.length ? Math.max(...vs) : null);

export type HeatmapParams = {
  mapId: string;
  cellSize: number;
  days: number;
  eventName?: string;
  includeZ?: boolean;
  buildId?: string;
  platform?: string;
  /** tails=1: the tail fields too (the default answer leaves them out). */
  tails?: boolean;
};

/**
 * Cells in the shape the engine editors' heatmap overlays parse strictly: weight is the event count; the
 * avg_* the overlays need as numbers are 0 without samples, the others null; memory and VRAM in megabytes.
 * The tail fields only with `tails`.
 */
export function refHeatmap(events: GenEvent[], q: HeatmapParams, nowMs: number) {
  const w = refWindow(q.days, nowMs);
  const chosen = events.filter(
    (e) =>
      inWindow(w)(e) &&
      e.mapId === q.mapId &&
      e.pos !== undefined &&
      (q.buildId === undefined || e.buildId === q.buildId) &&
      (q.platform === undefined || e.platform === q.platform) &&
      (q.eventName === undefined ? hasPerf(e) : e.eventName === q.eventName),
  );
  const origin = (v: number) => Math.floor(Math.fround(v) / q.cellSize) * q.cellSize;
  const cells = new Map<string, { x: number; y: number; z?: number; events: GenEvent[] }>();
  for (const e of chosen) {
    const pos = e.pos as { x: number; y: number; z?: number };
    const at = { x: origin(pos.x), y: origin(pos.y), ...(q.includeZ ? { z: origin(pos.z ?? 1) } : {}) };
    const key = `${at.x}:${at.y}:${at.z}`;
    const cell = cells.get(key) ?? { ...at, events: [] };
    cell.events.push(e);
    cells.set(key, cell);
  }
  const sorted = [...cells.values()].sort((a, b) => a.x - b.x || a.y - b.y || (a.z ?? 0) - (b.z ?? 0));
  return sorted.map(({ events: xs, ...at }) => {
    const metric = (k: "fps" | "frameTimeMs" | "gpuTimeMs") =>
      xs.flatMap((e) => (e.perf?.[k] === undefined ? [] : [Math.fround(e.perf[k] as number)]));
    // Memory and VRAM arrive in bytes; their figures are megabytes.
    const memoryMb = xs.flatMap((e) =>
      e.perf?.memoryUsedBytes === undefined ? [] : [e.perf.memoryUsedBytes / 1_048_576],
    );
    const vramMb = xs.flatMap((e) => {
      const v = e.metrics?.["mem.vram"];
      return v === undefined ? [] : [v / 1_048_576];
    });
    return {
      ...at,
      weight: xs.length,
      event_count: xs.length,
      avg_fps: mean(metric("fps")) ?? 0,
      avg_frame_time: mean(metric("frameTimeMs")) ?? 0,
      avg_memory: mean(memoryMb) ?? 0,
      avg_gpu_time: mean(metric("gpuTimeMs")),
      avg_mem_vram: mean(vramMb),
      ...(q.tails
        ? {
            p05_fps: nearestRank(metric("fps"), 0.05),
            p95_frame_time: nearestRank(metric("frameTimeMs"), 0.95),
            max_memory: maxOf(memoryMb),
            p95_gpu_time: nearestRank(metric("gpuTimeMs"), 0.95),
            p95_mem_vram: nearestRank(vramMb, 0.95),
          }
        : {}),
    };
  });
}

/** Performance-bearing: at least one of fps, frame time, memory or GPU time above zero. */
export function hasPerf(e: GenEvent): boolean {
  const p = e.perf;
  return [p?.fps, p?.frameTimeMs, p?.memoryUsedBytes, p?.gpuTimeMs].some((v) => v !== undefined && v > 0);
}

export function refRetention(events: GenEvent[], days: number, nowMs: number) {
  const w = refWindow(days, nowMs);
  const first = new Map<string, number>();
  const activeDays = new Map<string, Set<string>>();
  for (const e of events) {
    const p = playerOf(e);
    first.set(p, Math.min(first.get(p) ?? Number.POSITIVE_INFINITY, e.tsUs));
    const s = activeDays.get(p) ?? new Set<string>();
    s.add(dayOfUs(e.tsUs));
    activeDays.set(p, s);
  }
  return w.dates.map((date) => {
    const cohort = [...first].filter(([, ts]) => dayOfUs(ts) === date).map(([p]) => p);
    const rate = (n: number) => {
      const target = dayAfter(date, n);
      if (target >= w.today) {
        return null;
      }
      return share(cohort.filter((p) => activeDays.get(p)?.has(target)).length, cohort.length);
    };
    return { cohort_date: date, cohort_size: cohort.length, day1: rate(1), day7: rate(7), day30: rate(30) };
  });
}

/** Brute force: from every step-1 event, the furthest step reachable in order within the window. */
export function refFunnel(events: GenEvent[], steps: string[], windowS: number, days: number, nowMs: number) {
  const w = refWindow(days, nowMs);
  const byPlayer = new Map<string, GenEvent[]>();
  for (const e of events.filter(inWindow(w))) {
    byPlayer.set(playerOf(e), [...(byPlayer.get(playerOf(e)) ?? []), e]);
  }
  const reached = steps.map(() => 0);
  for (const list of byPlayer.values()) {
    list.sort((a, b) => a.tsUs - b.tsUs);
    let best = 0;
    list.forEach((start, i) => {
      if (start.eventName !== steps[0]) {
        return;
      }
      let level = 1;
      for (let j = i + 1; j < list.length && level < steps.length; j++) {
        const e = list[j] as GenEvent;
        if (e.tsUs - start.tsUs > windowS * 1_000_000) {
          break;
        }
        if (e.eventName === steps[level]) {
          level++;
        }
      }
      best = Math.max(best, level);
    });
    for (let k = 0; k < best; k++) {
      reached[k] = (reached[k] ?? 0) + 1;
    }
  }
  return steps.map((event_name, i) => ({
    step: i + 1,
    event_name,
    count: reached[i] ?? 0,
    pct: share(reached[i] ?? 0, reached[0] ?? 0),
    drop_off_pct: i === 0 ? 0 : share((reached[i - 1] ?? 0) - (reached[i] ?? 0), reached[i - 1] ?? 0),
  }));
}

export type InsightParams = {
  metric: "count" | "unique_players";
  groupBy: "day" | "week" | "month" | "event_name" | "map_id" | "platform" | "build_id";
  days: number;
  limit: number;
  eventName?: string;
};

function periodStart(groupBy: "day" | "week" | "month", date: string): string {
  if (groupBy === "day") {
    return date;
  }
  if (groupBy === "month") {
    return `${date.slice(0, 8)}01`;
  }
  const sinceMonday = (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7;
  return dayAfter(date, -sinceMonday);
}

export function refInsights(events: GenEvent[], q: InsightParams, nowMs: number) {
  const w = refWindow(q.days, nowMs);
  const win = events.filter(
    (e) => inWindow(w)(e) && (q.eventName === undefined || e.eventName === q.eventName),
  );
  const value = (xs: GenEvent[]) => (q.metric === "count" ? xs.length : new Set(xs.map(playerOf)).size);
  const groupsOf = (key: (e: GenEvent) => string) => {
    const m = new Map<string, GenEvent[]>();
    for (const e of win) {
      m.set(key(e), [...(m.get(key(e)) ?? []), e]);
    }
    return m;
  };
  let groups: Array<{ key: string; value: number }>;
  if (q.groupBy === "day" || q.groupBy === "week" || q.groupBy === "month") {
    const g = q.groupBy;
    const periods = [...new Set(w.dates.map((d) => periodStart(g, d)))].slice(-q.limit);
    const m = groupsOf((e) => periodStart(g, dayOfUs(e.tsUs)));
    groups = periods.map((key) => ({ key, value: value(m.get(key) ?? []) }));
  } else {
    const field = {
      event_name: "eventName",
      map_id: "mapId",
      platform: "platform",
      build_id: "buildId",
    } as const;
    const m = groupsOf((e) => e[field[q.groupBy as keyof typeof field]]);
    groups = [...m]
      .map(([key, xs]) => ({ key, value: value(xs) }))
      .sort((a, b) => b.value - a.value || textOrder(a.key, b.key))
      .slice(0, q.limit);
  }
  return { metric: q.metric, groupBy: q.groupBy, days: q.days, groups, total: value(win) };
}

const isoOfUs = (us: number) =>
  `${new Date(Math.floor(us / 1000)).toISOString().slice(0, 19)}.${String(us % 1_000_000).padStart(6, "0")}Z`;

export function refBuilds(events: GenEvent[], days: number, nowMs: number, buildId?: string) {
  const w = refWindow(days, nowMs);
  const perBuild = new Map<string, GenEvent[]>();
  for (const e of events) {
    if (
      inWindow(w)(e) &&
      hasPerf(e) &&
      e.buildId !== "" &&
      (buildId === undefined || e.buildId === buildId)
    ) {
      perBuild.set(e.buildId, [...(perBuild.get(e.buildId) ?? []), e]);
    }
  }
  return [...perBuild]
    .map(([id, xs]) => {
      const ts = xs.map((e) => e.tsUs);
      return {
        build_id: id,
        firstUs: Math.min(...ts),
        first_seen: isoOfUs(Math.min(...ts)),
        last_seen: isoOfUs(Math.max(...ts)),
        event_count: xs.length,
        session_count: new Set(xs.map((e) => e.sessionId)).size,
        player_count: new Set(xs.map(playerOf)).size,
      };
    })
    .sort((a, b) => b.firstUs - a.firstUs || textOrder(a.build_id, b.build_id))
    .slice(0, 50)
    .map(({ firstUs: _, ...b }) => b);
}

/** The metrics of builds/compare, as the CLI lists them; all lower-is-better. */
export const REF_COMPARE_METRICS = [
  "frame_time",
  "memory",
  "gpu_time",
  "io.read_bytes",
  "io.read_time_ms",
  "io.read_ops",
  "load_time_ms",
  "mem.vram",
] as const;
type CompareMetric = (typeof REF_COMPARE_METRICS)[number];

/** The event's sample of a metric, in the comparison's units (ms, MB, bytes, ops), or none. */
function sampleOf(e: GenEvent, m: CompareMetric): number | undefined {
  const positive = (v: number | undefined) => (v !== undefined && v > 0 ? v : undefined);
  switch (m) {
    case "frame_time":
      return positive(e.perf?.frameTimeMs === undefined ? undefined : Math.fround(e.perf.frameTimeMs));
    case "gpu_time":
      return positive(e.perf?.gpuTimeMs === undefined ? undefined : Math.fround(e.perf.gpuTimeMs));
    case "memory": {
      const b = positive(e.perf?.memoryUsedBytes);
      return b === undefined ? undefined : b / 1_048_576;
    }
    case "mem.vram": {
      const b = e.metrics?.["mem.vram"];
      return b === undefined ? undefined : b / 1_048_576;
    }
    default:
      // A metrics-map entry is a sample even when it is 0 (no reads in the window is a reading).
      return e.metrics?.[m];
  }
}

export type CompareParams = {
  baseline: string;
  candidate: string;
  days: number;
  mapId?: string;
  platform?: string;
};

export function refCompare(events: GenEvent[], q: CompareParams, nowMs: number) {
  const w = refWindow(q.days, nowMs);
  const of = (buildId: string) =>
    events.filter(
      (e) =>
        inWindow(w)(e) &&
        e.buildId === buildId &&
        (q.mapId === undefined || e.mapId === q.mapId) &&
        (q.platform === undefined || e.platform === q.platform) &&
        REF_COMPARE_METRICS.some((m) => sampleOf(e, m) !== undefined),
    );
  const summary = (buildId: string, xs: GenEvent[]) => {
    const ts = xs.map((e) => e.tsUs);
    return {
      build_id: buildId,
      event_count: xs.length,
      session_count: new Set(xs.map((e) => e.sessionId)).size,
      player_count: new Set(xs.map(playerOf)).size,
      first_seen: xs.length ? isoOfUs(Math.min(...ts)) : null,
      last_seen: xs.length ? isoOfUs(Math.max(...ts)) : null,
    };
  };
  const base = of(q.baseline);
  const cand = of(q.candidate);
  const values = (xs: GenEvent[], m: CompareMetric) =>
    xs.flatMap((e) => {
      const v = sampleOf(e, m);
      return v === undefined ? [] : [v];
    });
  return {
    baseline: summary(q.baseline, base),
    candidate: summary(q.candidate, cand),
    diffs: REF_COMPARE_METRICS.map((metric) => {
      const b = values(base, metric);
      const c = values(cand, metric);
      const b50 = nearestRank(b, 0.5);
      const c50 = nearestRank(c, 0.5);
      return {
        metric,
        baselineP50: b50,
        candidateP50: c50,
        diffPct: b50 === null || c50 === null || b50 === 0 ? null : round2(((c50 - b50) / b50) * 100),
        isRegression: b50 !== null && c50 !== null && c50 > b50,
        baselineTail: nearestRank(b, 0.95),
        candidateTail: nearestRank(c, 0.95),
        baselineSamples: b.length,
        candidateSamples: c.length,
      };
    }),
  };
}

export type CellParams = {
  mapId: string;
  cellSize: number;
  days: number;
  x: number;
  y: number;
  z?: number;
  buildId?: string;
  platform?: string;
  metric: "fps" | "frame_time" | "memory" | "gpu_time";
  profile?: {
    id: string;
    name: string;
    marks: Record<CellParams["metric"], { good: number | null; warn: number | null }>;
  };
};

const CELL_METRIC_KEYS = ["fps", "frame_time", "memory", "gpu_time"] as const;
/** 4 buckets per octave: 1…1,024 for fps and milliseconds, 16 MB…64 GiB for memory. */
const edgesFrom = (k0: number, k1: number) =>
  Array.from({ length: k1 - k0 + 1 }, (_, i) => 2 ** ((k0 + i) / 4));
const CELL_EDGES = {
  fps: edgesFrom(0, 40),
  frame_time: edgesFrom(0, 40),
  memory: edgesFrom(16, 64),
  gpu_time: edgesFrom(0, 40),
};

/** A sample of the metric as stored: float32 fields, memory in megabytes; undefined when not collected. */
function cellSampleOf(e: GenEvent, m: CellParams["metric"]): number | undefined {
  const p = e.perf ?? {};
  const v =
    m === "fps" ? p.fps : m === "frame_time" ? p.frameTimeMs : m === "gpu_time" ? p.gpuTimeMs : undefined;
  if (m === "memory") {
    return p.memoryUsedBytes ? p.memoryUsedBytes / 1_048_576 : undefined;
  }
  return v ? Math.fround(v) : undefined;
}

const isoUs = (us: number) =>
  `${new Date(Math.floor(us / 1000)).toISOString().slice(0, 19)}.${String(us % 1_000_000).padStart(6, "0")}Z`;
const worseThan = (m: CellParams["metric"], v: number, mark: number) => (m === "fps" ? v < mark : v > mark);
/** Nearest-rank over raw values (no bucketing): positions and camera angles. */
const rawMedian = (vs: number[]) => {
  if (!vs.length) {
    return null;
  }
  const s = [...vs].sort((a, b) => a - b);
  return s[Math.max(1, Math.ceil(0.5 * s.length)) - 1] as number;
};

/**
 * Circular median of yaws in [0, 360), by rotation: find the widest empty arc between neighbours on the
 * circle (ties: the one starting at the smallest yaw), turn every yaw so that arc's far end sits at 0°,
 * take the plain nearest-rank median of the turned values and answer that sample's own yaw.
 */
export function circularMedianRef(yaws: number[]): number | null {
  if (!yaws.length) {
    return null;
  }
  const sorted = [...yaws].sort((a, b) => a - b);
  const arcs = sorted.map((from, i) => {
    const to = i + 1 < sorted.length ? (sorted[i + 1] as number) : (sorted[0] as number) + 360;
    return { from, to, width: to - from };
  });
  const widest = arcs.reduce((best, a) => (a.width > best.width ? a : best));
  const end = widest.to % 360;
  const turned = yaws
    .map((yaw) => ({ yaw, turned: (((yaw - end) % 360) + 360) % 360 }))
    .sort((a, b) => a.turned - b.turned);
  return turned[Math.max(1, Math.ceil(0.5 * turned.length)) - 1]?.yaw as number;
}

function deviceRef(e: GenEvent) {
  const d = e.device ?? {};
  const v = {
    gpu: d.gpu ?? "",
    deviceModel: d.deviceModel ?? "",
    resolution: d.resolution ?? "",
    osVersion: d.osVersion ?? "",
  };
  return v.gpu || v.deviceModel || v.resolution || v.osVersion
    ? {
        gpu: v.gpu || null,
        deviceModel: v.deviceModel || null,
        resolution: v.resolution || null,
        osVersion: v.osVersion || null,
      }
    : null;
}

/** The cell drill-down (docs/analytics.md, "Heatmap cell") over the generated events. */
export function refCell(events: GenEvent[], q: CellParams, nowMs: number) {
  const w = refWindow(q.days, nowMs);
  const origin = (v: number) => Math.floor(Math.fround(v) / q.cellSize) * q.cellSize;
  const xs = events.filter(
    (e) =>
      inWindow(w)(e) &&
      e.mapId === q.mapId &&
      e.pos !== undefined &&
      hasPerf(e) &&
      origin(e.pos.x) === q.x &&
      origin(e.pos.y) === q.y &&
      (q.z === undefined || origin(e.pos.z ?? 1) === q.z) &&
      (q.buildId === undefined || e.buildId === q.buildId) &&
      (q.platform === undefined || e.platform === q.platform),
  );
  const values = (es: GenEvent[], m: CellParams["metric"]) =>
    es.flatMap((e) => {
      const v = cellSampleOf(e, m);
      return v === undefined ? [] : [v];
    });
  const distributions = Object.fromEntries(
    CELL_METRIC_KEYS.map((m) => {
      const vs = values(xs, m);
      const edges = CELL_EDGES[m];
      const counts = new Array<number>(edges.length + 1).fill(0);
      for (const v of vs) {
        const k = edges.filter((e) => v >= e).length;
        counts[k] = (counts[k] ?? 0) + 1;
      }
      return [
        m,
        {
          samples: vs.length,
          mean: mean(vs),
          p50: nearestRank(vs, 0.5),
          p95: nearestRank(vs, 0.95),
          p99: nearestRank(vs, 0.99),
          p05: nearestRank(vs, 0.05),
          max: maxOf(vs),
          edges,
          counts,
        },
      ];
    }),
  ) as Record<
    CellParams["metric"],
    {
      samples: number;
      mean: number | null;
      p50: number | null;
      p95: number | null;
      p99: number | null;
      p05: number | null;
      max: number | null;
      edges: number[];
      counts: number[];
    }
  >;
  const marks = q.profile?.marks[q.metric];
  const failMark = marks ? (marks.warn ?? marks.good) : null;
  const causes = refWhy(events, xs, {
    mapId: q.mapId,
    marks: q.profile?.marks,
    fromUs: w.fromUs,
    toUs: w.toUs,
  });
  const dims = {
    build_id: (e: GenEvent) => e.buildId,
    platform: (e: GenEvent) => e.platform,
    engine_version: (e: GenEvent) => e.engineVersion ?? "",
    gpu: (e: GenEvent) => e.device?.gpu ?? "",
    device_model: (e: GenEvent) => e.device?.deviceModel ?? "",
    resolution: (e: GenEvent) => e.device?.resolution ?? "",
    os_version: (e: GenEvent) => e.device?.osVersion ?? "",
  };
  const breakdowns = Object.fromEntries(
    Object.entries(dims).map(([dim, key]) => {
      const byKey = new Map<string, GenEvent[]>();
      for (const e of xs) {
        byKey.set(key(e), [...(byKey.get(key(e)) ?? []), e]);
      }
      const rows = [...byKey].map(([k, es]) => {
        const judged = values(es, q.metric);
        return {
          key: k === "" ? null : k,
          samples: es.length,
          meanFps: mean(values(es, "fps")),
          p95FrameTime: nearestRank(values(es, "frame_time"), 0.95),
          failingPct:
            failMark === null || judged.length === 0
              ? null
              : share(judged.filter((v) => worseThan(q.metric, v, failMark)).length, judged.length),
          ...causes.group(es),
        };
      });
      rows.sort(
        (a, b) =>
          (b.failingPct ?? -1) - (a.failingPct ?? -1) ||
          (b.p95FrameTime ?? -1) - (a.p95FrameTime ?? -1) ||
          b.samples - a.samples ||
          textOrder(a.key ?? "", b.key ?? ""),
      );
      return [dim, rows.slice(0, 20)];
    }),
  );
  const sessions = new Map<string, GenEvent[]>();
  for (const e of xs) {
    sessions.set(e.sessionId, [...(sessions.get(e.sessionId) ?? []), e]);
  }
  const worstSessions = [...sessions]
    .map(([sessionId, es]) => {
      const last = es.reduce((a, b) => (b.tsUs > a.tsUs ? b : a));
      return {
        sessionId,
        player: playerOf(last),
        buildId: last.buildId,
        platform: last.platform,
        device: deviceRef(last),
        samples: es.length,
        p95FrameTime: nearestRank(values(es, "frame_time"), 0.95),
        p05Fps: nearestRank(values(es, "fps"), 0.05),
        firstSeen: isoUs(Math.min(...es.map((e) => e.tsUs))),
        lastSeen: isoUs(Math.max(...es.map((e) => e.tsUs))),
      };
    })
    .sort(
      (a, b) =>
        (b.p95FrameTime ?? -Infinity) - (a.p95FrameTime ?? -Infinity) ||
        (a.p05Fps ?? Infinity) - (b.p05Fps ?? Infinity) ||
        textOrder(a.sessionId, b.sessionId),
    )
    .slice(0, 10);
  // Worst samples: the metric's tail, bucketed at or beyond its p05 (fps) or p95.
  const fps = q.metric === "fps";
  const tail = nearestRank(values(xs, q.metric), fps ? 0.05 : 0.95);
  const worst =
    tail === null
      ? []
      : xs.filter((e) => {
          const v = cellSampleOf(e, q.metric);
          return v !== undefined && (fps ? bucketFloor(v) <= tail : bucketFloor(v) >= tail);
        });
  const mode = (key: (e: GenEvent) => string) => {
    const counts = countBy(worst, key);
    return [...counts].sort((a, b) => b[1] - a[1] || textOrder(a[0], b[0]))[0]?.[0] ?? null;
  };
  const deviceKey = mode((e) =>
    JSON.stringify([
      e.device?.gpu ?? "",
      e.device?.deviceModel ?? "",
      e.device?.resolution ?? "",
      e.device?.osVersion ?? "",
    ]),
  );
  const withCamera = worst.filter((e) => e.camera);
  const zs = worst.map((e) => Math.fround(e.pos?.z ?? 1));
  return {
    mapId: q.mapId,
    cellSize: q.cellSize,
    x: q.x,
    y: q.y,
    ...(q.z === undefined ? {} : { z: q.z }),
    metric: q.metric,
    samples: xs.length,
    sessions: sessions.size,
    players: new Set(xs.map(playerOf)).size,
    firstSeen: xs.length ? isoUs(Math.min(...xs.map((e) => e.tsUs))) : null,
    lastSeen: xs.length ? isoUs(Math.max(...xs.map((e) => e.tsUs))) : null,
    distributions,
    profile: q.profile
      ? {
          id: q.profile.id,
          name: q.profile.name,
          marks: CELL_METRIC_KEYS.filter(
            (m) => q.profile?.marks[m].good !== null || q.profile?.marks[m].warn !== null,
          ).map((m) => {
            const mk = q.profile?.marks[m] ?? { good: null, warn: null };
            const vs = values(xs, m);
            const failing = (mark: number | null) =>
              mark === null || vs.length === 0
                ? null
                : share(vs.filter((v) => worseThan(m, v, mark)).length, vs.length);
            return {
              metric: m,
              good: mk.good,
              warn: mk.warn,
              samples: vs.length,
              failingGoodPct: failing(mk.good),
              failingWarnPct: failing(mk.warn),
            };
          }),
        }
      : null,
    breakdowns,
    why: causes.why,
    worstSessions,
    repro: {
      mapId: q.mapId,
      bounds: {
        minX: q.x,
        maxX: q.x + q.cellSize,
        minY: q.y,
        maxY: q.y + q.cellSize,
        ...(q.z === undefined ? {} : { minZ: q.z, maxZ: q.z + q.cellSize }),
      },
      metric: q.metric,
      worstSamples: worst.length,
      threshold: worst.length ? tail : null,
      position: worst.length
        ? {
            x: rawMedian(worst.map((e) => Math.fround(e.pos?.x ?? 0))),
            y: rawMedian(worst.map((e) => Math.fround(e.pos?.y ?? 0))),
            z: rawMedian(zs),
          }
        : null,
      camera: withCamera.length
        ? {
            yaw: circularMedianRef(withCamera.map((e) => e.camera?.yaw ?? 0)),
            pitch: rawMedian(withCamera.map((e) => e.camera?.pitch ?? 0)),
          }
        : null,
      buildId: worst.length ? mode((e) => e.buildId) || null : null,
      platform: worst.length ? mode((e) => e.platform) || null : null,
      device:
        deviceKey === null
          ? null
          : (() => {
              const [gpu, deviceModel, resolution, osVersion] = JSON.parse(deviceKey) as string[];
              return gpu || deviceModel || resolution || osVersion
                ? {
                    gpu: gpu || null,
                    deviceModel: deviceModel || null,
                    resolution: resolution || null,
                    osVersion: osVersion || null,
                  }
                : null;
            })(),
      filters: { buildId: q.buildId ?? null, platform: q.platform ?? null },
    },
  };
}
