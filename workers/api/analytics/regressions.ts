import type { ClickHouseClient } from "@clickhouse/client-web";
import {
  CH_BUILD_DAYS,
  CH_SESSION_CELLS,
  CH_SESSION_MEDIAN_HIST,
  CH_SESSION_VALUES,
} from "../../shared/clickhouse.js";
import { METRIC_KEYS } from "../../shared/telemetry/metrics.js";
import type { Window } from "../window.js";
import { withSessionDevices } from "./device.js";
import {
  adjustedLevel,
  interval,
  proportionInterval,
  proportionTest,
  type RankedValues,
  rankedMedian,
  rankedOf,
  rankedTest,
  type Tested,
} from "./regression-stats.js";
import { num, selectRows } from "./select.js";
import {
  COUNTED_WITH,
  liveAndCarried,
  STORED_GROUPINGS,
  STORED_STATES,
  STORED_VERSION,
  type StoredGrouping,
  type StoredState,
  storedDaysParams,
  usableStoredDays,
} from "./session-medians.js";
import {
  addVerdictCounts,
  emptyVerdictCounts,
  type VerdictCounts,
  type VerdictFamilies,
  type VerdictSide,
  verdictFamilies,
  verdictSide,
  WHOLE,
} from "./session-verdicts.js";

// Build regressions: did the candidate make a metric worse, for whom and where (docs/analytics.md,
// "Build regressions"). The unit is the session: each session's value is the median of its samples of
// the metric (telemetry.session_values and session_cells, 0012_session_values.sql); the two builds'
// session values are compared per group with the exact bootstrap interval of regression-stats.ts,
// corrected for the number of groups (Benjamini–Hochberg), and judged by the verdict rules below.

// The metric table's keys, in its order (workers/shared/telemetry/metrics.ts): each judged by its
// sessions' medians.
export const REGRESSION_METRICS = METRIC_KEYS;
export type RegressionMetric = (typeof REGRESSION_METRICS)[number];
/** The share of a build's judged sessions whose verdict is poor (session-verdicts.ts): a proportion. */
export const POOR_SESSION_SHARE = "poor_session_share";
/** What builds/regressions can judge: the medians' metrics and the poor sessions' share. */
export const REGRESSION_QUERY_METRICS = [...REGRESSION_METRICS, POOR_SESSION_SHARE] as const;
export type RegressionQueryMetric = (typeof REGRESSION_QUERY_METRICS)[number];

export const REGRESSION_GROUPINGS = [
  "platform",
  "gpu",
  "device_model",
  "resolution",
  "os_version",
  "gpu_tier",
] as const;
export type RegressionBy = (typeof REGRESSION_GROUPINGS)[number];

export const VERDICTS = ["regressed", "improved", "no_change", "insufficient_data"] as const;
export type Verdict = (typeof VERDICTS)[number];

/** The heatmap's default cell size; the cells of session_cells. */
export const REGRESSION_CELL_SIZE = 25;

/** The rollup's state column of each metric; fps is the only higher-is-better one. */
const METRIC_STATE: Record<RegressionMetric, string> = {
  frame_time: "frame_q",
  fps: "fps_q",
  gpu_time: "gpu_q",
  memory: "mem_q",
};
const HIGHER_IS_BETTER: Record<RegressionMetric, boolean> = {
  frame_time: false,
  fps: true,
  gpu_time: false,
  memory: false,
};

export type RegressionQuery = {
  candidate: string;
  /** Omitted: the build first seen before the candidate (defaultBaseline). */
  baseline?: string;
  metric: RegressionQueryMetric;
  by: RegressionBy;
  /** User map id as events carry it; restricts every group to that map's samples and adds cells. */
  mapId?: string;
  /** Smallest change, in percent of the baseline's median, that counts as a regression (default 3). */
  minEffectPct: number;
  /** Fewest sessions each build needs in a group (or cell) to be judged (default 20). */
  minSessions: number;
  /**
   * Each side's sessions by verdict and frame causes (`sessionVerdicts`, `frames`): one more read, which
   * merges every session's frames of the two builds. Always with poor_session_share.
   */
  sessionVerdicts?: boolean;
};

/**
 * One build's side of a group. For poor_session_share, `sessions` counts the judged sessions and
 * `median` holds the share of them that were poor (0–1). builds/regressions adds, whatever the metric,
 * the group's sessions by verdict and the causes of its slow heartbeats (session-verdicts.ts).
 */
export type BuildSide = {
  sessions: number;
  median: number | null;
  sessionVerdicts?: Pick<VerdictSide, "good" | "acceptable" | "poor" | "unjudged" | "poorShare">;
  frames?: Pick<
    VerdictSide,
    "heartbeats" | "slow" | "bounds" | "hitches" | "minutesPlayed" | "hitchesPerMinute"
  >;
};

