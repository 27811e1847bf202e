import type { ClickHouseClient } from "@clickhouse/client-web";
import {
  CH_ACTOR_BUCKETS,
  CH_ALERT_CELLS,
  CH_BATCH_TOTALS,
  CH_BUILD_DAYS,
  CH_COMPARE_ROLLUP,
  CH_DAILY_EVENTS,
  CH_DB,
  CH_EVENTS,
  CH_EVENTS_REPLAY,
  CH_HEATMAP_CELLS,
  CH_PLAYER_DIMS,
  CH_SESSION_CELLS,
  CH_SESSION_VALUES,
} from "../../shared/clickhouse.js";
import type { Bound } from "./steps.js";

/**
 * Rollups keyed by (project, day, …) without a player in the key (0004_rollups.sql, 0024_actor_bitmaps.sql,
 * 0027_actor_buckets.sql):
 * a player's contribution is inside sums, maxima, histograms, uniq states and bitmaps, so it cannot be
 * deleted by itself.
 * The erasure replaces the rows of every (project, day) the player has events on with rows rebuilt
 * from the table's `_src` view, which leaves that player's events out.
 */
export const REBUILT_ROLLUPS = [
  CH_HEATMAP_CELLS,
  CH_ALERT_CELLS,
  CH_DAILY_EVENTS,
  CH_BUILD_DAYS,
  CH_COMPARE_ROLLUP,
  CH_SESSION_VALUES,
  CH_SESSION_CELLS,
  // The bitmaps of dense numbers (0024_actor_bitmaps.sql, 0027_actor_buckets.sql): a number cannot be
  // removed from a bitmap state by a DELETE either.
  CH_ACTOR_BUCKETS,
  CH_PLAYER_DIMS,
  // The status KPIs' per-batch totals (0025_batch_totals.sql).
  CH_BATCH_TOTALS,
];

/**
 * The tables among them holding bitmaps of dense numbers: what the number backfill rebuilds
 * (analytics/numbers-backfill.ts); compare_rollup's session and player sets are bitmaps since
 * 0034_compare_bitmaps.sql.
 */
export const BITMAP_ROLLUPS = [CH_ACTOR_BUCKETS, CH_PLAYER_DIMS, CH_COMPARE_ROLLUP];

/**
 * The rollups with a replay view (0032_rollup_replay.sql): a rebuild refills all of them from ONE read of
 * the days' events, inserted into `events_replay`. The others are refilled from their `_src` view, a
 * read of the days' events each.
 */
export const REPLAYED_ROLLUPS: readonly string[] = [
  CH_HEATMAP_CELLS,
  CH_ALERT_CELLS,
  CH_DAILY_EVENTS,
  CH_BUILD_DAYS,
  CH_COMPARE_ROLLUP,
  CH_SESSION_CELLS,
  CH_ACTOR_BUCKETS,
  CH_PLAYER_DIMS,
  CH_BATCH_TOTALS,
];

/**
 * The rollups keyed by session (0012_session_values.sql, 0030_session_medians.sql): a row holds one
 * session's samples of a day, so an erasure deletes the rows of the sessions it touched (the player's
 * identified sessions and their anonymous one) instead of rebuilding every session of the player's days,
 * and re-derives from the events left only the touched sessions another identified player also sent
 * events in (`Bound.emptied` lists those that lost every event). The number backfill, which passes no
 * `emptied`, rebuilds them by day like the others.
 */
export const SESSION_ROLLUPS: readonly string[] = [CH_SESSION_VALUES, CH_SESSION_CELLS];

/** What one rebuild replaced: the rows of the player's days before it (merged or not). */
export type RebuildOutcome = { table: string; rowsRemoved: number };

/**
 * Deletes the project's rows of the player's days, then inserts them again from the events without
 * the player's. Run once, after the steps deleted the events (erase.ts): the days come from the bound
 * read before the first delete, and the player's events that arrived meanwhile are left out by the
 * view's parameters. Running it again (a retry) replaces the same rows. Events of other players
 * arriving for those days between the DELETE and the INSERT's read are counted by both the view and
 * the rebuild: erasures are rare and mostly touch past days, where nothing arrives.
 */
