import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_SESSION_VALUES } from "../../shared/clickhouse.js";
import type { Window } from "../window.js";
import { sessionDevices } from "./device.js";
import { BOUNDS, type Bound, boundCounts, HITCH_FACTOR, MEMORY_PRESSURE } from "./frame-causes.js";

import { num, selectRows } from "./select.js";
import type { StoredGrouping } from "./session-medians.js";

// A verdict for every session, and what bounds the slow frames of a build and hardware group
// (docs/analytics.md, "Session verdicts"). The unit is the session: its heartbeats of the window (on one
// map when a map is asked) as session_values keeps them (0036_session_verdicts.sql): each heartbeat's
// frame length exactly, how many were over their display's frame budget, and those slow heartbeats'
// bounds (frame-causes.ts's rule).
//
// The rule, after Android vitals' two thresholds (a session is "excessive slow frames" when over 50 % of
// its frames miss 16 ms, "excessive frozen frames" when over 0.1 % take 700 ms or more):
// - slow: a heartbeat longer than one refresh of its display (1000 / display.hz; 60 Hz, Android's 16 ms,
//   where the SDK does not send the rate);
// - frozen: a heartbeat of FROZEN_MS or more. A heartbeat samples one frame in every few hundred (one
//   every ~10 s), so a session whose sampled heartbeats hold a frozen frame has, by that sample, well over
//   0.1 % of its frames frozen: one frozen heartbeat is enough;
// - hitch: a heartbeat over HITCH_FACTOR times the session's median frame length (the cell drill-down's
//   rule, its median quantized as session_values' are);
// - poor: over POOR_SLOW_SHARE of the heartbeats slow, or any frozen (Android's "bad behaviour");
// - acceptable: not poor, and over ACCEPTABLE_SLOW_SHARE slow or over ACCEPTABLE_HITCH_SHARE hitches
//   (visible jank or stutter under Android's bar);
// - good: the rest; a session with fewer than MIN_VERDICT_HEARTBEATS heartbeats with a frame length is
//   not judged (a minute of play at the SDKs' 10-second heartbeat).

export const SESSION_VERDICTS = ["good", "acceptable", "poor"] as const;
export type SessionVerdict = (typeof SESSION_VERDICTS)[number];

/** Fewest heartbeats with a frame length a session needs to be judged. */
export const MIN_VERDICT_HEARTBEATS = 6;
/** A frozen frame: at least this long (Android vitals). */
export const FROZEN_MS = 700;
/** Poor: more than this share of the session's heartbeats slow (Android's "excessive slow frames"). */
export const POOR_SLOW_SHARE = 0.5;
/** Acceptable rather than good: more than this share slow. */
export const ACCEPTABLE_SLOW_SHARE = 0.25;
/** Acceptable rather than good: more than this share of the heartbeats hitches. */
export const ACCEPTABLE_HITCH_SHARE = 0.05;

/** The sessions of a build (or of one of its groups) by verdict, and their heartbeats' causes. */
export type VerdictSide = {
  /** Sessions with at least one heartbeat with a frame length. */
  sessions: number;
  good: number;
  acceptable: number;
  poor: number;
  /** Sessions with fewer than MIN_VERDICT_HEARTBEATS heartbeats: not judged. */
  unjudged: number;
  /** poor / (good + acceptable + poor), 4 decimals; null when none was judged. */
  poorShare: number | null;
  /** Heartbeats with a frame length, and those over their display's budget. */
  heartbeats: number;
  slow: number;
  /** The slow heartbeats by bound (frame-causes.ts), every bound present. */
  bounds: Record<Bound, number>;
  /** Heartbeats over HITCH_FACTOR times their session's median frame length. */
  hitches: number;
  /** From each session's first to last heartbeat, summed; 2 decimals. */
  minutesPlayed: number;
  /** hitches / minutesPlayed, 2 decimals; null without a minute played. */
  hitchesPerMinute: number | null;
};

export type VerdictQuery = {
  builds: readonly string[];
  mapId?: string;
  /** null: each build's sessions together; a hardware key: also each build's groups of it. */
  key: StoredGrouping | null;
};

/** Per build, the whole build (WHOLE) and, with a hardware key, each group (null: not sent). */
export type VerdictFamilies = Map<string, Map<string | null, VerdictCounts>>;

/** The device columns a group key reads through the session's device_info (platform is the row's own). */
const effectiveKey = (k: StoredGrouping) =>
  k === "platform" ? "t.platform" : `if(t.${k} != '', t.${k}, sd.sd_${k})`;

const QUANTIZED = (x: string) =>
  `toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(toFloat64(${x})), 0xFFFFF00000000000)))`;

