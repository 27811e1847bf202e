import { BOUNDS, HITCH_FACTOR, MEMORY_PRESSURE } from "./frame-causes.js";

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
//
// The rule as SQL over a session's heartbeat rows, shared by the verdicts read (session-verdicts.ts) and
// the session-medians job that stores closed days' verdicts (session-medians.ts): both count with it.

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

/** The device columns a group key reads through the session's device_info (platform is the row's own). */
export const effectiveKey = (k: string) =>
  k === "platform" ? "t.platform" : `if(t.${k} != '', t.${k}, sd.sd_${k})`;

export const QUANTIZED = (x: string) =>
  `toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(toFloat64(${x})), 0xFFFFF00000000000)))`;

/**
 * The columns a row of a session's heartbeats gives the verdict (verdictCountsSql): its build and session,
 * its frame map's entries packed (the Float32 bits of the length above, the count below: sorting the
 * array sorts by length, and one array keeps key and count together), its slow heartbeats and their
 * bounds, the memory readings of its slow heartbeats whose memory decides, its first and last heartbeat,
 * the session's device memory total. Over `t`, a session_values row (or a carried one), joined as `sd`
 * with its session's device_info; the caller adds `conflict` (see verdictFamilies) and its group columns.
 */
export const VERDICT_ROW = `t.build_id AS build_id, t.session AS session,
              arrayMap((v, c) -> bitOr(bitShiftLeft(toUInt64(v), 32), c), mapKeys(t.frames), mapValues(t.frames)) AS packed,
              t.over_budget AS over_budget,
              ${BOUNDS.map((_, i) => `t.slow_bounds[${i}] AS row_b${i}`).join(", ")},
              arrayZip(mapKeys(t.slow_memory), mapValues(t.slow_memory)) AS slow_memory,
              t.first_heartbeat AS first_heartbeat, t.last_heartbeat AS last_heartbeat,
              ifNull(sd.sd_memory_total_mb, 0) AS sd_total`;

/** The counts verdictCountsSql gives per build and group, as they add up over days. */
export const COUNT_COLUMNS = [
  "sessions",
  "good",
  "acceptable",
  "poor",
  "unjudged",
  "heartbeats",
  "slow_n",
  ...BOUNDS.map((_, i) => `b${i}`),
  "hitch_n",
  "played_us",
] as const;

/**
 * Each session's verdict and causes, counted per build and group: `rows` gives VERDICT_ROW's columns
 * (and `conflict`) plus the grouping columns, `sets` the GROUPING SETS over them (each with build_id and
 * session: a session's rows of one set are the session), and `labels` the group's columns computed at
 * that level (`grouping()` tells the set), named `names`. The answer is a row per build and group: the
 * COUNT_COLUMNS and max(conflict). The job that stores closed days (session-medians.ts) and the read
 * (verdictFamilies) both count with it, so a stored day's counts are the read's.
 */
export function verdictCountsSql(
  rows: string,
  sets: readonly string[],
  labels: string,
  names: readonly string[],
): string {
  const memoryCode = BOUNDS.indexOf("memory");
  const unknownCode = BOUNDS.indexOf("unknown");
  const groups = names.join(", ");
  return `
    SELECT build, ${groups}, toUInt64(count()) AS sessions,
      countIf(verdict = 0) AS good, countIf(verdict = 1) AS acceptable, countIf(verdict = 2) AS poor,
      countIf(verdict = 3) AS unjudged,
      sum(n) AS heartbeats, sum(slow) AS slow_n, ${BOUNDS.map((_, i) => `sum(bounds[${i + 1}]) AS b${i}`).join(", ")}, sum(hitches) AS hitch_n,
      sum(played_us) AS played_us, max(conflict) AS conflict
    FROM (
      SELECT build, ${groups}, n, slow, hitches, played_us, conflict,
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
        SELECT build, ${groups}, slow, ${BOUNDS.map((_, i) => `b${i}`).join(", ")}, sm, total, played_us, conflict,
          arraySort(entries) AS sorted,
          arrayMap(x -> reinterpretAsFloat32(toUInt32(bitShiftRight(x, 32))), sorted) AS fv,
          arrayMap(x -> bitAnd(x, 0xFFFFFFFF), sorted) AS fc,
          arraySum(fc) AS n,
          if(n = 0, toFloat32(0), ${QUANTIZED("fv[arrayFirstIndex(c -> c >= intDiv(n + 1, 2), arrayCumSum(fc))]")}) AS median,
          arraySum(arrayMap((v, c) -> if(v > ${HITCH_FACTOR} * median, c, 0), fv, fc)) AS hitches,
          arraySum(arrayMap((v, c) -> if(v >= ${FROZEN_MS}, c, 0), fv, fc)) AS frozen
        FROM (
          SELECT toString(build_id) AS build, ${labels},
            groupArrayArray(packed) AS entries, sum(over_budget) AS slow,
            ${BOUNDS.map((_, i) => `sum(row_b${i}) AS b${i}`).join(", ")},
            groupArrayArray(slow_memory) AS sm, max(sd_total) AS total,
            ifNull(toUnixTimestamp64Micro(max(last_heartbeat)) - toUnixTimestamp64Micro(min(first_heartbeat)), 0) AS played_us,
            max(conflict) AS conflict
          FROM (${rows})
          GROUP BY GROUPING SETS (${sets.join(", ")})
        )
        -- A session without a heartbeat is no session of the verdicts; a conflicting one still tells.
        WHERE n > 0 OR conflict = 1
      )
    )
    GROUP BY build, ${groups}`;
}

/** The session_values columns a verdict reads, as session_median_carry keeps them too (0039). */
export const HEARTBEAT_COLUMNS =
  "build_id, session, map_id, platform, gpu, device_model, resolution, os_version, frames, over_budget, slow_bounds, slow_memory, first_heartbeat, last_heartbeat";