export type RegressionGroup = {
  /** The group's value; null for "not sent" (and for `overall`). */
  key: string | null;
  baseline: BuildSide;
  candidate: BuildSide;
  /** (candidate median − baseline median) / baseline median × 100, 2 decimals; null without both. */
  diffPct: number | null;
  /** Interval for diffPct, percent of the baseline, corrected for the groups tested; null when not tested. */
  ci95: [number, number] | null;
  verdict: Verdict;
};

export type RegressionCell = Omit<RegressionGroup, "key"> & { x: number; y: number; cellSize: number };

export type Regressions = {
  candidate: string;
  baseline: string;
  metric: RegressionQueryMetric;
  by: RegressionBy;
  overall: RegressionGroup;
  groups: RegressionGroup[];
  cells: RegressionCell[];
};

/** The baseline's default: the build whose first sample came last before the candidate's first. */
export async function defaultBaseline(
  ch: ClickHouseClient,
  projectId: string,
  candidate: string,
): Promise<string | null> {
  // Cost: build_days holds a row per project, day and build (granules of 64); this reads the project's
  // rows of all time, a few per day, and keeps one.
  const rows = await selectRows(
    ch,
    `
    SELECT toString(build_id) AS build
    FROM ${CH_BUILD_DAYS}
    WHERE project_id = {projectId:UUID}
    GROUP BY build_id
    HAVING min(first_seen) < (
      SELECT min(first_seen) FROM ${CH_BUILD_DAYS}
      WHERE project_id = {projectId:UUID} AND build_id = {candidate:String})
    ORDER BY min(first_seen) DESC, build DESC
    LIMIT 1`,
    { projectId, candidate },
    { build: "string" },
  );
  return rows[0]?.build ?? null;
}

/** Thrown when no baseline was named and the candidate has no predecessor. */
export class NoBaseline extends Error {
  constructor(candidate: string) {
    super(`no build was first seen before ${candidate}`);
    this.name = "NoBaseline";
  }
}

/**
 * The whole answer of builds/regressions for one project and window. Up to three reads, each narrowed by
 * the primary key to the two builds' rows of the window: the session medians with and without the
 * hardware key (medianFamilies: the stored closed days' histograms and the other days' session values;
 * not for poor_session_share unless gpu_tier needs its frame times), with poor_session_share or
 * sessionVerdicts the sessions' verdicts and frame causes per build and group (session-verdicts.ts: every
 * session's frames of the two builds, no stored days yet), and with a map the per-cell session values.
 */
