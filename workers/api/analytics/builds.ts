import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_BUILD_DAYS } from "../../shared/clickhouse.js";
import type { Window } from "../window.js";
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
 * computed over those events, from telemetry.build_days (a row per build and day). Newest 50 by
 * first_seen (ties by id), or the one build asked for. Session and player counts are exact: the union
 * of the days' bitmaps of dense numbers (0045_build_days_bitmaps.sql). Cost: the project's rows of the
 * window, a few per day (granules of 64), and a bitmap union per build.
 */
export async function buildList(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  buildId?: string,
): Promise<Build[]> {
  const rows = await selectRows(
    ch,
    `
    SELECT toString(build_id) AS build,
      formatDateTime(min(first_seen), '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC') AS first,
      formatDateTime(max(last_seen), '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC') AS last,
      sum(events) AS event_count,
      groupBitmapMerge(sessions) AS session_count,
      groupBitmapMerge(players) AS player_count
    FROM ${CH_BUILD_DAYS}
    WHERE project_id = {projectId:UUID}
      AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})
      ${buildId === undefined ? "" : "AND build_id = {buildId:String}"}
    GROUP BY build_id
    ORDER BY min(first_seen) DESC, build ASC
    LIMIT {limit:UInt32}`,
    { projectId, from: w.from, to: w.to, buildId, limit: BUILD_LIST_SIZE },
    {
      build: "string",
      first: "string",
      last: "string",
      event_count: "unknown",
      session_count: "unknown",
      player_count: "unknown",
    },
  );
  return rows.map((r) => ({
    build_id: r.build,
    first_seen: r.first,
    last_seen: r.last,
    event_count: num(r.event_count),
    session_count: num(r.session_count),
    player_count: num(r.player_count),
  }));
}
