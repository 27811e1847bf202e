import type { ClickHouseClient } from "@clickhouse/client-web";
import {
  CH_ACTOR_BUCKETS,
  CH_ALERT_CELLS,
  CH_BATCH_TOTALS,
  CH_BUILD_DAYS,
  CH_CELL_SAMPLES,
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
import { COMPARE_METRICS, TAIL_LEVEL } from "../analytics/compare.js";
import { STAGED_KEYS } from "./keys.js";
import { type Bound, countWhere, deleteWhere } from "./steps.js";

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
 * 0034_compare_bitmaps.sql, build_days' since 0045_build_days_bitmaps.sql.
 */
export const BITMAP_ROLLUPS = [CH_ACTOR_BUCKETS, CH_PLAYER_DIMS, CH_COMPARE_ROLLUP, CH_BUILD_DAYS];

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
  bound: Pick<Bound, "project" | "player" | "identified" | "days"> &
    Partial<Pick<Bound, "emptied" | "erasure">>,
  tables: readonly string[] = REBUILT_ROLLUPS,
): Promise<RebuildOutcome[]> {
  if (!bound.days.length) {
    return tables.map((table) => ({ table, rowsRemoved: 0 }));
  }
  if (bound.erasure !== undefined && bound.emptied !== undefined) {
    return rebuildKeys(ch, { ...bound, erasure: bound.erasure, emptied: bound.emptied }, tables);
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
    outcomes.push({ table, rowsRemoved: await countWhere(ch, table, where, params) });
    await deleteWhere(ch, table, where, params);
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

/** What the erasure's events exclude: the player's own and the anonymous ones of their identified sessions. */
const NOT_ERASED =
  "NOT (player = {player:String} OR (player_id = '' AND session_id IN {identified:Array(String)}))";

/** The staged keys' columns (0042_erasure_keys.sql) as a set a tuple can be tested against. */
const staged = (columns: string, where = "") =>
  `(SELECT ${columns} FROM ${STAGED_KEYS}${where ? ` AND ${where}` : ""})`;

/** A cell of 25 as heatmap_cells and alert_cells key it: its square's indexes, of a row and of an event. */
const CELLS = staged(
  "map_id, day, assumeNotNull(cell_x), assumeNotNull(cell_y)",
  "isNotNull(cell_x) AND isNotNull(cell_y)",
);
// The events' condition first names the maps alone: a cheap column that leaves a few percent of the days'
// events for the tuple's test (263 against 433 ms over 13.5M events).
const CELL_KEYS = {
  rows: `(map_id, day, floor(x / 25), floor(y / 25)) IN ${CELLS}`,
  events: `map_id IN ${staged("map_id", "isNotNull(cell_x)")}
    AND (map_id, toDate(timestamp), floor(position_x / 25), floor(position_y / 25)) IN ${CELLS}`,
};

/**
 * alert_cells' events, read from cell_samples instead of the events (0035_cell_samples_frame_causes.sql):
 * it holds exactly the events alert_cells' view aggregates (positioned, performance-bearing: the same
 * WHERE), with every column that view reads, the display's refresh rate kept as `display_hz` (NULL where
 * the view would take 60 Hz, so a `metrics` map of 0 Hz gives the view's 60). Its key starts with the map
 * and the base cell of 50 (bx, by), so the staged cells of 25 name the granules to read: their base cells'
 * rows of the days, not every event of the player's days as the events' (day, event name) key gives.
 * The erasure deleted the player's rows from cell_samples before the rebuild (steps.ts).
 */
const ALERT_CELL_SAMPLES = `(SELECT project_id, map_id, timestamp, platform, resolution, build_config, gpu, storage,
    position_x, position_y, fps, frame_time_ms, memory_used_bytes, gpu_time_ms,
    map('display.hz', ifNull(display_hz, 0)) AS metrics
  FROM ${CH_CELL_SAMPLES}
  WHERE project_id = {project:UUID}
    AND (map_id, bx, by) IN ${staged(
      "map_id, toInt32(floor(assumeNotNull(cell_x) / 2)), toInt32(floor(assumeNotNull(cell_y) / 2))",
      "isNotNull(cell_x) AND isNotNull(cell_y)",
    )}
    AND toDate(timestamp) IN {days:Array(Date)}
    AND (map_id, toDate(timestamp), floor(position_x / 25), floor(position_y / 25)) IN ${CELLS}
    AND ${NOT_ERASED})`;

/**
 * The rollups rebuilt key by key: `rows`, a table's rows of the staged keys; `events`, the events that
 * feed exactly those rows (a superset of the keys the erased events fed is fine: the rows of a key are
 * deleted and derived again whole); `kept`, which of the rows derived from those events are kept;
 * `source`, where those events are read from when not from the events table (a FROM clause with the
 * events' columns the view reads). compare_rollup's `build` level is each build and day's merge of its
 * `map_platform` rows, so it is merged again from them (mergeBuildLevel) rather than derived from every
 * event of the build's day.
 */
const KEYED: Record<string, { rows: string; events: string; kept?: string; source?: string }> = {
  [CH_HEATMAP_CELLS]: CELL_KEYS,
  [CH_ALERT_CELLS]: { ...CELL_KEYS, source: ALERT_CELL_SAMPLES },
  [CH_DAILY_EVENTS]: {
    rows: `(day, event_name, map_id, platform, build_id) IN ${staged("day, event_name, map_id, platform, build_id")}`,
    events: `(toDate(timestamp), event_name, map_id, platform, build_id) IN ${staged("day, event_name, map_id, platform, build_id")}`,
  },
  [CH_BUILD_DAYS]: {
    rows: `(day, build_id) IN ${staged("day, build_id")}`,
    events: `(toDate(timestamp), build_id) IN ${staged("day, build_id")}`,
  },
  [CH_COMPARE_ROLLUP]: {
    rows: `(level = 'map_platform' AND (build_id, day, map_id, platform) IN ${staged("build_id, day, map_id, platform")}
      OR level = 'build' AND (build_id, day) IN ${staged("build_id, day")})`,
    events: `(build_id, toDate(timestamp), map_id, platform) IN ${staged("build_id, day, map_id, platform")}`,
    kept: "level = 'map_platform'",
  },
  [CH_BATCH_TOTALS]: {
    rows: `(day, batch_id) IN ${staged("day, batch_id")}`,
    events: `(toDate(timestamp), batch_id) IN ${staged("day, batch_id")}`,
  },
};

/**
 * The bitmaps of dense numbers, changed in place: the erased events' numbers are removed from every row
 * of the player's days (`bitmapAndnot`), which a DELETE of the rows cannot do and which needs no event.
 */
const PLAYERS = staged("groupBitmapState(player_idx)", "player_idx != 0");
const SESSIONS = staged("groupBitmapState(session_idx)", "session_idx != 0");
/**
 * `update`: the mutation's assignments. `emptied`: the rows holding nothing but erased numbers, deleted
 * first: a fresh build has no row for a bucket or dimension value only the erased events fed, and a read
 * must not list one with no player.
 */
const IN_PLACE: Record<string, { update: string; emptied: string }> = {
  [CH_ACTOR_BUCKETS]: {
    update: `players = bitmapAndnot(players, ${PLAYERS}), sessions = bitmapAndnot(sessions, ${SESSIONS})`,
    emptied: `bitmapCardinality(players) > 0 AND bitmapAndnotCardinality(players, ${PLAYERS}) = 0
      AND bitmapAndnotCardinality(sessions, ${SESSIONS}) = 0`,
  },
  [CH_PLAYER_DIMS]: {
    update: `players = bitmapAndnot(players, ${PLAYERS})`,
    emptied: `bitmapCardinality(players) > 0 AND bitmapAndnotCardinality(players, ${PLAYERS}) = 0`,
  },
};

/**
 * The session-keyed rollups' rows an erased event can have fed, by the columns of their key before the
 * session: the touched sessions' rows go only there (a shared session's other rows hold none of the
 * erased events), and the key prunes the read to those ranges instead of every row of the days.
 */
const SESSION_KEYS: Record<string, string> = {
  [CH_SESSION_VALUES]: `(build_id, day, map_id) IN ${staged("build_id, day, map_id")}`,
  [CH_SESSION_CELLS]: `(map_id, build_id, day) IN ${staged("map_id, build_id, day")}`,
};

/**
 * The rebuild of an erasure whose keys were staged (keys.ts): each rollup loses only the rows of the keys
 * the erased events fed, and gets them back from the events of those keys alone, instead of every event
 * of the player's days being aggregated again for every rollup.
 * - The bitmaps lose the erased numbers in place (IN_PLACE). A session another player also sent events in
 *   keeps its number where its remaining events are: those events are aggregated into actor_buckets again,
 *   whose union restores it.
 * - The keyed rollups (KEYED) lose their rows of the staged keys; each gets them back from those keys'
 *   events, aggregated by its own view (aggregateInto).
 * - The session-keyed rollups (SESSION_KEYS): the touched sessions' rows of the staged keys go, and those
 *   of them that keep another player's events are derived again from those events.
 * Cost: per keyed rollup, one read of the player's days' events for its key columns, then the matching
 * events aggregated; the bitmaps' mutation rewrites their parts of those months (docs/benchmarks.md,
 * `bench:erasure`). Running it again (a retry) replaces the same rows and removes nothing twice.
 */
async function rebuildKeys(
  ch: ClickHouseClient,
  bound: Pick<Bound, "project" | "player" | "identified" | "days" | "emptied"> & { erasure: string },
  tables: readonly string[],
): Promise<RebuildOutcome[]> {
  const touched = [...new Set([...bound.identified, bound.player])];
  const shared = touched.filter((s) => !bound.emptied.includes(s));
  const params = { ...bound, touched, shared };
  const inDays = "project_id = {project:UUID} AND day IN {days:Array(Date)}";
  const count = (table: string, where: string) => countWhere(ch, table, where, params);
  const remove = (table: string, where: string) => deleteWhere(ch, table, where, params);
  const outcomes: RebuildOutcome[] = [];
  for (const table of tables) {
    const keyed = KEYED[table];
    const inPlace = IN_PLACE[table];
    if (inPlace !== undefined) {
      // Cost: the project's rows of the days (a few thousand bitmaps), rewritten by a mutation.
      outcomes.push({ table, rowsRemoved: await count(table, inDays) });
      await remove(table, `${inDays} AND ${inPlace.emptied}`);
      await ch.command({
        query: `ALTER TABLE ${table} UPDATE ${inPlace.update} WHERE ${inDays}
          SETTINGS mutations_sync = 2, allow_nondeterministic_mutations = 1`,
        query_params: params,
      });
    } else if (keyed !== undefined) {
      const where = `${inDays} AND ${keyed.rows}`;
      outcomes.push({ table, rowsRemoved: await count(table, where) });
      await remove(table, where);
    } else if (SESSION_KEYS[table] !== undefined) {
      const where = `${inDays} AND ${SESSION_KEYS[table]} AND session IN (SELECT cityHash64(arrayJoin({touched:Array(String)})))`;
      outcomes.push({ table, rowsRemoved: await count(table, where) });
      await remove(table, where);
    } else {
      throw new Error(`${table}: no keyed rebuild`);
    }
  }
  // Each keyed rollup gets its staged keys' rows back from those keys' events, and actor_buckets the
  // numbers of the shared sessions' remaining events.
  const routes = tables
    .filter((t) => KEYED[t] !== undefined)
    .map((t) => ({ target: t, when: KEYED[t]?.events as string, source: KEYED[t]?.source }));
  if (shared.length && tables.includes(CH_ACTOR_BUCKETS)) {
    routes.push({
      target: CH_ACTOR_BUCKETS,
      when: "session_id IN {shared:Array(String)}",
      source: undefined,
    });
  }
  for (const r of routes) {
    await aggregateInto(
      ch,
      r.target,
      r.source ??
        `(SELECT * FROM ${CH_EVENTS} WHERE project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
          AND ${NOT_ERASED} AND ${r.when})`,
      params,
      KEYED[r.target]?.kept,
    );
  }
  if (tables.includes(CH_COMPARE_ROLLUP)) {
    await mergeBuildLevel(ch, params);
  }
  // The touched sessions that keep another player's events: their rows of the staged keys again, from
  // those events alone (their other rows were not deleted).
  if (shared.length) {
    for (const table of tables.filter((t) => SESSION_ROLLUPS.includes(t))) {
      await ch.command({
        query: `INSERT INTO ${table} SELECT * FROM ${table}_src(whole = false, project = {project:UUID},
          days = {days:Array(Date)}, player = {player:String}, identified = {identified:Array(String)})
          WHERE ${SESSION_KEYS[table]}
            AND session IN (SELECT cityHash64(arrayJoin({shared:Array(String)})))`,
        query_params: params,
      });
    }
  }
  return outcomes;
}

/**
 * compare_rollup's `build` rows of the staged builds and days (deleted with the keyed rows), merged again
 * from their `map_platform` rows: every event feeds one row of each level alike (0028_compare_rollup.sql),
 * so a build's day is the merge of its maps and platforms. Cost: the build's day's rows of the
 * map_platform level (maps × platforms).
 */
async function mergeBuildLevel(ch: ClickHouseClient, params: Record<string, unknown>): Promise<void> {
  const metrics = COMPARE_METRICS.map(
    (_, i) => `sum(n${i}), quantilesExactWeightedMergeState(0.5, ${TAIL_LEVEL})(q${i})`,
  ).join(", ");
  await ch.command({
    query: `INSERT INTO ${CH_COMPARE_ROLLUP}
      SELECT project_id, build_id, 'build', day, '', '', sum(events), min(first_seen), max(last_seen),
        groupBitmapMergeState(sessions), groupBitmapMergeState(players), ${metrics}
      FROM ${CH_COMPARE_ROLLUP}
      WHERE project_id = {project:UUID} AND day IN {days:Array(Date)} AND level = 'map_platform'
        AND (build_id, day) IN ${staged("build_id, day")}
      GROUP BY project_id, build_id, day`,
    query_params: params,
  });
}

/**
 * Aggregates the events of `source` (a FROM clause: the events table filtered, or KEYED's own source) into
 * `table` with the table's own view: the SELECT of its replay view (0032_rollup_replay.sql; the ingest
 * view's text, as rollup-replay.test.ts holds), reading those events from `source` instead of
 * `events_replay`. Cost: from the events table, the days' events read for the columns of the filter, then
 * only the matching events for the columns the view reads, aggregated by that one view.
 * Inserting the matching events into `events_replay` instead makes every replay view filter a block of
 * every column of them. At 13.3M events, a player's builds of 29 days (about half the events) took 9 to
 * 12.5 s that way; like keys take 0.6 s this way (docs/benchmarks.md).
 */
async function aggregateInto(
  ch: ClickHouseClient,
  table: string,
  source: string,
  params: Record<string, unknown>,
  kept?: string,
): Promise<void> {
  const view = `${table.slice(`${CH_DB}.`.length)}_replay_mv`;
  const read = async <T>(query: string) => {
    const rs = await ch.query({ query, query_params: { db: CH_DB, view }, format: "JSONEachRow" });
    return rs.json<T>();
  };
  const [row] = await read<{ select: string }>(
    "SELECT as_select AS select FROM system.tables WHERE database = {db:String} AND name = {view:String}",
  );
  // The view's output columns in order: they name the table's columns it fills.
  const columns = await read<{ name: string }>(
    "SELECT name FROM system.columns WHERE database = {db:String} AND table = {view:String} ORDER BY position",
  );
  const replayed = `(SELECT * FROM ${CH_EVENTS_REPLAY} WHERE has(replay_targets, '${view.slice(0, -"_replay_mv".length)}'))`;
  if (!row?.select.includes(replayed)) {
    throw new Error(`${CH_DB}.${view} does not read ${replayed}`);
  }
  const select = row.select.replaceAll(replayed, source);
  await ch.command({
    query: `INSERT INTO ${table} (${columns.map((c) => c.name).join(", ")})
      ${kept === undefined ? select : `SELECT * FROM (${select}) WHERE ${kept}`}`,
    query_params: params,
  });
}
