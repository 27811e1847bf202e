import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_ACTOR_BUCKETS, CH_DAILY_EVENTS } from "../../shared/clickhouse.js";
import { DAY_MS, type Window } from "../window.js";
import { playersBetween } from "./actors.js";
import { byText, num, type RowOf, selectRows } from "./select.js";

// `metric`, not `kind`: an alias must not shadow a column in WHERE.
const COLUMNS = { metric: "string", key: "string", value: "unknown" } as const;
type Row = RowOf<typeof COLUMNS>;

const metricValue = (rows: Row[], kind: string) => num(rows.find((r) => r.metric === kind)?.value);

/** The rolling counts: how far back each looks from now. */
const ROLLING = { mau: 30 * DAY_MS, dau: DAY_MS } as const;
type Rolling = keyof typeof ROLLING;

/** The start of a rolling count's range: its length before now, or the retention horizon if later. */
const rangeFrom = (r: Rolling, nowMs: number, horizonMs: number) => Math.max(nowMs - ROLLING[r], horizonMs);

export type DashboardDistincts = {
  dau: number;
  mau: number;
  sessions: number;
  dailyActiveUsers: Array<{ date: string; count: number }>;
};

/**
 * Players per day, sessions of the window, and mau and dau (the players of the 30 days and 24 hours
 * ending now), exactly, in one statement over bitmaps of dense numbers (actors.ts): a day's players are
 * the cardinality of its bitmap; the window's sessions that of the OR of its days' session bitmaps (a
 * session across midnight is one number in two days: counted once); mau and dau those of the OR of the
 * range's days, hours, minutes and partial minutes of events (playersBetween). Nothing is stored or
 * stamped: a late batch, an erasure (which rebuilds the player's days) or the first read after ingest
 * all read what the bitmaps hold now, and an event ahead of the clock sits in its own future bucket.
 * The window's days are merged once for both their counts and their sessions (a CTE is computed once per
 * use). Cost: a row per day of the window (two bitmaps each), per whole hour and minute of the rolling ranges'
 * ends, and the events of at most two partial minutes (a partial hour 30 days ago): bounded by days, not
 * by events.
 */
export async function dashboardDistincts(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  nowMs: number,
): Promise<DashboardDistincts> {
  const mau = playersBetween("a", rangeFrom("mau", nowMs, w.horizonMs), nowMs, nowMs);
  const dau = playersBetween("b", rangeFrom("dau", nowMs, w.horizonMs), nowMs, nowMs);
  const rows = await selectRows(
    ch,
    `
    WITH days AS (
      SELECT day AS d, groupBitmapMergeState(players) AS p, groupBitmapMergeState(sessions) AS s
      FROM ${CH_ACTOR_BUCKETS}
      WHERE project_id = {projectId:UUID} AND grain = 'day'
        AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})
      GROUP BY d
    )
    SELECT r.1 AS metric, r.2 AS key, r.3 AS value
    FROM (
      SELECT groupArray(toString(d)) AS ds, groupArray(bitmapCardinality(p)) AS ps, groupBitmapOr(s) AS sessions
      FROM days
    )
    ARRAY JOIN arrayPushBack(arrayMap((k, v) -> ('day', k, toUInt64(v)), ds, ps), ('sessions', '', toUInt64(sessions))) AS r
    UNION ALL
    SELECT 'mau' AS metric, '' AS key, groupBitmapMerge(bm) AS value FROM (${mau.sql})
    UNION ALL
    SELECT 'dau' AS metric, '' AS key, groupBitmapMerge(bm) AS value FROM (${dau.sql})`,
    { projectId, from: w.from, to: w.to, ...mau.params, ...dau.params },
    COLUMNS,
  );
  const perDay = new Map(rows.filter((r) => r.metric === "day").map((r) => [r.key, num(r.value)]));
  return {
    dau: metricValue(rows, "dau"),
    mau: metricValue(rows, "mau"),
    sessions: metricValue(rows, "sessions"),
    dailyActiveUsers: w.dates.map((date) => ({ date, count: perDay.get(date) ?? 0 })),
  };
}

export type DashboardTotals = {
  events: number;
  topEvents: Array<{ event_name: string; count: number }>;
};

/**
 * The window's event count and its 10 most frequent names (ties by name) from telemetry.daily_events, a row per day, name, map,
 * platform and build.
 */
export async function dashboardTotals(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
): Promise<DashboardTotals> {
  const scope = `project_id = {projectId:UUID}
      AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})`;
  const rows = await selectRows(
    ch,
    `
    SELECT 'events' AS metric, '' AS key, sum(events) AS value
    FROM ${CH_DAILY_EVENTS} WHERE ${scope}
    UNION ALL
    (SELECT 'event' AS metric, toString(event_name) AS key, sum(events) AS value
    FROM ${CH_DAILY_EVENTS} WHERE ${scope}
    GROUP BY key
    ORDER BY value DESC, key ASC
    LIMIT 10)`,
    { projectId, from: w.from, to: w.to },
    COLUMNS,
  );
  return {
    events: metricValue(rows, "events"),
    topEvents: rows
      .filter((r) => r.metric === "event")
      .map((r) => ({ event_name: r.key, count: num(r.value) }))
      .sort((a, b) => b.count - a.count || byText(a.event_name, b.event_name)),
  };
}