export async function buildRegressions(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: RegressionQuery,
  /** false: every day from session_values, none of the stored days (the tests' and bench's reference). */
  useStored = true,
): Promise<Regressions> {
  const baseline = q.baseline ?? (await defaultBaseline(ch, projectId, q.candidate));
  if (baseline === null) {
    throw new NoBaseline(q.candidate);
  }
  const column = HARDWARE_COLUMN[q.by];
  const tier = q.by === "gpu_tier";
  const share = q.metric === POOR_SESSION_SHARE;
  // gpu_tier merges the GPUs' groups into tiers learned from the baseline's frame times: every value of
  // each GPU's histogram, the metric's and frame time's.
  const metrics: RegressionMetric[] = [
    ...new Set<RegressionMetric>([
      ...(q.metric === POOR_SESSION_SHARE ? [] : [q.metric]),
      ...(tier ? (["frame_time"] as const) : []),
    ]),
  ];
  const [families, cellRows, verdicts] = await Promise.all([
    metrics.length
      ? medianFamilies(
          ch,
          projectId,
          w,
          {
            baseline,
            candidate: q.candidate,
            mapId: q.mapId,
            keys: share ? [column] : [null, column],
            ranks: tier ? "all" : "central",
          },
          metrics,
          useStored,
        )
      : Promise.resolve(new Map() as MedianFamilies),
    q.mapId === undefined || q.metric === POOR_SESSION_SHARE
      ? Promise.resolve([])
      : cellValues(ch, projectId, w, baseline, { ...q, metric: q.metric }),
    share || q.sessionVerdicts
      ? verdictFamilies(ch, projectId, w, { builds: [baseline, q.candidate], mapId: q.mapId, key: column })
      : null,
  ]);
  const tiers = tier ? gpuTiers(families.get(column)?.get("frame_time") ?? [], q.minSessions) : null;
  const counts = (build: string, key: string | null): VerdictCounts => {
    const side = verdicts?.get(build);
    if (tiers === null || key === WHOLE) {
      return side?.get(key) ?? emptyVerdictCounts();
    }
    // A tier's counts: its GPUs' ('unknown' for a GPU outside every tier, null for none sent).
    let sum = emptyVerdictCounts();
    for (const [k, c] of side ?? []) {
      if (k !== WHOLE && tierOfGpu(k, tiers) === key) {
        sum = addVerdictCounts(sum, c);
      }
    }
    return sum;
  };
  const withFrames = (g: RegressionGroup, key: string | null): RegressionGroup =>
    verdicts === null
      ? g
      : {
          ...g,
          baseline: { ...g.baseline, ...verdictFields(counts(baseline, key)) },
          candidate: { ...g.candidate, ...verdictFields(counts(q.candidate, key)) },
        };
  let overall: RegressionGroup;
  let groups: RegressionGroup[];
  if (q.metric === POOR_SESSION_SHARE) {
    const keys = verdicts === null ? [] : shareKeys(verdicts, [baseline, q.candidate], tiers);
    overall = judgeShareGroups(
      [{ key: null, b: counts(baseline, WHOLE), c: counts(q.candidate, WHOLE) }],
      q,
    )[0] as RegressionGroup;
    groups = judgeShareGroups(
      keys.map((key) => ({ key, b: counts(baseline, key), c: counts(q.candidate, key) })),
      q,
    ).sort(worstFirst(1));
  } else {
    const metric = q.metric;
    const mq = { ...q, metric };
    const worse = HIGHER_IS_BETTER[metric] ? -1 : 1;
    overall = judgedFamily(families, null, mq)[0] as RegressionGroup;
    groups = tiers
      ? judgeRankedGroups(mergeTiers(families.get(column)?.get(metric) ?? [], tiers), mq).sort(
          worstFirst(worse),
        )
      : judgedFamily(families, column, mq);
  }
  const worse = q.metric === POOR_SESSION_SHARE || !HIGHER_IS_BETTER[q.metric] ? 1 : -1;
  // Cells are one family of their own; only the significant ones are answered (the key "x,y" only
  // orders ties).
  const cells = judgeRankedGroups(
    cellRows.map((r) => r.sides),
    { ...q, metric: q.metric === POOR_SESSION_SHARE ? "frame_time" : q.metric },
  )
    .map(({ key, ...g }, i) => ({
      x: cellRows[i]?.x ?? 0,
      y: cellRows[i]?.y ?? 0,
      cellSize: REGRESSION_CELL_SIZE,
      ...g,
      key,
    }))
    .filter((c) => c.verdict === "regressed" || c.verdict === "improved")
    .sort(worstFirst(worse))
    .map(({ key: _key, ...c }) => c);
  return {
    candidate: q.candidate,
    baseline,
    metric: q.metric,
    by: q.by,
    overall: withFrames(overall, WHOLE),
    groups: groups.map((g) => withFrames(g, g.key)),
    cells,
  };
}

/** A side's verdict and frame fields from its counts. */
function verdictFields(c: VerdictCounts): Pick<BuildSide, "sessionVerdicts" | "frames"> {
  const v = verdictSide(c);
  return {
    sessionVerdicts: {
      good: v.good,
      acceptable: v.acceptable,
      poor: v.poor,
      unjudged: v.unjudged,
      poorShare: v.poorShare,
    },
    frames: {
      heartbeats: v.heartbeats,
      slow: v.slow,
      bounds: v.bounds,
      hitches: v.hitches,
      minutesPlayed: v.minutesPlayed,
      hitchesPerMinute: v.hitchesPerMinute,
    },
  };
}

/** The groups poor_session_share judges: every key either build has (tiers: the tiers they fall in). */
function shareKeys(
  v: VerdictFamilies,
  builds: string[],
  tiers: Map<string, string> | null,
): (string | null)[] {
  const keys = new Set<string | null>();
  for (const b of builds) {
    for (const k of v.get(b)?.keys() ?? []) {
      if (k !== WHOLE) {
        keys.add(tiers === null ? k : tierOfGpu(k, tiers));
      }
    }
  }
  return [...keys];
}

/**
 * poor_session_share's family judged together, as the medians' are: a group is tested when both builds
 * have minSessions judged sessions in it; the intervals (Newcombe's, regression-stats.ts) are taken at
 * the level Benjamini–Hochberg leaves over the groups' z-test p-values; diffPct and ci95 are in
 * percentage points of the poor share, and the verdict is regressed (improved) when the interval lies
 * wholly above (below) 0 and the change is at least minEffectPct points.
 */