/**
 * Each session's verdict and causes, counted per build and group, in one read of session_values.
 * Cost: the primary key (project_id, build_id, day, …) narrows the read to the builds' rows of the
 * window (about one per session, day and map), joined with the window's device_info rows (the memory
 * total the slow heartbeats' memory bound is decided by, and the device keys). Each session's rows are
 * gathered by concatenating arrays, not by merging maps: at 100M events (2.7M sessions of two builds),
 * sumMap of the frame maps alone took 12–17 s and this gathering 1.6–2.4 s, and the whole read fell from
 * 37 s to 9.5 s (docs/benchmarks.md). A row's frame map becomes an array of its entries, each packed
 * in one UInt64 (the Float32 bits of the length above, the count below: sorting it sorts by length, and
 * one array keeps key and count together), and its slow bounds one sum per bound. The session's sorted
 * entries then give its heartbeats, median, hitches and frozen frames (an entry may repeat a length: the
 * counts still add up); the answer is a row per build and group.
 */
export async function verdictFamilies(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: VerdictQuery,
): Promise<VerdictFamilies> {
  const sets = q.key === null ? ["(build_id, session)"] : ["(build_id, session)", "(build_id, session, k)"];
  const onMap = q.mapId === undefined ? "" : "AND t.map_id = {mapId:String}";
  const scope = `project_id = {projectId:UUID} AND build_id IN {builds:Array(String)}
              AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})
              ${onMap.replace("t.", "")}`;
  // The device rows the read needs: a device key's for every session of the builds; else only the
  // memory totals of the sessions with slow heartbeats no stage, read time or own total explained.
  const devices = sessionDevices(
    `AND session IN (SELECT session FROM ${CH_SESSION_VALUES} WHERE ${scope}${
      q.key === null || q.key === "platform" ? " AND notEmpty(slow_memory)" : ""
    })`,
  );
  const rowsSql = `
            SELECT t.build_id AS build_id, t.session AS session, ${q.key === null ? "''" : effectiveKey(q.key)} AS k,
              arrayMap((v, c) -> bitOr(bitShiftLeft(toUInt64(v), 32), c), mapKeys(t.frames), mapValues(t.frames)) AS packed,
              t.over_budget AS over_budget,
              ${BOUNDS.map((_, i) => `t.slow_bounds[${i}] AS row_b${i}`).join(", ")},
              arrayZip(mapKeys(t.slow_memory), mapValues(t.slow_memory)) AS slow_memory,
              t.first_heartbeat AS first_heartbeat, t.last_heartbeat AS last_heartbeat,
              ifNull(sd.sd_memory_total_mb, 0) AS sd_total
            FROM ${CH_SESSION_VALUES} AS t
            LEFT JOIN ${devices} AS sd ON sd.sd_session = t.session
            WHERE t.project_id = {projectId:UUID} AND t.build_id IN {builds:Array(String)}
              AND t.day >= toDate({from:DateTime64(6, 'UTC')}) AND t.day < toDate({to:DateTime64(6, 'UTC')})
              ${onMap}`;
  const memoryCode = BOUNDS.indexOf("memory");
  const unknownCode = BOUNDS.indexOf("unknown");
  const rows = await selectRows(
    ch,
    `
    SELECT build, keyed, key, toUInt64(count()) AS sessions,
      countIf(verdict = 0) AS good, countIf(verdict = 1) AS acceptable, countIf(verdict = 2) AS poor,
      countIf(verdict = 3) AS unjudged,
      sum(n) AS heartbeats, sum(slow) AS slow_n, [${BOUNDS.map((_, i) => `sum(bounds[${i + 1}])`).join(", ")}] AS bound_counts, sum(hitches) AS hitch_n,
      sum(played_us) AS played_us
    FROM (
      SELECT build, keyed, key, n, slow, hitches, played_us,
        multiIf(n < ${MIN_VERDICT_HEARTBEATS}, 3,
          slow > ${POOR_SLOW_SHARE} * n OR frozen > 0, 2,
          slow > ${ACCEPTABLE_SLOW_SHARE} * n OR hitches > ${ACCEPTABLE_HITCH_SHARE} * n, 1,
          0) AS verdict,
        -- The slow heartbeats whose memory the session's device_info total decides (the cell
        -- drill-down's rule: memory used at least ${MEMORY_PRESSURE} of the total), the rest unknown.
        arraySum(arrayMap(m -> if(total > 0 AND m.1 >= ${MEMORY_PRESSURE} * total * 1048576, m.2, 0), sm)) AS memory_n,
        toUInt64(arraySum(arrayMap(m -> m.2, sm)) - memory_n) AS unknown_n,
        [${BOUNDS.map((_, i) => (i === memoryCode ? `b${i} + memory_n` : i === unknownCode ? `b${i} + unknown_n` : `b${i}`)).join(", ")}] AS bounds
      FROM (
        SELECT build, keyed, key, slow, ${BOUNDS.map((_, i) => `b${i}`).join(", ")}, sm, total, played_us,
          arraySort(entries) AS sorted,
          arrayMap(x -> reinterpretAsFloat32(toUInt32(bitShiftRight(x, 32))), sorted) AS fv,
          arrayMap(x -> bitAnd(x, 0xFFFFFFFF), sorted) AS fc,
          arraySum(fc) AS n,
          if(n = 0, toFloat32(0), ${QUANTIZED("fv[arrayFirstIndex(c -> c >= intDiv(n + 1, 2), arrayCumSum(fc))]")}) AS median,
          arraySum(arrayMap((v, c) -> if(v > ${HITCH_FACTOR} * median, c, 0), fv, fc)) AS hitches,
          arraySum(arrayMap((v, c) -> if(v >= ${FROZEN_MS}, c, 0), fv, fc)) AS frozen
        FROM (
          SELECT toString(build_id) AS build, ${q.key === null ? "toUInt8(0)" : "toUInt8(grouping(k) = 0)"} AS keyed,
            if(keyed = 1, toString(k), '') AS key,
            groupArrayArray(packed) AS entries, sum(over_budget) AS slow,
            ${BOUNDS.map((_, i) => `sum(row_b${i}) AS b${i}`).join(", ")},
            groupArrayArray(slow_memory) AS sm, max(sd_total) AS total,
            ifNull(toUnixTimestamp64Micro(max(last_heartbeat)) - toUnixTimestamp64Micro(min(first_heartbeat)), 0) AS played_us
          FROM (${rowsSql})
          GROUP BY GROUPING SETS (${sets.join(", ")})
        )
        WHERE n > 0
      )
    )
    GROUP BY build, keyed, key`,
    {
      projectId,
      builds: [...q.builds],
      from: w.from,
      to: w.to,
      retainedFrom: w.retainedFrom,
      mapId: q.mapId,
    },
    {
      build: "string",
      keyed: "unknown",
      key: "string",
      sessions: "unknown",
      good: "unknown",
      acceptable: "unknown",
      poor: "unknown",
      unjudged: "unknown",
      heartbeats: "unknown",
      slow_n: "unknown",
      bound_counts: "unknown",
      hitch_n: "unknown",
      played_us: "unknown",
    },
  );
  const out: VerdictFamilies = new Map(q.builds.map((b) => [b, new Map()]));
  for (const r of rows) {
    const side = out.get(r.build) ?? new Map<string | null, VerdictCounts>();
    out.set(r.build, side);
    const key = num(r.keyed) === 1 ? r.key || null : undefined;
    const counts = (r.bound_counts as unknown[] | null) ?? [];
    side.set(key === undefined ? WHOLE : key, {
      sessions: num(r.sessions),
      good: num(r.good),
      acceptable: num(r.acceptable),
      poor: num(r.poor),
      unjudged: num(r.unjudged),
      heartbeats: num(r.heartbeats),
      slow: num(r.slow_n),
      bounds: boundCounts([BOUNDS.map((_, i) => i), BOUNDS.map((_, i) => counts[i] ?? 0)]),
      hitches: num(r.hitch_n),
      playedMs: num(r.played_us) / 1000,
    });
  }
  return out;
}

