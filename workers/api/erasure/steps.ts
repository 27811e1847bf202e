import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_CELL_SAMPLES, CH_EVENTS, CH_FUNNEL_EVENTS, CH_SESSION_DEVICES } from "../../shared/clickhouse.js";

/**
 * One table holding player-derived rows, and how to find one player's rows in it. Every table that
 * keeps anything per player gets a step here (derived aggregates included), so an erasure reaches all
 * of them. `where` is bound with {project:UUID} and {player:String}.
 */
export type ErasureStep = {
  table: string;
  where: string;
  /** The UTC day of a row (a Date expression): the preview counts only rows on or after the horizon. */
  day: string;
  /**
   * The day leads the table's key after the project (or prunes its monthly partitions): the erasure
   * reads and deletes only the rows of the player's days (and today's, for events arriving meanwhile)
   * instead of every part of the project.
   */
  byDay?: true;
};

/**
 * The player of an event is its player_id, or its session_id when player_id is empty. Erasing player
 * X also takes the anonymous events (empty player_id) of every session in which X was identified:
 * the events before sign-in belong to the same person. {identified} is that session list, looked up
 * once before the first delete (`playerSessions`), so no step depends on rows an earlier step removed.
 */
export const PLAYER_EVENTS = `project_id = {project:UUID} AND (
  player = {player:String} OR (player_id = '' AND session_id IN {identified:Array(String)}))`;

/**
 * The same rows in the tables keyed by the player's hash: the anonymous events of an identified session
 * have that session as their player, so the hashes are the player's and their identified sessions'.
 * As a set from a subquery, which the bloom filter on player_hash (0031_erasure_indexes.sql) can use:
 * `IN arrayMap(…)` is rewritten to `has(…)`, which it cannot (EXPLAIN indexes = 1).
 */
const PLAYER_HASHES = `project_id = {project:UUID} AND player_hash IN
  (SELECT arrayJoin(arrayMap(p -> cityHash64(p), arrayPushBack({identified:Array(String)}, {player:String}))))`;

/**
 * Events first, then the tables that copy the player's rows or hold them by hash: their copies in the
 * cell samples (0005_cell_samples.sql), their funnel events (0008_funnel_retention.sql), and the
 * device_info rows of the sessions left without any event (0010_session_devices.sql, keyed by the
 * session's hash). The bitmaps of dense numbers (0024_actor_bitmaps.sql, 0027_actor_buckets.sql) cannot drop one number by a
 * DELETE: they are rebuilt for the player's days without them (rollups.ts, REBUILT_ROLLUPS), and the
 * player's and their sessions' numbers are forgotten by the project's BatchClaims object (run.ts).
 */
export const ERASURE_STEPS: ErasureStep[] = [
  { table: CH_EVENTS, where: PLAYER_EVENTS, day: "toDate(timestamp)", byDay: true },
  { table: CH_CELL_SAMPLES, where: PLAYER_EVENTS, day: "toDate(timestamp)", byDay: true },
  { table: CH_FUNNEL_EVENTS, where: PLAYER_HASHES, day: "toDate(timestamp)", byDay: true },
  {
    table: CH_SESSION_DEVICES,
    day: "day",
    where: "project_id = {project:UUID} AND session IN arrayMap(s -> cityHash64(s), {emptied:Array(String)})",
  },
];

export type Bound = {
  project: string;
  player: string;
  identified: string[];
  emptied: string[];
  /** UTC dates (YYYY-MM-DD) of the events the erasure takes: the days whose rollup rows are rebuilt. */
  days: string[];
  /** Where a `byDay` step looks: `days` and today (UTC), for events of the player arriving meanwhile. */
  within?: string[];
  /**
   * The erasure's id, when the rollup keys of its events were staged before the first delete (keys.ts):
   * the rebuild then replaces only those keys' rows (rollups.ts).
   */
  erasure?: string;
};

