import type { ClickHouseClient } from "@clickhouse/client-web";
import {
  CH_ACTOR_BUCKETS,
  CH_DAILY_EVENTS,
  CH_EVENTS,
  CH_SESSION_MEDIAN_CARRY,
  CH_SESSION_MEDIAN_DAYS,
  CH_SESSION_MEDIAN_HIST,
  CH_SESSION_VALUES,
  CH_SESSION_VERDICT_HIST,
} from "../../shared/clickhouse.js";
import { rebuildRollups } from "../erasure/rollups.js";
import type { SessionMediansJob, SessionMediansPlanJob } from "../jobs.js";
import { addDays, dateOf, type Window, windowDays } from "../window.js";
import { sessionDevices, withSessionDevices } from "./device.js";
import { BOUNDS } from "./frame-causes.js";
import { num, selectRows } from "./select.js";
import { effectiveKey, VERDICT_ROW, verdictCountsSql } from "./verdict-rule.js";

// Stored histograms of session medians for closed days (0030_session_medians.sql; docs/analytics.md,
// "Build regressions", "Stored days"). builds/compare's verdicts judge, per build, group and metric, the
// histogram of the sessions' medians (regressions.ts sessionValueRanks). A session's median over the
// window depends on all its samples in the window, so a day's histogram can stand for its sessions only
// when none of them has samples on another day of the window. A job stores, per closed day D:
// - counted: the numbers of D's sessions (with performance samples) seen on no other day within
//   NEIGHBOUR_DAYS of D (actor_buckets' day session bitmaps);
// - the histogram of the counted sessions' medians over D's samples, per build, metric, map grouping and
//   hardware grouping (none, platform, or a device key: session_median_hist);
// - the counted sessions' verdicts, counted per build, map grouping and hardware grouping
//   (session_verdict_hist, 0039; verdict-rule.ts, which the verdicts read counts with too);
// - the other sessions' rows of D, merged per build, map, session and hardware, with their heartbeat
//   columns (session_median_carry);
// - the day's stamp: its event total and the XOR of a hash of each key's count (telemetry.daily_events),
//   which a late batch changes (an erasure deletes the stored rows of the player's days itself).
// A read uses a stored day only when its stamp is the day's current one and its counted sessions meet
// none of the window's other days' session bitmaps; its counted sessions then have all their samples of
// the window on D, so their medians are the stored ones, and the day's other sessions are merged from
// the carried rows with their rows of the other days. Every other day is read from session_values.

/** A day is closed (stored) once it is older than yesterday (UTC). */
export const CLOSED_AFTER_DAYS = 2;
/**
 * A stamp must be seen unchanged this long (across two job runs) before the day is computed, so that a
 * batch whose insert was under way when the stamp was read (its daily_events row visible before its
 * session_values rows) has landed in both.
 */
export const SETTLE_MS = 15 * 60_000;
/** counted leaves out the day's sessions seen on any day within this many days of it. */
export const NEIGHBOUR_DAYS = 7;
/** The days the planner keeps stored: the longest window a read asks for. */
export const STORED_DAYS_BACK = 90;

/**
 * The hardware keys session_median_hist stores a histogram for, numbered from 1 in this order (0: no key,
 * every session of the build together; 0033_session_median_groups.sql). The device keys are the
 * session's effective hardware (device.ts); platform is the row's own.
 */
export const STORED_GROUPINGS = ["platform", "gpu", "device_model", "resolution", "os_version"] as const;
export type StoredGrouping = (typeof STORED_GROUPINGS)[number];
/** The device columns among STORED_GROUPINGS: read through the session's device_info. */
const STORED_DEVICE_COLUMNS = ["gpu", "device_model", "resolution", "os_version"] as const;

/** session_values' state columns, in the order of session_median_hist's metric numbers (1 to 4). */
export const STORED_STATES = ["frame_q", "fps_q", "gpu_q", "mem_q"] as const;
export type StoredState = (typeof STORED_STATES)[number];

/**
 * Each day's session bitmap of the project ({projectId:UUID}), the days chosen by `where` over `day`: the
 * one place that reads the per-day session bitmaps (0027_actor_buckets.sql, its day rows).
 */
