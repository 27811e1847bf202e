import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_DB } from "../shared/clickhouse.js";

/**
 * One table holding player-derived rows, and how to find one player's rows in it. Every table that
 * keeps anything per player gets a step here (derived aggregates included), so an erasure reaches all
 * of them. `where` is bound with {project:UUID} and {player:String}.
 */
export type ErasureStep = { table: string; where: string };

/**
 * The player of an event is its player_id, or its session_id when player_id is empty. Erasing player
 * X also takes the anonymous events (empty player_id) of every session in which X was identified:
 * the events before sign-in belong to the same person.
 */
const PLAYER_EVENTS = `project_id = {project:UUID} AND (
  player = {player:String}
  OR (player_id = '' AND session_id IN (
    SELECT session_id FROM ${CH_DB}.events WHERE project_id = {project:UUID} AND player_id = {player:String})))`;

/** Sessions in which the player was identified: their anonymous events are the player's too. */
const IDENTIFIED_SESSIONS = `SELECT session_id FROM ${CH_DB}.events
  WHERE project_id = {project:UUID} AND player_id = {player:String}`;

/** Players (as the rollups key them) whose every event the erasure removes. */
const ERASED_PLAYERS = `(id_or_player = {player:String} OR id_or_player IN (${IDENTIFIED_SESSIONS}))`;

/**
 * Sessions left without any event: the player's own, unless another identified player also sent
 * events in them (that player's data stays whole).
 */
const ERASED_SESSIONS = `id IN (
    SELECT session_id FROM ${CH_DB}.events
    WHERE project_id = {project:UUID}
      AND (player_id = {player:String} OR (player_id = '' AND session_id = {player:String})))
  AND id NOT IN (
    SELECT session_id FROM ${CH_DB}.events
    WHERE project_id = {project:UUID} AND player_id NOT IN ('', {player:String})
      AND session_id IN (${IDENTIFIED_SESSIONS} UNION ALL SELECT {player:String}))`;

/**
 * The rollups derived from events (schema/clickhouse/migrations/0002_player_rollups.sql) come first:
 * their rows are found through the player's events, which the last step removes.
 */
export const ERASURE_STEPS: ErasureStep[] = [
  {
    table: `${CH_DB}.player_first_seen`,
    where: `project_id = {project:UUID} AND ${ERASED_PLAYERS.replaceAll("id_or_player", "player")}`,
  },
  {
    table: `${CH_DB}.daily_actors`,
    where: `project_id = {project:UUID} AND (
      (kind = 'player' AND ${ERASED_PLAYERS.replaceAll("id_or_player", "id")})
      OR (kind = 'session' AND ${ERASED_SESSIONS}))`,
  },
  { table: `${CH_DB}.events`, where: PLAYER_EVENTS },
];

type Bound = { project: string; player: string };

export async function countRows(ch: ClickHouseClient, step: ErasureStep, bound: Bound): Promise<number> {
  const rs = await ch.query({
    query: `SELECT count() AS n FROM ${step.table} WHERE ${step.where}`,
    query_params: bound,
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ n: string | number }>();
  return Number(row?.n ?? 0);
}

/**
 * A lightweight DELETE, synchronous: when it returns the rows are gone from every read (a cluster
 * runs it ON CLUSTER / on the Distributed table's shards the same way).
 */
export async function deleteRows(ch: ClickHouseClient, step: ErasureStep, bound: Bound): Promise<void> {
  await ch.command({
    query: `DELETE FROM ${step.table} WHERE ${step.where} SETTINGS lightweight_deletes_sync = 2, mutations_sync = 2`,
    query_params: bound,
  });
}