export function judgeShareGroups(
  family: { key: string | null; b: VerdictCounts; c: VerdictCounts }[],
  q: Pick<RegressionQuery, "minEffectPct" | "minSessions">,
): RegressionGroup[] {
  const judged = (c: VerdictCounts) => ({ x: c.poor, n: c.good + c.acceptable + c.poor });
  const tested = family.map((g) => {
    const b = judged(g.b);
    const c = judged(g.c);
    return b.n >= q.minSessions && c.n >= q.minSessions ? proportionTest(b, c) : null;
  });
  const level = adjustedLevel(tested.flatMap((t) => (t === null ? [] : [t.p])));
  return family.map((g, i) => {
    const b = judged(g.b);
    const c = judged(g.c);
    const t = tested[i] ?? null;
    const diff = b.n && c.n ? (c.x / c.n - b.x / b.n) * 100 : null;
    const ci = t === null ? null : proportionInterval(t, level);
    let verdict: Verdict = "insufficient_data";
    if (t !== null && ci !== null && diff !== null) {
      verdict =
        ci[0] > 0 && diff >= q.minEffectPct
          ? "regressed"
          : ci[1] < 0 && -diff >= q.minEffectPct
            ? "improved"
            : "no_change";
    }
    const shareOf = (p: { x: number; n: number }) => (p.n ? Math.round((p.x / p.n) * 10_000) / 10_000 : null);
    return {
      key: g.key,
      baseline: { sessions: b.n, median: shareOf(b) },
      candidate: { sessions: c.n, median: shareOf(c) },
      diffPct: diff === null ? null : round2(diff),
      ci95: ci === null ? null : [round2(ci[0]), round2(ci[1])],
      verdict,
    };
  });
}

/** What judging medians needs of a query: a median metric and the two thresholds. */
export type MedianJudging = Pick<RegressionQuery, "minEffectPct" | "minSessions"> & {
  metric: RegressionMetric;
};

/** One family of medianFamilies' answer judged (regressions' rules), worst first; key null: [overall]. */
export function judgedFamily(families: MedianFamilies, key: FamilyKey, q: MedianJudging): RegressionGroup[] {
  const worse = HIGHER_IS_BETTER[q.metric] ? -1 : 1;
  return judgeRankedGroups(families.get(key)?.get(q.metric) ?? [], q).sort(worstFirst(worse));
}

/** Both builds' session values of one group, ascending. */
export type SessionSides = { key: string | null; b: number[]; c: number[] };

/**
 * One family of comparisons (the groups, or the cells) judged together: each group with enough
 * sessions on both sides is tested, the intervals are taken at the level Benjamini–Hochberg leaves
 * (regression-stats.ts adjustedLevel), and the verdict is
 * - insufficient_data: either build has fewer than minSessions sessions in the group;
 * - regressed: the interval lies wholly on the worse side (above 0 for frame time, GPU time and
 *   memory, below 0 for fps) and diffPct is at least minEffectPct on that side;
 * - improved: the same on the better side;
 * - no_change: otherwise.
 */
export function judgeGroups(family: SessionSides[], q: MedianJudging): RegressionGroup[] {
  return judgeRankedGroups(
    family.map((g) => ({ key: g.key, b: rankedOf(g.b), c: rankedOf(g.c) })),
    q,
  );
}

/** Both builds' session values of one group as RankedValues (all of them, or the central ranks). */
export type RankedSides = { key: string | null; b: RankedValues; c: RankedValues };

/** judgeGroups over ranked values: the same verdicts from all values or from their central ranks. */
export function judgeRankedGroups(family: RankedSides[], q: MedianJudging): RegressionGroup[] {
  const worse = HIGHER_IS_BETTER[q.metric] ? -1 : 1;
  const tested: (Tested | null)[] = family.map((g) =>
    g.b.n >= q.minSessions && g.c.n >= q.minSessions ? rankedTest(g.b, g.c) : null,
  );
  const level = adjustedLevel(tested.flatMap((t) => (t === null ? [] : [t.p])));
  return family.map((g, i) => {
    const bMedian = rankedMedian(g.b);
    const cMedian = rankedMedian(g.c);
    const diff =
      bMedian === null || cMedian === null || bMedian === 0 ? null : ((cMedian - bMedian) / bMedian) * 100;
    const t = tested[i] ?? null;
    const ci = t === null ? null : interval(t, level);
    let verdict: Verdict = "insufficient_data";
    if (t !== null && ci !== null && diff !== null) {
      const [low, high] = ci;
      const worseSide = worse === 1 ? low > 0 : high < 0;
      const betterSide = worse === 1 ? high < 0 : low > 0;
      verdict =
        worseSide && diff * worse >= q.minEffectPct
          ? "regressed"
          : betterSide && -diff * worse >= q.minEffectPct
            ? "improved"
            : "no_change";
    } else if (t === null && g.b.n >= q.minSessions && g.c.n >= q.minSessions) {
      // Enough sessions but a value ≤ 0 (no ratio): nothing can be said about a relative change.
      verdict = "no_change";
    }
    return {
      key: g.key,
      baseline: { sessions: g.b.n, median: bMedian },
      candidate: { sessions: g.c.n, median: cMedian },
      diffPct: diff === null ? null : round2(diff),
      ci95: ci === null ? null : [round2(ci[0]), round2(ci[1])],
      verdict,
    };
  });
}