export function daySessionBitmaps(where: string): string {
  return sessionBitmapsOf(`project_id = {projectId:UUID} AND ${where}`);
}

/** Each project's and day's session bitmap, the rows chosen by `scope` (over project_id and day). */
function sessionBitmapsOf(scope: string): string {
  return `SELECT project_id, day, groupBitmapMergeState(sessions) AS sessions FROM ${CH_ACTOR_BUCKETS}
    WHERE grain = 'day' AND ${scope} GROUP BY project_id, day`;
}

/**
 * Each day's stamp from daily_events (0004_rollups.sql: a row per day, event name, map, platform and
 * build, a few hundred a day whatever the batches): the day's event total and the XOR of a hash of each
 * key's count. A late batch raises a count; an erasure deletes the stored rows of the player's days
 * itself (forgetSessionMedianDays); retention drops whole days. `scope` chooses the rows (over
 * project_id and day); with `byProject` a row per project and day.
 */
function stampsOf(scope: string, byProject = false): string {
  const project = byProject ? "project_id, " : "";
  return `SELECT ${project}day, toUInt64(sum(e)) AS events,
      groupBitXor(cityHash64(event_name, map_id, platform, build_id, e)) AS batches
    FROM (SELECT ${project}day, event_name, map_id, platform, build_id, sum(events) AS e FROM ${CH_DAILY_EVENTS}
      WHERE ${scope} GROUP BY ${project}day, event_name, map_id, platform, build_id)
    GROUP BY ${project}day`;
}

/** Each day's stamp of the project ({projectId:UUID}), the days chosen by `where`. */
function dayStamps(where: string): string {
  return stampsOf(`project_id = {projectId:UUID} AND ${where}`);
}

/** The latest row of each stored day of the project ({projectId:UUID}), the days chosen by `where`. */
function latestRows(where: string): string {
  return latestOf(`project_id = {projectId:UUID} AND ${where}`);
}

/** The latest row of each stored project day, the rows chosen by `scope` (over project_id and day). */
function latestOf(scope: string): string {
  return `SELECT * FROM ${CH_SESSION_MEDIAN_DAYS}
    WHERE ${scope}
      AND (project_id, day, version) IN (SELECT project_id, day, max(version) FROM ${CH_SESSION_MEDIAN_DAYS}
        WHERE ${scope} GROUP BY project_id, day)`;
}

/**
 * The (project_id, day) of the stored days (their latest rows chosen by `scope`, over project_id and
 * day) whose counted sessions now show on another day within NEIGHBOUR_DAYS, among the day session
 * bitmaps `neighbours` chooses: a late event of one of them on a neighbour day changes that day's stamp,
 * not this one's, and would keep every read holding both days from using it, so the day is stored again.
 * Reads a row per stored day and a row per neighbour day.
 */
function countedMetSql(scope: string, neighbours: string): string {
  return `SELECT l.project_id AS project_id, l.day AS day
    FROM (${latestOf(scope)}) AS l
    INNER JOIN (${sessionBitmapsOf(neighbours)}) AS a ON a.project_id = l.project_id
    WHERE l.stored = 1 AND a.day != l.day
      AND a.day >= l.day - ${NEIGHBOUR_DAYS} AND a.day <= l.day + ${NEIGHBOUR_DAYS}
    GROUP BY l.project_id, l.day
    HAVING sum(bitmapAndCardinality(l.counted, a.sessions)) > 0`;
}

type Stamp = { events: string; batches: string };

async function stampOf(ch: ClickHouseClient, projectId: string, day: string): Promise<Stamp> {
  const [row] = await selectRows(
    ch,
    `SELECT toString(events) AS events, toString(batches) AS batches FROM (${dayStamps("day = {day:Date}")})`,
    { projectId, day },
    { events: "string", batches: "string" },
  );
  return { events: row?.events ?? "0", batches: row?.batches ?? "0" };
}