export async function rebuildRollups(
  ch: ClickHouseClient,
  bound: Pick<Bound, "project" | "player" | "identified" | "days"> & Partial<Pick<Bound, "emptied">>,
  tables: readonly string[] = REBUILT_ROLLUPS,
): Promise<RebuildOutcome[]> {
  if (!bound.days.length) {
    return tables.map((table) => ({ table, rowsRemoved: 0 }));
  }
  // An erasure's sessions (SESSION_ROLLUPS): every session it touched, and those of them left with
  // another player's events.
  const touched = [...new Set([...bound.identified, bound.player])];
  const emptied = bound.emptied;
  const bySession = (table: string) => emptied !== undefined && SESSION_ROLLUPS.includes(table);
  const shared = emptied === undefined ? [] : touched.filter((s) => !emptied.includes(s));
  const params = {
    project: bound.project,
    days: bound.days,
    player: bound.player,
    identified: bound.identified,
    touched,
    shared,
  };
  const outcomes: RebuildOutcome[] = [];
  // Every table's rows of the days go first (of the touched sessions only, for the session-keyed ones),
  // then the rows come back: the replayed tables together from one read of the events (the same filter
  // as the `_src` views': the project, the days, not the player nor their identified sessions' anonymous
  // events), the others one `_src` read each.
  for (const table of tables) {
    const where = `project_id = {project:UUID} AND day IN {days:Array(Date)}${
      bySession(table) ? " AND session IN (SELECT cityHash64(arrayJoin({touched:Array(String)})))" : ""
    }`;
    const rs = await ch.query({
      query: `SELECT count() AS n FROM ${table} WHERE ${where}`,
      query_params: params,
      format: "JSONEachRow",
    });
    const [row] = await rs.json<{ n: string | number }>();
    await ch.command({
      query: `DELETE FROM ${table} WHERE ${where} SETTINGS lightweight_deletes_sync = 2, mutations_sync = 2`,
      query_params: params,
    });
    outcomes.push({ table, rowsRemoved: Number(row?.n ?? 0) });
  }
  const replayed = tables.filter((t) => REPLAYED_ROLLUPS.includes(t) && !bySession(t));
  if (replayed.length) {
    // Cost: the project's events of the days, read once whatever the number of replayed tables.
    await ch.command({
      query: `INSERT INTO ${CH_EVENTS_REPLAY}
        SELECT *, {targets:Array(String)} AS replay_targets FROM ${CH_EVENTS}
        WHERE project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
          AND NOT (player = {player:String} OR (player_id = '' AND session_id IN {identified:Array(String)}))`,
      query_params: { ...params, targets: replayed.map((t) => t.slice(`${CH_DB}.`.length)) },
    });
  }
  for (const table of tables.filter((t) => !REPLAYED_ROLLUPS.includes(t) && !bySession(t))) {
    await ch.command({
      query: `INSERT INTO ${table} SELECT * FROM ${table}_src(whole = false, project = {project:UUID},
        days = {days:Array(Date)}, player = {player:String}, identified = {identified:Array(String)})`,
      query_params: params,
    });
  }
  // The touched sessions that keep another player's events: their rows again, from those events alone.
  // Cost: nothing when every touched session was emptied (the usual case: one player per session), else
  // the `_src` read of the days for those sessions.
  if (shared.length) {
    for (const table of tables.filter(bySession)) {
      await ch.command({
        query: `INSERT INTO ${table} SELECT * FROM ${table}_src(whole = false, project = {project:UUID},
          days = {days:Array(Date)}, player = {player:String}, identified = {identified:Array(String)})
          WHERE session IN (SELECT cityHash64(arrayJoin({shared:Array(String)})))`,
        query_params: params,
      });
    }
  }
  return outcomes;
}