const VERDICT_RANK: Record<Verdict, number> = {
  regressed: 0,
  no_change: 1,
  improved: 2,
  insufficient_data: 3,
};

/**
 * Worst first: regressed, no_change, improved, insufficient_data; within a verdict the larger change
 * for the worse first (changes unknown last), then by key (null last).
 */
function worstFirst(worse: 1 | -1) {
  return (a: RegressionGroup, b: RegressionGroup) =>
    VERDICT_RANK[a.verdict] - VERDICT_RANK[b.verdict] ||
    (b.diffPct ?? Number.NEGATIVE_INFINITY) * worse - (a.diffPct ?? Number.NEGATIVE_INFINITY) * worse ||
    keyOrder(a.key, b.key);
}

function keyOrder(a: string | null, b: string | null): number {
  if (a === b) {
    return 0;
  }
  if (a === null) {
    return 1;
  }
  if (b === null) {
    return -1;
  }
  return a < b ? -1 : 1;
}

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}

/** GPU tiers learned from the data, in order from the fastest; see byTier. */
const TIER_NAMES: Record<number, string[]> = { 1: ["mid"], 2: ["fast", "slow"], 3: ["fast", "mid", "slow"] };

/**
 * gpu_tier: the GPUs with at least minSessions baseline sessions carrying frame time are ordered by the
 * median of those sessions' frame times (fastest first) and cut into up to three tiers of about equal
 * baseline sessions (a GPU joins the tier holding the middle of its sessions): fast, mid, slow (two
 * GPUs: fast, slow; one: mid). Rarer GPUs, and GPUs the baseline never saw, are `unknown` rather than a
 * guess; sessions that sent no GPU stay null. Tiers come from the baseline only, so a candidate's
 * regression cannot move a GPU between tiers. The answer: each tiered GPU's tier.
 */
function gpuTiers(frameTimes: RankedSides[], minSessions: number): Map<string, string> {
  const ranked = frameTimes
    .filter((g) => g.key !== null && g.b.n >= minSessions)
    .map((g) => ({ gpu: g.key as string, median: rankedMedian(g.b) ?? 0, sessions: g.b.n }))
    .sort((a, b) => a.median - b.median || (a.gpu < b.gpu ? -1 : 1));
  const total = ranked.reduce((s, g) => s + g.sessions, 0);
  const names = TIER_NAMES[Math.min(3, ranked.length)] ?? [];
  const tierOf = new Map<string, string>();
  let before = 0;
  for (const g of ranked) {
    const middle = (before + g.sessions / 2) / total;
    tierOf.set(g.gpu, names[Math.min(names.length - 1, Math.floor(middle * names.length))] ?? "unknown");
    before += g.sessions;
  }
  return tierOf;
}

/** A GPU's tier: its own, `unknown` outside every tier, null for none sent. */
function tierOfGpu(gpu: string | null, tiers: Map<string, string>): string | null {
  return gpu === null ? null : (tiers.get(gpu) ?? "unknown");
}

/** The GPUs' groups merged into their tiers. */
function mergeTiers(groups: RankedSides[], tiers: Map<string, string>): RankedSides[] {
  const merged = new Map<string | null, RankedSides>();
  for (const g of groups) {
    const tier = tierOfGpu(g.key, tiers);
    const into = merged.get(tier);
    merged.set(
      tier,
      into ? { key: tier, b: mergeAll(into.b, g.b), c: mergeAll(into.c, g.c) } : { ...g, key: tier },
    );
  }
  return [...merged.values()];
}

/** Two sides' values, every one kept (ranks "all"), as one side holding them all. */
function mergeAll(a: RankedValues, b: RankedValues): RankedValues {
  const counts = new Map<number, number>();
  for (const r of [a, b]) {
    r.values.forEach((v, i) => {
      counts.set(v, (counts.get(v) ?? 0) + (r.counts[i] ?? 0));
    });
  }
  const values = [...counts.keys()].sort(ascending);
  const mins = [a.min, b.min].filter((m): m is number => m !== null);
  return {
    n: a.n + b.n,
    min: mins.length ? Math.min(...mins) : null,
    below: 0,
    values,
    counts: values.map((v) => counts.get(v) ?? 0),
  };
}

const ascending = (a: number, b: number) => a - b;

/** The hardware key each grouping reads (gpu_tier groups the GPUs). */
const HARDWARE_COLUMN: Record<RegressionBy, StoredGrouping> = {
  platform: "platform",
  gpu: "gpu",
  device_model: "device_model",
  resolution: "resolution",
  os_version: "os_version",
  gpu_tier: "gpu",
};