export type StoreOutcome =
  /** The day is today or yesterday: not stored. */
  | "open"
  /** The stored day is the current one: nothing to do. */
  | "current"
  /** A new stamp was recorded; the day is computed once it has held SETTLE_MS. */
  | "seen"
  /** The stamp has not held SETTLE_MS yet. */
  | "waiting"
  /** Some of the day's events carry no session number yet (the number backfill runs): not stored. */
  | "unnumbered"
  /** The stamp changed while computing: recorded as seen, computed by a later run. */
  | "changed"
  | "stored";

/**
 * The job of one project and day (the jobs queue's session-medians message): stores the day's histograms
 * when its stamp has held SETTLE_MS, else records the stamp. Idempotent: a stored day whose stamp is
 * current is left alone, and a rewrite is a new version that replaces the older ones (deleted once it is
 * written; reads only ever use a day's latest version).
 */
export async function storeSessionMedianDay(
  ch: ClickHouseClient,
  projectId: string,
  day: string,
  nowMs: number,
): Promise<StoreOutcome> {
  if (day > addDays(dateOf(nowMs), -CLOSED_AFTER_DAYS)) {
    return "open";
  }
  const stamp = await stampOf(ch, projectId, day);
  const [latest] = await selectRows(
    ch,
    `SELECT toString(version) AS version, stored, toString(events) AS events, toString(batches) AS batches,
      toString(seen_at) AS seen FROM (${latestRows("day = {day:Date}")})`,
    { projectId, day },
    { version: "string", stored: "unknown", events: "string", batches: "string", seen: "string" },
  );
  const same = latest !== undefined && latest.events === stamp.events && latest.batches === stamp.batches;
  // A stored day stays current while its stamp holds and its counted sessions are still seen on no
  // other day within NEIGHBOUR_DAYS (countedMetSql); else it is stored again, counting those no more.
  if (same && num(latest.stored) === 1 && !(await countedMeetsNeighbours(ch, projectId, day))) {
    return "current";
  }
  const nextVersion = (): string => {
    const floor = BigInt(nowMs) * 1000n + BigInt(Math.floor(Math.random() * 1000));
    const after = latest === undefined ? 0n : BigInt(latest.version) + 1n;
    return String(floor > after ? floor : after);
  };
  if (!same) {
    await recordSeen(ch, projectId, day, nextVersion(), stamp, nowMs);
    return "seen";
  }
  const seenAt = Number(latest.seen);
  if (nowMs - seenAt < SETTLE_MS) {
    return "waiting";
  }
  // The day's session_values rows must carry their session numbers: rows stored before they did
  // (0030_session_medians.sql) are rebuilt from the day's events once those are all numbered.
  const [numbering] = await selectRows(
    ch,
    `SELECT
      (SELECT count() FROM ${CH_SESSION_VALUES}
        WHERE project_id = {projectId:UUID} AND day = {day:Date} AND session_idx = 0) AS rows,
      (SELECT count() FROM ${CH_EVENTS}
        WHERE project_id = {projectId:UUID} AND toDate(timestamp) = {day:Date} AND session_idx = 0) AS events`,
    { projectId, day },
    { rows: "unknown", events: "unknown" },
  );
  if (num(numbering?.rows) > 0) {
    if (num(numbering?.events) > 0) {
      return "unnumbered";
    }
    await rebuildRollups(ch, { project: projectId, player: "", identified: [], days: [day] }, [
      CH_SESSION_VALUES,
    ]);
  }
  const version = nextVersion();
  const params = {
    projectId,
    day,
    version,
    events: stamp.events,
    batches: stamp.batches,
    seenAt: String(seenAt),
    first: addDays(day, -NEIGHBOUR_DAYS),
    last: addDays(day, NEIGHBOUR_DAYS),
  };
  // The counted sessions, fixed once in a row of their own (stored = 0: not readable yet), so that the
  // histogram and the carried rows split the day's sessions by the same set.
  await ch.command({
    query: `
      INSERT INTO ${CH_SESSION_MEDIAN_DAYS}
        (project_id, day, version, stored, hist_version, events, batches, seen_at, counted)
      SELECT {projectId:UUID}, {day:Date}, {version:UInt64}, 0, {version:UInt64}, {events:UInt64},
        {batches:UInt64}, {seenAt:UInt64},
        bitmapAndnot(
          (SELECT groupBitmapState(toUInt32(session_idx)) FROM ${CH_SESSION_VALUES}
            WHERE project_id = {projectId:UUID} AND day = {day:Date}),
          (SELECT groupBitmapMergeState(sessions) FROM (${daySessionBitmaps(
            "day >= {first:Date} AND day <= {last:Date} AND day != {day:Date}",
          )})))`,
    query_params: params,
  });
  const counted = `(SELECT counted FROM ${CH_SESSION_MEDIAN_DAYS}
    WHERE project_id = {projectId:UUID} AND day = {day:Date} AND version = {version:UInt64})`;
  const medians = STORED_STATES.map((s) => `quantileExactLowMerge(0.5)(${s})`).join(", ");
  // Per build, map grouping (all maps, each map) and hardware grouping (none, then STORED_GROUPINGS in
  // order), each counted session's median of every metric over the day's samples. The device keys are
  // the effective ones, joined from the day's device_info rows as a read of any window holding the day
  // joins them: a counted session is seen on no other day within NEIGHBOUR_DAYS, its device_info included.
  const sets = ["(build_id, session)", ...STORED_GROUPINGS.map((g) => `(build_id, session, ${g})`)];
  const groupingOf = `multiIf(${STORED_GROUPINGS.map((g, i) => `grouping(${g}) = 0, ${i + 1}`).join(", ")}, 0)`;
  const keyOf = `multiIf(${STORED_GROUPINGS.map((g, i) => `g = ${i + 1}, toString(${g})`).join(", ")}, '')`;
  const source = withSessionDevices(
    CH_SESSION_VALUES,
    "project_id = {projectId:UUID} AND day = {day:Date}",
    STORED_DEVICE_COLUMNS,
    [],
    "t.session",
  );
  await ch.command({
    query: `
      INSERT INTO ${CH_SESSION_MEDIAN_HIST}
        (project_id, build_id, day, version, by_map, map_id, by_key, key_value, metric, value, sessions)
      WITH ${counted} AS counted
      SELECT {projectId:UUID}, build_id, {day:Date}, {version:UInt64}, bm, m, g, k, toUInt8(metric), v, count()
      FROM (
        SELECT build_id, toUInt8(1 - grouping(map_id)) AS bm, if(bm = 1, toString(map_id), '') AS m,
          toUInt8(${groupingOf}) AS g, ${keyOf} AS k, [${medians}] AS vs
        FROM ${source}
        WHERE bitmapContains(counted, toUInt32(session_idx))
        GROUP BY GROUPING SETS (${[...sets, ...sets.map((x) => x.replace("(build_id, ", "(build_id, map_id, "))].join(", ")})
      )
      ARRAY JOIN vs AS v, arrayEnumerate(vs) AS metric
      WHERE NOT isNaN(v)
      GROUP BY build_id, bm, m, g, k, metric, v`,
    query_params: { ...params, ...dayWindow(day) },
  });
  await ch.command({ query: storeVerdictsSql(counted), query_params: { ...params, ...dayWindow(day) } });
  await ch.command({
    query: `
      INSERT INTO ${CH_SESSION_MEDIAN_CARRY}
        (project_id, build_id, day, version, map_id, session, platform, gpu, device_model, resolution,
          os_version, frame_q, fps_q, gpu_q, mem_q, frames, over_budget, slow_bounds, slow_memory,
          first_heartbeat, last_heartbeat)
      WITH ${counted} AS counted
      SELECT {projectId:UUID}, build_id, {day:Date}, {version:UInt64}, map_id, session, platform, gpu,
        device_model, resolution, os_version,
        quantileExactLowMergeState(0.5)(frame_q), quantileExactLowMergeState(0.5)(fps_q),
        quantileExactLowMergeState(0.5)(gpu_q), quantileExactLowMergeState(0.5)(mem_q),
        sumMap(frames), sum(over_budget), sumMap(slow_bounds), sumMap(slow_memory), min(first_heartbeat),
        max(last_heartbeat)
      FROM ${CH_SESSION_VALUES}
      WHERE project_id = {projectId:UUID} AND day = {day:Date} AND NOT bitmapContains(counted, toUInt32(session_idx))
      GROUP BY build_id, map_id, session, platform, gpu, device_model, resolution, os_version`,
    query_params: params,
  });
  // Written from data the stamp read before it describes, unless a batch landed meanwhile.
  const after = await stampOf(ch, projectId, day);
  if (after.events !== stamp.events || after.batches !== stamp.batches) {
    await recordSeen(ch, projectId, day, String(BigInt(version) + 1n), after, nowMs);
    return "changed";
  }
  await ch.command({
    query: `
      INSERT INTO ${CH_SESSION_MEDIAN_DAYS}
        (project_id, day, version, stored, hist_version, events, batches, seen_at, counted)
      SELECT project_id, day, {final:UInt64}, 1, hist_version, events, batches, seen_at, counted
      FROM ${CH_SESSION_MEDIAN_DAYS}
      WHERE project_id = {projectId:UUID} AND day = {day:Date} AND version = {version:UInt64}`,
    query_params: { ...params, final: String(BigInt(version) + 1n) },
  });
  // The day's older versions are never read again (a read takes the latest row): deleted.
  for (const table of STORED_TABLES) {
    await deleteWhere(
      ch,
      table,
      "project_id = {projectId:UUID} AND day = {day:Date} AND version < {version:UInt64}",
      params,
    );
  }
  return "stored";
}

