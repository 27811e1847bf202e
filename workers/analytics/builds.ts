import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_EVENTS } from "../shared/clickhouse.js";
import type { Window } from "../shared/window.js";
import { num, selectRows } from "./select.js";

export type Build = {
  build_id: string;
  first_seen: string;
  last_seen: string;
  event_count: number;
  session_count: number;
  player_count: number;
};

export const BUILD_LIST_SIZE = 50;

/**
 * A build is a non-empty build_id with performance-bearing events in the window; every field is
 * computed over those events. Newest 50 by first_seen (ties by id), or the one build asked for.
 * Session and player counts use uniq (adaptive sampling, error well under 2%).
 */
export async function buildList(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  buildId?: string,
): Promise<Build[]> {
  const rows = await selectRows<Record<keyof Build, string>>(
    ch,
    `
    SELECT toString(build_id) AS build_id,
      formatDateTime(min(timestamp), '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC') AS first_seen,
      formatDateTime(max(timestamp), '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC') AS last_seen,
      count() AS event_count,
      uniq(session_id) AS session_count,
      uniq(player) AS player_count
    FROM ${CH_EVENTS}
    WHERE project_id = {projectId:UUID}
      AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}
      AND has_perf AND build_id != ''
      ${buildId === undefined ? "" : "AND build_id = {buildId:String}"}
    GROUP BY build_id
    ORDER BY min(timestamp) DESC, build_id ASC
    LIMIT {limit:UInt32}`,
    { projectId, from: w.from, to: w.to, buildId, limit: BUILD_LIST_SIZE },
  );
  return rows.map((r) => ({
    build_id: r.build_id,
    first_seen: r.first_seen,
    last_seen: r.last_seen,
    event_count: num(r.event_count),
    session_count: num(r.session_count),
    player_count: num(r.player_count),
  }));
}