/** A family's hardware key: null (every session of a build together) or one of STORED_GROUPINGS. */
export type FamilyKey = StoredGrouping | null;

/** Families of session medians of two builds (medianFamilies). */
export type FamiliesQuery = {
  baseline: string;
  candidate: string;
  mapId?: string;
  /** The families wanted: null for every session of a build together, or a hardware key's groups. */
  keys: readonly FamilyKey[];
  /** "central": only the values holding the central ranks leave ClickHouse; "all": every value. */
  ranks: "central" | "all";
};

/** Per family key, per metric, the groups' ranked sides (key null: one group, always present). */
export type MedianFamilies = Map<FamilyKey, Map<RegressionMetric, RankedSides[]>>;

/** session_median_hist's by_key of a family key. */
const byKeyOf = (k: FamilyKey): number => (k === null ? 0 : STORED_GROUPINGS.indexOf(k) + 1);

/**
 * Several metrics' and families' session medians of two builds in one read: per family key (none, or a
 * hardware key whose groups are its values, '' as null), metric and build, the histogram of the
 * sessions' medians over the window, as RankedValues (the central ranks, or every value).
 */
export async function medianFamilies(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: FamiliesQuery,
  metrics: readonly RegressionMetric[],
  /** false: every day from session_values (the reference and the bench's peer of the stored days). */
  useStored = true,
): Promise<MedianFamilies> {
  // Cost: the primary key (project_id, build_id, day, …) narrows the read to the two builds' rows of the
  // window: about one row per session and day (a session's hardware key rarely changes), read once for
  // all the metrics and families: each session's median of each metric is merged from its row states in
  // the same pass, once per grouping set (one per family). Session medians are quantized
  // (percentiles.ts: at most 256 distinct per octave), so each build, group and metric is a histogram of
  // a few hundred values however many sessions, and of that histogram only the values holding the central
  // ranks (centralSpan: k ± (⌈6·√n⌉ + 2)) leave ClickHouse, with how many sessions lie below them (or,
  // with ranks "all", every value): a row per build, group and metric.
  // Closed days stored by the session-medians job (session-medians.ts) come as their histograms plus
  // the rows of their sessions also seen on other days; every other day of the window is read from
  // session_values as before. Both add up to the same per-value session counts. A device key reads the
  // session's effective hardware (device.ts): the live rows are joined with the device_info rows of the
  // window's days ± 1 (with stored days, only those of the live rows' sessions), the stored days' counted
  // sessions were joined when the day was stored.
  const stored = useStored
    ? await usableStoredDays(ch, projectId, w.from.slice(0, 10), w.to.slice(0, 10))
    : [];
  const medians = metrics.map((m) => `quantileExactLowMerge(0.5)(${METRIC_STATE[m]})`).join(", ");
  const builds = "project_id = {projectId:UUID} AND build_id IN ({baseline:String}, {candidate:String})";
  const inWindow = "day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})";
  const onMap = q.mapId === undefined ? "" : "AND map_id = {mapId:String}";
  const columns = q.keys.filter((k): k is StoredGrouping => k !== null);
  const devices = columns.filter((c): c is Exclude<StoredGrouping, "platform"> => c !== "platform");
  const sets = q.keys.map((k) => (k === null ? "(build_id, session)" : `(build_id, session, ${k})`));
  const family = columns.length
    ? `multiIf(${columns.map((c) => `grouping(${c}) = 0, ${byKeyOf(c)}`).join(", ")}, 0)`
    : "0";
  const keyValue = columns.length
    ? `multiIf(${columns.map((c) => `g = ${byKeyOf(c)}, toString(${c})`).join(", ")}, '')`
    : "''";
  const liveColumns =
    "build_id, session, platform, gpu, device_model, resolution, os_version, frame_q, fps_q, gpu_q, mem_q";
  const union = liveAndCarried(liveColumns, `${builds} ${onMap}`);
  const liveWhere = `${builds} AND ${inWindow} ${onMap}`;
  const source = stored.length
    ? devices.length
      ? withSessionDevices(union, "1", devices, [], "t.session", true)
      : union
    : devices.length
      ? withSessionDevices(CH_SESSION_VALUES, liveWhere, devices, [], "t.session")
      : `${CH_SESSION_VALUES} WHERE ${liveWhere}`;
  const liveCounts = `
        SELECT build, g, key, toUInt32(metric) AS pos, v, count() AS c, max(conflict) AS conflict
        FROM (
          SELECT toString(build_id) AS build, toUInt8(${family}) AS g, ${keyValue} AS key,
            [${medians}] AS vs, ${stored.length ? "max(conflict)" : "toUInt8(0)"} AS conflict
          FROM ${source}
          GROUP BY GROUPING SETS (${sets.join(", ")})
        )
        ARRAY JOIN vs AS v, arrayEnumerate(vs) AS metric
        WHERE NOT isNaN(v)
        GROUP BY build, g, key, metric, v`;
  // Each branch numbers the metric by its position in `metrics` (pos).
  const counts = `
        SELECT build, g, key, pos AS metric, v, sum(c) AS c, max(conflict) AS conflict
        FROM (${
          stored.length
            ? `
          SELECT toString(build_id) AS build, by_key AS g, key_value AS key,
            toUInt32(indexOf({storedMetrics:Array(UInt8)}, metric)) AS pos, value AS v, sessions AS c,
            toUInt8(0) AS conflict
          FROM ${CH_SESSION_MEDIAN_HIST}
          WHERE ${builds} AND ${STORED_VERSION}
            AND by_map = {byMap:UInt8} AND map_id = {mapKey:String} AND by_key IN {byKeys:Array(UInt8)}
            AND metric IN {storedMetrics:Array(UInt8)}
          UNION ALL`
            : ""
        }
          ${liveCounts}
        )
        GROUP BY build, g, key, pos, v`;
  const rows = await selectRows(
    ch,
    `
    ${stored.length ? COUNTED_WITH : ""}
    ${rankedSql(counts, ["build", "g", "key", "metric"], { sql: "max(conflict)", as: "conflict" })}`,
    {
      projectId,
      baseline: q.baseline,
      candidate: q.candidate,
      from: w.from,
      to: w.to,
      retainedFrom: w.retainedFrom,
      mapId: q.mapId,
      ...storedDaysParams(stored, w),
      storedMetrics: metrics.map((m) => STORED_STATES.indexOf(METRIC_STATE[m] as StoredState) + 1),
      byMap: q.mapId === undefined ? 0 : 1,
      mapKey: q.mapId ?? "",
      byKeys: q.keys.map(byKeyOf),
      all: q.ranks === "all" ? 1 : 0,
    },
    {
      build: "string",
      g: "unknown",
      key: "string",
      metric: "unknown",
      n: "unknown",
      smallest: "unknown",
      below: "unknown",
      vals: "unknown",
      counts: "unknown",
      conflict: "unknown",
    },
  );
  if (stored.length && rows.some((r) => num(r.conflict) === 1)) {
    return medianFamilies(ch, projectId, w, q, metrics, false);
  }
  const out = new Map<FamilyKey, Map<RegressionMetric, Map<string | null, RankedSides>>>(
    q.keys.map((k) => [
      k,
      new Map(
        metrics.map((m) => [
          m,
          new Map(k === null ? [[null, { key: null, b: NO_VALUES, c: NO_VALUES }]] : []),
        ]),
      ),
    ]),
  );
  for (const r of rows) {
    const g = num(r.g);
    const groups = out
      .get(g === 0 ? null : (STORED_GROUPINGS[g - 1] ?? null))
      ?.get(metrics[num(r.metric) - 1] as RegressionMetric);
    if (groups === undefined) {
      continue;
    }
    const key = r.key === "" ? null : r.key;
    const side = groups.get(key) ?? { key, b: NO_VALUES, c: NO_VALUES };
    side[r.build === q.baseline ? "b" : "c"] = rankedRow(r);
    groups.set(key, side);
  }
  return new Map(
    [...out].map(([k, byMetric]) => [
      k,
      new Map([...byMetric].map(([m, groups]) => [m, [...groups.values()]])),
    ]),
  );
}