/** The tables of a stored day, each row under the day's version. */
const STORED_TABLES = [
  CH_SESSION_MEDIAN_DAYS,
  CH_SESSION_MEDIAN_HIST,
  CH_SESSION_MEDIAN_CARRY,
  CH_SESSION_VERDICT_HIST,
] as const;

/**
 * The day's counted sessions' verdicts (verdict-rule.ts), counted per build and grouping as
 * session_median_hist's histograms are (by_map: all maps or each map; by_key: none or each
 * STORED_GROUPINGS key, numbered from 1, the device keys the session's effective hardware): the rows
 * verdictFamilies adds for a stored day. `counted` is the day's bitmap at the version being written; the
 * device_info rows are the day's ± 1 (its window), as the read's are for a session of that day only.
 */
function storeVerdictsSql(counted: string): string {
  const keys = STORED_GROUPINGS.map((g, i) => `${effectiveKey(g)} AS k${i + 1}`).join(", ");
  const sets = ["(build_id, session)", ...STORED_GROUPINGS.map((_, i) => `(build_id, session, k${i + 1})`)];
  const mapped = sets.map((x) => x.replace("(build_id, session", "(build_id, session, map_id"));
  const g = `toUInt8(multiIf(${STORED_GROUPINGS.map((_, i) => `grouping(k${i + 1}) = 0, ${i + 1}`).join(", ")}, 0))`;
  const kv = `multiIf(${STORED_GROUPINGS.map((_, i) => `g = ${i + 1}, toString(k${i + 1})`).join(", ")}, '')`;
  const rows = `
            SELECT ${VERDICT_ROW}, toUInt8(0) AS conflict, t.map_id AS map_id, ${keys}
            FROM ${CH_SESSION_VALUES} AS t
            LEFT JOIN ${sessionDevices(
              `AND session IN (SELECT session FROM ${CH_SESSION_VALUES}
                WHERE project_id = {projectId:UUID} AND day = {day:Date} AND bitmapContains(counted, toUInt32(session_idx)))`,
            )} AS sd ON sd.sd_session = t.session
            WHERE t.project_id = {projectId:UUID} AND t.day = {day:Date}
              AND bitmapContains(counted, toUInt32(t.session_idx))`;
  const counts = verdictCountsSql(
    rows,
    [...sets, ...mapped],
    `toUInt8(1 - grouping(map_id)) AS bm, if(bm = 1, toString(map_id), '') AS m, ${g} AS g, ${kv} AS kv`,
    ["bm", "m", "g", "kv"],
  );
  return `
      INSERT INTO ${CH_SESSION_VERDICT_HIST}
        (project_id, build_id, day, version, by_map, map_id, by_key, key_value, sessions, good, acceptable,
          poor, unjudged, heartbeats, slow, ${BOUNDS.map((_, i) => `b${i}`).join(", ")}, hitches, played_us)
      WITH ${counted} AS counted
      SELECT {projectId:UUID}, build, {day:Date}, {version:UInt64}, bm, m, g, kv, sessions, good, acceptable,
        poor, unjudged, heartbeats, slow_n, ${BOUNDS.map((_, i) => `b${i}`).join(", ")}, hitch_n, played_us
      FROM (${counts})`;
}