/**
 * The whole build's entry of a VerdictFamilies side. A group keyed "" is the group of sessions that sent
 * no value (null), so the whole build needs a key no group can have.
 */
export const WHOLE = "\u0000whole";

/** A side's counts as read; verdictSide derives the shares and rates from them. */
export type VerdictCounts = Omit<VerdictSide, "poorShare" | "minutesPlayed" | "hitchesPerMinute"> & {
  playedMs: number;
};

/** A side from its counts (poorShare, minutes and hitches per minute derived, rounded). */
export function verdictSide(c: VerdictCounts): VerdictSide {
  const { playedMs, ...rest } = c;
  const judged = c.good + c.acceptable + c.poor;
  const minutes = playedMs / 60_000;
  return {
    ...rest,
    poorShare: judged === 0 ? null : Math.round((c.poor / judged) * 10_000) / 10_000,
    minutesPlayed: Math.round(minutes * 100) / 100,
    hitchesPerMinute: minutes > 0 ? Math.round((c.hitches / minutes) * 100) / 100 : null,
  };
}

/** Nothing counted (a build or group without sessions). */
export function emptyVerdictCounts(): VerdictCounts {
  return {
    sessions: 0,
    good: 0,
    acceptable: 0,
    poor: 0,
    unjudged: 0,
    heartbeats: 0,
    slow: 0,
    bounds: boundCounts(undefined),
    hitches: 0,
    playedMs: 0,
  };
}

/** Two sides' counts added (a tier of GPUs). */
export function addVerdictCounts(a: VerdictCounts, b: VerdictCounts): VerdictCounts {
  const bounds = Object.fromEntries(BOUNDS.map((k) => [k, a.bounds[k] + b.bounds[k]])) as Record<
    Bound,
    number
  >;
  return {
    sessions: a.sessions + b.sessions,
    good: a.good + b.good,
    acceptable: a.acceptable + b.acceptable,
    poor: a.poor + b.poor,
    unjudged: a.unjudged + b.unjudged,
    heartbeats: a.heartbeats + b.heartbeats,
    slow: a.slow + b.slow,
    bounds,
    hitches: a.hitches + b.hitches,
    playedMs: a.playedMs + b.playedMs,
  };
}