/** builds/compare's session values: the two builds, its map filter, and whether it names a platform. */
export type JudgedQuery = { baseline: string; candidate: string; mapId?: string; byPlatform: boolean };

/**
 * Several metrics' session values of two builds in one read (medianFamilies): per metric, the family
 * builds/regressions judges with by=platform and these builds: the overall sides alone, or (by
 * platform) one group per platform, '' (not sent) as null, each side as its central ranks
 * (regression-stats.ts centralRanks), which judge exactly as all of them do.
 */
export async function sessionValueRanks(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: JudgedQuery,
  metrics: readonly RegressionMetric[],
  /** false: every day from session_values (the bench's peer of the stored days). */
  useStored = true,
): Promise<Map<RegressionMetric, RankedSides[]>> {
  const key: FamilyKey = q.byPlatform ? "platform" : null;
  const families = await medianFamilies(
    ch,
    projectId,
    w,
    { baseline: q.baseline, candidate: q.candidate, mapId: q.mapId, keys: [key], ranks: "central" },
    metrics,
    useStored,
  );
  return families.get(key) ?? new Map();
}

/**
 * Per group of `keys` over `counts` (rows of the keys, a session median `v` and `c` sessions holding
 * it): the sessions `n`, the smallest median, and as `vals`/`counts` the distinct medians holding the
 * central ranks (regression-stats.ts centralSpan: k ± (⌈6·√n⌉ + 2)) with `below` the sessions under
 * them, or every median when {all:UInt8} is 1: RankedValues, which judge exactly as all the values do.
 * `extra` adds aggregate columns over the group's rows.
 */
