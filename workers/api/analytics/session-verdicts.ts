import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_SESSION_VALUES, CH_SESSION_VERDICT_HIST } from "../../shared/clickhouse.js";
import type { Window } from "../window.js";
import { sessionDevices } from "./device.js";
import { BOUNDS, type Bound, boundCounts } from "./frame-causes.js";

import { num, selectRows } from "./select.js";
import {
  COUNTED_WITH,
  liveAndCarried,
  STORED_GROUPINGS,
  STORED_VERSION,
  type StoredGrouping,
  storedDaysParams,
  usableStoredDays,
} from "./session-medians.js";
import {
  COUNT_COLUMNS,
  effectiveKey,
  HEARTBEAT_COLUMNS,
  VERDICT_ROW,
  verdictCountsSql,
} from "./verdict-rule.js";

export {
  ACCEPTABLE_HITCH_SHARE,
  ACCEPTABLE_SLOW_SHARE,
  FROZEN_MS,
  MIN_VERDICT_HEARTBEATS,
  POOR_SLOW_SHARE,
  SESSION_VERDICTS,
  type SessionVerdict,
} from "./verdict-rule.js";

// A verdict for every session, and what bounds the slow frames of a build and hardware group
// (docs/analytics.md, "Session verdicts"): the read, per build and group, of verdict-rule.ts's rule.
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

/**
 * Each session's verdict and causes, counted per build and group. Cost: the primary key (project_id,
 * build_id, day, …) narrows the read to the builds' rows of the window (about one per session, day and
 * map), joined with the window's device_info rows (the memory total the slow heartbeats' memory bound is
 * decided by, and the device keys). Each session's rows are gathered by concatenating arrays, not by
 * merging maps: at 100M events (2.7M sessions of two builds), sumMap of the frame maps alone took
 * 12–17 s and this gathering 1.6–2.4 s (docs/benchmarks.md). The session's sorted entries give its
 * heartbeats, median, hitches and frozen frames (an entry may repeat a length: the counts still add up).
 *
 * Closed days stored by the session-medians job (session-medians.ts) come as their counted sessions'
 * counts (session_verdict_hist: those sessions' whole window is that day, so their verdicts are the
 * stored ones) plus the day's rows of its other sessions (session_median_carry), which are merged with
 * those sessions' rows of the window's other days, read from session_values as before. A live row of a
 * session a used stored day counted (`conflict`: its session_values row landed before its actor_buckets
 * day row), or without a session number, means the stored day was not valid after all: the read is then
 * answered from session_values alone, as medianFamilies does.
 */
export async function verdictFamilies(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: VerdictQuery,
  /** false: every day from session_values (the reference of the stored days, and the bench's peer). */
  useStored = true,
  /** Told the stored days the answer used (none after a conflict): for tests and benchmarks. */
  usedDays?: (days: string[]) => void,
): Promise<VerdictFamilies> {
  const stored = useStored
    ? await usableStoredDays(ch, projectId, w.from.slice(0, 10), w.to.slice(0, 10))
    : [];
  const sets = q.key === null ? ["(build_id, session)"] : ["(build_id, session)", "(build_id, session, k)"];
  const onMap = q.mapId === undefined ? "" : "AND map_id = {mapId:String}";
  const builds = "project_id = {projectId:UUID} AND build_id IN {builds:Array(String)}";
  const inWindow = "day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})";
  // The live rows: every day's from session_values; with stored days, the other days' rows and the
  // stored days' carried rows.
  const source = stored.length
    ? liveAndCarried(HEARTBEAT_COLUMNS, `${builds} ${onMap}`)
    : `(SELECT ${HEARTBEAT_COLUMNS}, toUInt8(0) AS conflict FROM ${CH_SESSION_VALUES} WHERE ${builds} AND ${inWindow} ${onMap})`;
  // The device rows the read needs: a device key's for every session of the builds; else only the
  // memory totals of the sessions with slow heartbeats no stage, read time or own total explained.
  const devices = sessionDevices(
    `AND session IN (SELECT session FROM ${source} WHERE 1${
      q.key === null || q.key === "platform" ? " AND notEmpty(slow_memory)" : ""
    })`,
  );
  const rowsSql = `
            SELECT ${VERDICT_ROW}, t.conflict AS conflict, ${q.key === null ? "''" : effectiveKey(q.key)} AS k
            FROM ${source} AS t
            LEFT JOIN ${devices} AS sd ON sd.sd_session = t.session`;
  const live = verdictCountsSql(
    rowsSql,
    sets,
    `${q.key === null ? "toUInt8(0)" : "toUInt8(grouping(k) = 0)"} AS keyed, if(keyed = 1, toString(k), '') AS key`,
    ["keyed", "key"],
  );
  const counts = stored.length
    ? `
    SELECT build, keyed, key, ${COUNT_COLUMNS.map((c) => `sum(${c}) AS ${c}`).join(", ")}, max(conflict) AS conflict
    FROM (
      SELECT toString(build_id) AS build, toUInt8(by_key != 0) AS keyed, key_value AS key,
        sessions, good, acceptable, poor, unjudged, heartbeats, slow AS slow_n,
        ${BOUNDS.map((_, i) => `b${i}`).join(", ")}, hitches AS hitch_n, played_us, toUInt8(0) AS conflict
      FROM ${CH_SESSION_VERDICT_HIST}
      WHERE ${builds} AND ${STORED_VERSION}
        AND by_map = {byMap:UInt8} AND map_id = {mapKey:String} AND by_key IN {byKeys:Array(UInt8)}
      UNION ALL
      ${live}
    )
    GROUP BY build, keyed, key`
    : live;
  const rows = await selectRows(
    ch,
    `${stored.length ? COUNTED_WITH : ""} ${counts}`,
    {
      projectId,
      builds: [...q.builds],
      from: w.from,
      to: w.to,
      retainedFrom: w.retainedFrom,
      mapId: q.mapId,
      ...storedDaysParams(stored, w),
      byMap: q.mapId === undefined ? 0 : 1,
      mapKey: q.mapId ?? "",
      byKeys: q.key === null ? [0] : [0, STORED_GROUPINGS.indexOf(q.key) + 1],
    },
    {
      build: "string",
      keyed: "unknown",
      key: "string",
      ...(Object.fromEntries(COUNT_COLUMNS.map((c) => [c, "unknown"])) as Record<
        (typeof COUNT_COLUMNS)[number],
        "unknown"
      >),
      conflict: "unknown",
    },
  );
  if (stored.length && rows.some((r) => num(r.conflict) === 1)) {
    return verdictFamilies(ch, projectId, w, q, false, usedDays);
  }
  usedDays?.(stored.map((d) => d.day));
  const out: VerdictFamilies = new Map(q.builds.map((b) => [b, new Map()]));
  for (const r of rows) {
    const side = out.get(r.build) ?? new Map<string | null, VerdictCounts>();
    out.set(r.build, side);
    const key = num(r.keyed) === 1 ? r.key || null : undefined;
    const rec = r as Record<string, unknown>;
    side.set(key === undefined ? WHOLE : key, {
      sessions: num(rec.sessions),
      good: num(rec.good),
      acceptable: num(rec.acceptable),
      poor: num(rec.poor),
      unjudged: num(rec.unjudged),
      heartbeats: num(rec.heartbeats),
      slow: num(rec.slow_n),
      bounds: boundCounts([BOUNDS.map((_, i) => i), BOUNDS.map((_, i) => rec[`b${i}`] ?? 0)]),
      hitches: num(rec.hitch_n),
      playedMs: num(rec.played_us) / 1000,
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