/**
 * The sessions the erasure touches, read before anything is deleted, in one read of the candidate
 * sessions' events (found by the bloom filters on `player` and `session_id`, 0031_erasure_indexes.sql;
 * `player = X OR session_id = X` holds for exactly the rows of `player_id = X OR session_id = X`, as
 * `player` is player_id, or session_id where player_id is empty): `identified`, where the player's own player_id appears; `emptied`, the sessions that
 * lose every event (the identified ones and the player's anonymous session, unless another identified
 * player also sent events in them); `days`, the dates of the events the erasure takes (the player's own,
 * and the anonymous ones of their identified sessions and of their anonymous session).
 */
export async function playerSessions(ch: ClickHouseClient, project: string, player: string): Promise<Bound> {
  const rs = await ch.query({
    query: `
      SELECT
        session_id AS session,
        countIf(player_id = {player:String}) > 0 AS identified,
        countIf(player_id NOT IN ('', {player:String})) > 0 AS shared,
        groupUniqArrayIf(toString(toDate(timestamp)), player_id = {player:String}) AS own,
        groupUniqArrayIf(toString(toDate(timestamp)), player_id = '') AS anonymous
      FROM ${CH_EVENTS}
      WHERE project_id = {project:UUID}
        AND session_id IN (
          SELECT session_id FROM ${CH_EVENTS}
          WHERE project_id = {project:UUID} AND (player = {player:String} OR session_id = {player:String}))
      GROUP BY session_id`,
    query_params: { project, player },
    format: "JSONEachRow",
  });
  type Row = {
    session: string;
    identified: boolean | number;
    shared: boolean | number;
    own: string[];
    anonymous: string[];
  };
  const rows = await rs.json<Row>();
  const identified = rows.filter((r) => Boolean(r.identified)).map((r) => r.session);
  const shared = new Set(rows.filter((r) => Boolean(r.shared)).map((r) => r.session));
  const days = new Set<string>();
  for (const r of rows) {
    for (const d of r.own) {
      days.add(d);
    }
    // The anonymous events of an identified session, or of the session that is the player.
    if (r.identified || r.session === player) {
      for (const d of r.anonymous) {
        days.add(d);
      }
    }
  }
  const candidates = new Set([...identified, player]);
  return {
    project,
    player,
    identified,
    emptied: [...candidates].filter((id) => !shared.has(id)),
    days: [...days].sort(),
  };
}

/** The step's WHERE: the player's rows, on the player's days for a `byDay` step during an erasure. */
function whereOf(step: ErasureStep, bound: Bound): string {
  return step.byDay && bound.within ? `${step.where} AND ${step.day} IN {within:Array(Date)}` : step.where;
}

/** The rows of `table` matching `where`, bound with `params`. */
export async function countWhere(
  ch: ClickHouseClient,
  table: string,
  where: string,
  params: Record<string, unknown>,
): Promise<number> {
  const rs = await ch.query({
    query: `SELECT count() AS n FROM ${table} WHERE ${where}`,
    query_params: params,
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ n: string | number }>();
  return Number(row?.n ?? 0);
}

/**
 * A lightweight DELETE, synchronous: when it returns the rows are gone from every read (a cluster
 * runs it ON CLUSTER / on the Distributed table's shards the same way).
 */
export async function deleteWhere(
  ch: ClickHouseClient,
  table: string,
  where: string,
  params: Record<string, unknown>,
): Promise<void> {
  await ch.command({
    query: `DELETE FROM ${table} WHERE ${where} SETTINGS lightweight_deletes_sync = 2, mutations_sync = 2`,
    query_params: params,
  });
}

/**
 * The player's rows in the step's table; `from` (YYYY-MM-DD, the retention horizon's day): only rows
 * dated on or after it, as every read sees them (the preview).
 */
export function countRows(
  ch: ClickHouseClient,
  step: ErasureStep,
  bound: Bound,
  from?: string,
): Promise<number> {
  const since = from === undefined ? "" : ` AND ${step.day} >= {from:Date}`;
  return countWhere(ch, step.table, `${whereOf(step, bound)}${since}`, { ...bound, from });
}

/** Deletes the player's rows of the step's table (deleteWhere). */
export function deleteRows(ch: ClickHouseClient, step: ErasureStep, bound: Bound): Promise<void> {
  return deleteWhere(ch, step.table, whereOf(step, bound), bound);
}
