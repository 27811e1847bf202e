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
  bound: Pick<Bound, "project" | "player" | "identified" | "days">,
  tables: readonly string[] = REBUILT_ROLLUPS,
): Promise<RebuildOutcome[]> {
  if (!bound.days.length) {
    return tables.map((table) => ({ table, rowsRemoved: 0 }));
  }
  const params = {
    project: bound.project,
    days: bound.days,
    player: bound.player,
    identified: bound.identified,
  };
  const outcomes: RebuildOutcome[] = [];
  // Every table's rows of the days go first, then the rows come back: the replayed tables together from
  // one read of the events (the same filter as the `_src` views': the project, the days, not the player
  // nor their identified sessions' anonymous events), the others one `_src` read each.
  for (const table of tables) {
    const rs = await ch.query({
      query: `SELECT count() AS n FROM ${table} WHERE project_id = {project:UUID} AND day IN {days:Array(Date)}`,
      query_params: params,
      format: "JSONEachRow",
    });
    const [row] = await rs.json<{ n: string | number }>();
    await ch.command({
      query: `DELETE FROM ${table} WHERE project_id = {project:UUID} AND day IN {days:Array(Date)}
        SETTINGS lightweight_deletes_sync = 2, mutations_sync = 2`,
      query_params: params,
    });
    outcomes.push({ table, rowsRemoved: Number(row?.n ?? 0) });
  }
  const replayed = tables.filter((t) => REPLAYED_ROLLUPS.includes(t));
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
  for (const table of tables.filter((t) => !REPLAYED_ROLLUPS.includes(t))) {
    await ch.command({
      query: `INSERT INTO ${table} SELECT * FROM ${table}_src(whole = false, project = {project:UUID},
        days = {days:Array(Date)}, player = {player:String}, identified = {identified:Array(String)})`,
      query_params: params,
    });
  }
  return outcomes;
}