/** Whether the day's latest stored row is one countedMetSql finds (a session it counted shows nearby). */
async function countedMeetsNeighbours(
  ch: ClickHouseClient,
  projectId: string,
  day: string,
): Promise<boolean> {
  const [row] = await selectRows(
    ch,
    `SELECT count() AS n FROM (${countedMetSql(
      "project_id = {projectId:UUID} AND day = {day:Date}",
      "project_id = {projectId:UUID} AND day >= {first:Date} AND day <= {last:Date}",
    )})`,
    { projectId, day, first: addDays(day, -NEIGHBOUR_DAYS), last: addDays(day, NEIGHBOUR_DAYS) },
    { n: "unknown" },
  );
  return num(row?.n) > 0;
}

async function recordSeen(
  ch: ClickHouseClient,
  projectId: string,
  day: string,
  version: string,
  stamp: Stamp,
  nowMs: number,
): Promise<void> {
  await ch.command({
    query: `
      INSERT INTO ${CH_SESSION_MEDIAN_DAYS}
        (project_id, day, version, stored, hist_version, events, batches, seen_at, counted)
      SELECT {projectId:UUID}, {day:Date}, {version:UInt64}, 0, 0, {events:UInt64}, {batches:UInt64},
        {seenAt:UInt64}, bitmapBuild(CAST([], 'Array(UInt32)'))`,
    query_params: { projectId, day, version, ...stamp, seenAt: String(nowMs) },
  });
}

