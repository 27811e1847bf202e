import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_DAILY_ACTORS, CH_DAILY_EVENTS, CH_EVENTS, CH_HOURLY_PLAYERS } from "../../shared/clickhouse.js";
import { chTime, DAY_MS, type Window } from "../../shared/window.js";
import { byText, distinct, num, type RowOf, selectRows } from "./select.js";

// `metric`, not `kind`: an alias would shadow daily_actors.kind in WHERE.
const COLUMNS = { metric: "string", key: "string", value: "unknown" } as const;
type Row = RowOf<typeof COLUMNS>;

const metricValue = (rows: Row[], kind: string) => num(rows.find((r) => r.metric === kind)?.value);

const HOUR_MS = 3_600_000;

/**
 * The ids of the players with an event in [fromMs, toMs] (both ends included), from the cheapest exact
 * sources: whole UTC days from daily_actors, whole hours from hourly_players (which keeps 32 days), and
 * the partial hours at both ends from the events. Parameters are named after `p` so that two ranges can
 * share a statement. A rolling 24 hours or 30 days thus reads at most two hours of events, not two days.
 */
function playersBetween(p: string, fromMs: number, toMs: number) {
  const t = (name: string) => `{${p}${name}:DateTime64(6, 'UTC')}`;
  const firstHour = Math.ceil(fromMs / HOUR_MS) * HOUR_MS;
  const lastHour = Math.floor(toMs / HOUR_MS) * HOUR_MS;
  // [r0, r1) and [r2, r3] from the events; [h0, h1) and [h2, h3) from the hours; [d0, d1) from the days.
  let b = { r0: fromMs, r1: fromMs, r2: fromMs, r3: toMs, h0: 0, h1: 0, h2: 0, h3: 0, d0: 0, d1: 0 };
  if (firstHour < lastHour) {
    const firstDay = Math.ceil(firstHour / DAY_MS) * DAY_MS;
    const lastDay = Math.floor(lastHour / DAY_MS) * DAY_MS;
    b = { ...b, r1: firstHour, r2: lastHour, h0: firstHour, h1: lastHour };
    if (firstDay < lastDay) {
      b = { ...b, h1: firstDay, h2: lastDay, h3: lastHour, d0: firstDay, d1: lastDay };
    }
  }
  const params = Object.fromEntries(Object.entries(b).map(([k, v]) => [`${p}${k}`, chTime(v)]));
  const sql = `
      SELECT id FROM ${CH_DAILY_ACTORS}
      WHERE project_id = {projectId:UUID} AND kind = 'player' AND day >= toDate(${t("d0")}) AND day < toDate(${t("d1")})
      UNION ALL
      SELECT id FROM ${CH_HOURLY_PLAYERS}
      WHERE project_id = {projectId:UUID}
        AND ((hour >= ${t("h0")} AND hour < ${t("h1")}) OR (hour >= ${t("h2")} AND hour < ${t("h3")}))
      UNION ALL
      SELECT player AS id FROM ${CH_EVENTS}
      WHERE project_id = {projectId:UUID}
        AND ((timestamp >= ${t("r0")} AND timestamp < ${t("r1")}) OR (timestamp >= ${t("r2")} AND timestamp <= ${t("r3")}))`;
  return { sql, params };
}

export type DashboardDistincts = {
  mau: number;
  sessions: number;
  dailyActiveUsers: Array<{ date: string; count: number }>;
};

/**
 * The distinct counts over whole days come from telemetry.daily_actors (one row per project, day and
 * player or session), a few rows per player and day instead of every event: players per day and
 * sessions of the window. mau is the last 30 days ending now (playersBetween).
 */
export async function dashboardDistincts(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  nowMs: number,
): Promise<DashboardDistincts> {
  const month = playersBetween("m", nowMs - 30 * DAY_MS, nowMs);
  const rows = await selectRows(
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
    FROM (${month.sql})`,
    { projectId, from: w.from, to: w.to, ...month.params },
    COLUMNS,
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
 * dau: the players of the last 24 hours up to now (playersBetween). The window's event count and its
 * 10 most frequent names (ties by name) from telemetry.daily_events, a row per day, name, map,
 * platform and build.
 */
export async function dashboardTotals(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  nowMs: number,
): Promise<DashboardTotals> {
  const day = playersBetween("d", nowMs - DAY_MS, nowMs);
  const scope = `project_id = {projectId:UUID}
      AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})`;
  const rows = await selectRows(
    ch,
    `
    SELECT 'dau' AS metric, '' AS key, ${distinct("id")} AS value
    FROM (${day.sql})
    UNION ALL
    SELECT 'events' AS metric, '' AS key, sum(events) AS value
    FROM ${CH_DAILY_EVENTS} WHERE ${scope}
    UNION ALL
    (SELECT 'event' AS metric, toString(event_name) AS key, sum(events) AS value
    FROM ${CH_DAILY_EVENTS} WHERE ${scope}
    GROUP BY key
    ORDER BY value DESC, key ASC
    LIMIT 10)`,
    { projectId, from: w.from, to: w.to, ...day.params },
    COLUMNS,
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
