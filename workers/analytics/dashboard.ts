import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_DAILY_ACTORS, CH_DAILY_EVENTS, CH_EVENTS } from "../shared/clickhouse.js";
import { chTime, DAY_MS, dayStartMs, type Window } from "../shared/window.js";
import { byText, distinct, num, selectRows } from "./select.js";

// `metric`, not `kind`: an alias would shadow daily_actors.kind in WHERE.
type Row = { metric: string; key: string; value: string };

const metricValue = (rows: Row[], kind: string) => num(rows.find((r) => r.metric === kind)?.value);

export type DashboardDistincts = {
  mau: number;
  sessions: number;
  dailyActiveUsers: Array<{ date: string; count: number }>;
};

/**
 * The distinct counts over whole days come from telemetry.daily_actors (one row per project, day and
 * player or session), a few rows per player and day instead of every event: players per day and
 * sessions of the window. mau is the last 30 days ending now: the whole days from today − 29 to
 * yesterday from daily_actors, and the two partial days at its ends (since now − 30 days, and today
 * up to now) from the events themselves.
 */
export async function dashboardDistincts(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  nowMs: number,
): Promise<DashboardDistincts> {
  const todayStart = dayStartMs(nowMs);
  const wholeFrom = todayStart - 29 * DAY_MS;
  const rows = await selectRows<Row>(
    ch,
    `
    SELECT 'day' AS metric, toString(day) AS key, ${distinct("id")} AS value
    FROM ${CH_DAILY_ACTORS}
    WHERE project_id = {projectId:UUID} AND kind = 'player'
      AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})
    GROUP BY day
    UNION ALL
    SELECT 'sessions' AS metric, '' AS key, ${distinct("id")} AS value
    FROM ${CH_DAILY_ACTORS}
    WHERE project_id = {projectId:UUID} AND kind = 'session'
      AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})
    UNION ALL
    SELECT 'mau' AS metric, '' AS key, ${distinct("id")} AS value
    FROM (
      SELECT id
      FROM ${CH_DAILY_ACTORS}
      WHERE project_id = {projectId:UUID} AND kind = 'player'
        AND day >= toDate({wholeFrom:DateTime64(6, 'UTC')}) AND day < toDate({todayStart:DateTime64(6, 'UTC')})
      UNION ALL
      SELECT player AS id
      FROM ${CH_EVENTS}
      WHERE project_id = {projectId:UUID}
        AND ((timestamp >= {monthAgo:DateTime64(6, 'UTC')} AND timestamp < {wholeFrom:DateTime64(6, 'UTC')})
          OR (timestamp >= {todayStart:DateTime64(6, 'UTC')} AND timestamp <= {now:DateTime64(6, 'UTC')}))
    )`,
    {
      projectId,
      from: w.from,
      to: w.to,
      now: chTime(nowMs),
      monthAgo: chTime(nowMs - 30 * DAY_MS),
      wholeFrom: chTime(wholeFrom),
      todayStart: chTime(todayStart),
    },
  );
  const perDay = new Map(rows.filter((r) => r.metric === "day").map((r) => [r.key, num(r.value)]));
  return {
    mau: metricValue(rows, "mau"),
    sessions: metricValue(rows, "sessions"),
    dailyActiveUsers: w.dates.map((date) => ({ date, count: perDay.get(date) ?? 0 })),
  };
}

export type DashboardTotals = {
  dau: number;
  events: number;
  topEvents: Array<{ event_name: string; count: number }>;
};

/**
 * dau (last 24 h up to now) from the events: a partial day, one day of events at most. The window's
 * event count and its 10 most frequent names (ties by name) from telemetry.daily_events, a row per
 * day, name, map, platform and build.
 */
export async function dashboardTotals(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  nowMs: number,
): Promise<DashboardTotals> {
  const scope = `project_id = {projectId:UUID}
      AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})`;
  const rows = await selectRows<Row>(
    ch,
    `
    SELECT 'dau' AS metric, '' AS key, ${distinct("player")} AS value
    FROM ${CH_EVENTS}
    WHERE project_id = {projectId:UUID}
      AND timestamp >= {dayAgo:DateTime64(6, 'UTC')} AND timestamp <= {now:DateTime64(6, 'UTC')}
    UNION ALL
    SELECT 'events' AS metric, '' AS key, sum(events) AS value
    FROM ${CH_DAILY_EVENTS} WHERE ${scope}
    UNION ALL
    (SELECT 'event' AS metric, toString(event_name) AS key, sum(events) AS value
    FROM ${CH_DAILY_EVENTS} WHERE ${scope}
    GROUP BY key
    ORDER BY value DESC, key ASC
    LIMIT 10)`,
    { projectId, from: w.from, to: w.to, now: chTime(nowMs), dayAgo: chTime(nowMs - DAY_MS) },
  );
  return {
    dau: metricValue(rows, "dau"),
    events: metricValue(rows, "events"),
    topEvents: rows
      .filter((r) => r.metric === "event")
      .map((r) => ({ event_name: r.key, count: num(r.value) }))
      .sort((a, b) => b.count - a.count || byText(a.event_name, b.event_name)),
  };
}