/** The window of one UTC day, as device.ts SESSION_DEVICES binds it (its device_info rows: the day ± 1). */
function dayWindow(day: string): { from: string; to: string; retainedFrom: string } {
  return { from: `${day} 00:00:00`, to: `${addDays(day, 1)} 00:00:00`, retainedFrom: "1970-01-01 00:00:00" };
}

/** A lightweight DELETE of the matching rows, only when there are some (a DELETE is a mutation). */
async function deleteWhere(
  ch: ClickHouseClient,
  table: string,
  where: string,
  params: Record<string, unknown>,
): Promise<number> {
  const [row] = await selectRows(ch, `SELECT count() AS n FROM ${table} WHERE ${where}`, params, {
    n: "unknown",
  });
  const n = num(row?.n);
  if (n > 0) {
    await ch.command({
      query: `DELETE FROM ${table} WHERE ${where} SETTINGS lightweight_deletes_sync = 2, mutations_sync = 2`,
      query_params: params,
    });
  }
  return n;
}

/**
 * An erasure's part (erasure/erase.ts): every stored row of the player's days goes, so that nothing
 * computed from their events remains (the stamps would keep those rows from being read already; this
 * removes them). The job stores the days again from the rebuilt session values.
 */
export async function forgetSessionMedianDays(
  ch: ClickHouseClient,
  projectId: string,
  days: readonly string[],
): Promise<void> {
  if (!days.length) {
    return;
  }
  for (const table of STORED_TABLES) {
    await deleteWhere(ch, table, "project_id = {projectId:UUID} AND day IN {days:Array(Date)}", {
      projectId,
      days,
    });
  }
}

