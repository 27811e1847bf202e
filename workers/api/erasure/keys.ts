import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_ERASURE_KEYS, CH_EVENTS } from "../../shared/clickhouse.js";
import { type Bound, deleteWhere, PLAYER_EVENTS } from "./steps.js";

/** One erasure's rows of erasure_keys, bound with {project:UUID} and {erasure:String}. */
const OF_ERASURE = "project_id = {project:UUID} AND erasure_id = {erasure:String}";
/**
 * The staged keys of one erasure, as a FROM clause: what the rebuild's statements read them from
 * (rollups.ts).
 */
export const STAGED_KEYS = `${CH_ERASURE_KEYS} WHERE ${OF_ERASURE}`;

/**
 * Stages the rollup keys and the dense numbers of the events the erasure takes (0042_erasure_keys.sql),
 * read from those events before the first delete. Cost: the player's events of their days, found by the
 * bloom filters on `player` and `session_id` as the sessions' lookup is (0031_erasure_indexes.sql); one
 * row per distinct combination is written. Staging twice (a retry before the erasure recorded its work)
 * writes the same rows again, which every reader takes as a set.
 */
export async function stageKeys(
  ch: ClickHouseClient,
  erasure: string,
  bound: Pick<Bound, "project" | "player" | "identified" | "days">,
): Promise<void> {
  if (!bound.days.length) {
    return;
  }
  await ch.command({
    query: `INSERT INTO ${CH_ERASURE_KEYS} (project_id, erasure_id, day, event_name, map_id, platform,
        build_id, batch_id, cell_x, cell_y, player_idx, session_idx)
      SELECT project_id, {erasure:String}, toDate(timestamp), event_name, map_id, platform, build_id,
        batch_id, floor(position_x / 25), floor(position_y / 25), player_idx, session_idx
      FROM ${CH_EVENTS}
      WHERE ${PLAYER_EVENTS} AND toDate(timestamp) IN {days:Array(Date)}
      GROUP BY ALL`,
    query_params: { ...bound, erasure },
  });
}

/** Deletes the erasure's staged keys, once its rebuild is done. */
export function dropKeys(ch: ClickHouseClient, project: string, erasure: string): Promise<void> {
  return deleteWhere(ch, CH_ERASURE_KEYS, OF_ERASURE, { project, erasure });
}