function rankedSql(counts: string, keys: readonly string[], extra?: { sql: string; as: string }): string {
  const by = keys.join(", ");
  return `SELECT ${by}, n, smallest, below,
      arrayMap(x -> x.1, kept) AS vals, arrayMap(x -> x.2, kept) AS counts${extra ? `, ${extra.as}` : ""}
    FROM (
      SELECT ${by}, toInt64(sum(c)) AS n, min(v) AS smallest${extra ? `, ${extra.sql} AS ${extra.as}` : ""},
        arraySort(groupArray((v, toInt64(c)))) AS hist,
        arrayCumSum(arrayMap(x -> x.2, hist)) AS cum,
        greatest(1, toInt64(ceil(n / 2))) AS k, toInt64(ceil(6 * sqrt(n))) + 2 AS t,
        arrayFilter((x, s) -> {all:UInt8} = 1 OR (s >= k - t AND s - x.2 + 1 <= k + t), hist, cum) AS kept,
        arraySum(arrayMap((x, s) -> if({all:UInt8} = 0 AND s < k - t, x.2, 0), hist, cum)) AS below
      FROM (${counts}
      )
      GROUP BY ${by}
    )`;
}

/** A RankedValues from a rankedSql row. */
function rankedRow(r: {
  n: unknown;
  smallest: unknown;
  below: unknown;
  vals: unknown;
  counts: unknown;
}): RankedValues {
  return {
    n: num(r.n),
    min: Number(r.smallest),
    below: num(r.below),
    values: numbers(r.vals),
    counts: numbers(r.counts),
  };
}

/** A side without sessions (a build absent from a group or cell); sides are replaced, never mutated. */
const NO_VALUES: RankedValues = { n: 0, min: null, below: 0, values: [], counts: [] };

type CellSides = { x: number; y: number; sides: RankedSides };

async function cellValues(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  baseline: string,
  q: RegressionQuery & { metric: RegressionMetric },
): Promise<CellSides[]> {
  const state = METRIC_STATE[q.metric];
  // Cost: the primary key (project_id, map_id, build_id, day, x, y, session) narrows the read to the
  // map's rows of the two builds in the window, a row per session, cell and day; each session's
  // median per cell is merged from its states (grouping the sessions and merging their states is the
  // read's time). Per cell and build, a histogram of the sessions' medians, of which only the central
  // ranks leave ClickHouse (rankedSql: a few dozen values where a cell holds thousands of sessions).
  const counts = `
        SELECT x, y, build, v, count() AS c
        FROM (
          SELECT toString(build_id) AS build, x, y, quantileExactLowMerge(0.5)(${state}) AS v
          FROM ${CH_SESSION_CELLS}
          WHERE project_id = {projectId:UUID} AND map_id = {mapId:String}
            AND build_id IN ({baseline:String}, {candidate:String})
            AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})
          GROUP BY build_id, x, y, session
          HAVING NOT isNaN(v)
        )
        GROUP BY x, y, build, v`;
  const rows = await selectRows(
    ch,
    `${rankedSql(counts, ["x", "y", "build"])}
    ORDER BY x, y, build`,
    {
      projectId,
      mapId: q.mapId,
      baseline,
      candidate: q.candidate,
      from: w.from,
      to: w.to,
      all: 0,
    },
    {
      x: "unknown",
      y: "unknown",
      build: "string",
      n: "unknown",
      smallest: "unknown",
      below: "unknown",
      vals: "unknown",
      counts: "unknown",
    },
  );
  // Only cells where both builds have minSessions sessions can be judged: the family is those.
  const cells = new Map<string, CellSides>();
  for (const r of rows) {
    const x = num(r.x);
    const y = num(r.y);
    const key = `${x},${y}`;
    const cell = cells.get(key) ?? { x, y, sides: { key, b: NO_VALUES, c: NO_VALUES } };
    cell.sides[r.build === baseline ? "b" : "c"] = rankedRow(r);
    cells.set(key, cell);
  }
  return [...cells.values()].filter((c) => c.sides.b.n >= q.minSessions && c.sides.c.n >= q.minSessions);
}

function numbers(v: unknown): number[] {
  return Array.isArray(v) ? v.map((x) => Number(x)) : [];
}

/** The UTC days a read of the window covers, as its statements bound them: [toDate(from), toDate(to)). */