/**
 * The days of these projects the job should visit at `nowMs`: the closed days of the last
 * STORED_DAYS_BACK with events whose latest stored row is not a stored one with the current stamp, or is
 * one whose counted sessions are now seen on another day within NEIGHBOUR_DAYS (a late event on a
 * neighbour day: storeSessionMedianDay stores it again). One read of the projects' day stamps, stored
 * rows and day session bitmaps of those days (a row per project and day each).
 */
export async function sessionMedianDaysDue(
  ch: ClickHouseClient,
  projectIds: readonly string[],
  nowMs: number,
): Promise<Array<{ projectId: string; day: string }>> {
  if (!projectIds.length) {
    return [];
  }
  const today = dateOf(nowMs);
  const params = {
    projects: projectIds,
    first: addDays(today, -(STORED_DAYS_BACK - 1)),
    last: addDays(today, -CLOSED_AFTER_DAYS),
    neighboursFrom: addDays(today, -(STORED_DAYS_BACK - 1 + NEIGHBOUR_DAYS)),
    neighboursTo: addDays(today, -CLOSED_AFTER_DAYS + NEIGHBOUR_DAYS),
  };
  const scope = "project_id IN {projects:Array(UUID)} AND day >= {first:Date} AND day <= {last:Date}";
  const rows = await selectRows(
    ch,
    `
    SELECT toString(b.project_id) AS project, toString(b.day) AS day
    FROM (${stampsOf(scope, true)}) AS b
    LEFT JOIN (${latestOf(scope)}) AS s ON s.project_id = b.project_id AND s.day = b.day
    WHERE NOT (s.stored = 1 AND s.events = b.events AND s.batches = b.batches)
      OR (b.project_id, b.day) IN (SELECT project_id, day FROM (${countedMetSql(
        scope,
        "project_id IN {projects:Array(UUID)} AND day >= {neighboursFrom:Date} AND day <= {neighboursTo:Date}",
      )}))
    ORDER BY project, day`,
    params,
    { project: "string", day: "string" },
  );
  return rows.map((r) => ({ projectId: r.project, day: r.day }));
}

/** A stored day a read may use, and the version of its histogram and carried rows. */
export type StoredDay = { day: string; version: string };

/**
 * The stored days a read of the window's days [first, end) may use: the latest row is stored, its stamp
 * is the day's current one, and its counted sessions are on none of the window's other days. Reads the
 * window's stored rows, batch totals and session bitmaps (a row per day, a row per batch).
 */
export async function usableStoredDays(
  ch: ClickHouseClient,
  projectId: string,
  first: string,
  end: string,
): Promise<StoredDay[]> {
  const inWindow = "day >= {first:Date} AND day < {end:Date}";
  const rows = await selectRows(
    ch,
    `
    SELECT toString(s.day) AS day, toString(any(s.hist_version)) AS version
    FROM (
      SELECT l.day AS day, l.hist_version AS hist_version, l.counted AS counted
      FROM (${latestRows(inWindow)}) AS l
      INNER JOIN (${dayStamps(inWindow)}) AS b ON b.day = l.day
      WHERE l.stored = 1 AND l.events = b.events AND l.batches = b.batches
    ) AS s
    CROSS JOIN (${daySessionBitmaps(inWindow)}) AS a
    GROUP BY s.day
    HAVING sum(if(a.day = s.day, 0, bitmapAndCardinality(s.counted, a.sessions))) = 0
    ORDER BY day`,
    { projectId, first, end },
    { day: "string", version: "string" },
  );
  return rows;
}

/**
 * A stored-days read's parts (regressions.ts medianFamilies, session-verdicts.ts verdictFamilies), over
 * the parameters storedDaysParams binds. STORED_VERSION chooses a used stored day's rows of a stored
 * table (its day and version); COUNTED_WITH puts the used days' counted sessions in one bitmap,
 * `counted`.
 */
export const STORED_VERSION =
  "day IN {storedDays:Array(Date)} AND version = toUInt64OrZero(arrayElement({storedVersions:Array(String)}, indexOf({storedDays:Array(Date)}, day)))";
