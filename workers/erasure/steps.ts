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

export const ERASURE_STEPS: ErasureStep[] = [{ table: `${CH_DB}.events`, where: PLAYER_EVENTS }];

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