export const COUNTED_WITH = `WITH (SELECT groupBitmapOrState(counted) FROM ${CH_SESSION_MEDIAN_DAYS}
      WHERE project_id = {projectId:UUID} AND stored = 1 AND day IN {storedDays:Array(Date)}
        AND hist_version = toUInt64OrZero(arrayElement({storedVersions:Array(String)}, indexOf({storedDays:Array(Date)}, day)))) AS counted`;

/**
 * The live rows of a stored-days read: `columns` of session_values' rows of the window's other days and of
 * the used days' carried rows, both matching `where` (over the builds and map), with `conflict`: a live
 * row of a session a used day counted can only be an event whose session_values row became visible
 * before its actor_buckets day row (an insert's views land one after the other), so the stored day was
 * not valid after all, and the read answers from session_values alone; so does a live row without a
 * session number (stored before session_values carried them), which could belong to a counted session.
 */
export function liveAndCarried(columns: string, where: string): string {
  return `(
            SELECT ${columns}, session_idx = 0 OR bitmapContains(counted, toUInt32(session_idx)) AS conflict
            FROM ${CH_SESSION_VALUES}
            WHERE ${where} AND day IN {liveDays:Array(Date)}
            UNION ALL
            SELECT ${columns}, toUInt8(0) AS conflict
            FROM ${CH_SESSION_MEDIAN_CARRY}
            WHERE ${where} AND ${STORED_VERSION}
          )`;
}

/** The parameters of the stored-days parts: the used days, their versions, the window's other days. */
export function storedDaysParams(stored: readonly StoredDay[], w: Pick<Window, "from" | "to">) {
  return {
    storedDays: stored.map((d) => d.day),
    storedVersions: stored.map((d) => d.version),
    // The window's other days, listed (a NOT IN would not narrow the primary key's day range).
    liveDays: windowDays(w).filter((d) => !stored.some((x) => x.day === d)),
  };
}

/** Projects per plan message: one read of their batch totals and stored rows of STORED_DAYS_BACK days. */
export const SESSION_MEDIAN_PROJECTS_PER_MESSAGE = 200;

/**
 * The cron's part, on its first run of each UTC hour (minute < 5): every project's id, in plan messages
 * of SESSION_MEDIAN_PROJECTS_PER_MESSAGE (Postgres only, then the jobs queue). Each plan message's
 * consumer sends one session-medians message per project day due (planSessionMedianDays).
 */
export async function planSessionMedians(
  env: Env,
  projectIds: () => Promise<string[]>,
  now: Date,
): Promise<{ projects: number; messages: number } | null> {
  if (now.getUTCMinutes() >= 5) {
    return null;
  }
  const ids = await projectIds();
  const messages: SessionMediansPlanJob[] = [];
  for (let i = 0; i < ids.length; i += SESSION_MEDIAN_PROJECTS_PER_MESSAGE) {
    messages.push({
      v: 1,
      kind: "session-medians-plan",
      runAt: now.getTime(),
      projectIds: ids.slice(i, i + SESSION_MEDIAN_PROJECTS_PER_MESSAGE),
    });
  }
  // About 40 bytes a project: ten messages of 200 stay far under sendBatch's 256 KB.
  for (let i = 0; i < messages.length; i += 10) {
    await env.JOBS_QUEUE.sendBatch(
      messages.slice(i, i + 10).map((body) => ({ body, contentType: "json" as const })),
    );
  }
  return { projects: ids.length, messages: messages.length };
}

/** A plan message's consumer: one session-medians message per project day due, 100 per sendBatch. */
export async function planSessionMedianDays(
  env: Env,
  ch: ClickHouseClient,
  job: SessionMediansPlanJob,
): Promise<{ days: number }> {
  const due = await sessionMedianDaysDue(ch, job.projectIds, job.runAt);
  const bodies: SessionMediansJob[] = due.map((d) => ({
    v: 1,
    kind: "session-medians",
    runAt: job.runAt,
    projectId: d.projectId,
    day: d.day,
  }));
  for (let i = 0; i < bodies.length; i += 100) {
    await env.JOBS_QUEUE.sendBatch(
      bodies.slice(i, i + 100).map((body) => ({ body, contentType: "json" as const })),
    );
  }
  return { days: bodies.length };
}
