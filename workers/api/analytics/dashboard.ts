import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_DB } from "../../shared/clickhouse.js";
import { byText, distinct, distinctIf, num, selectRows } from "./select.js";
import { chTime, type Window } from "./window.js";

const DAY_MS = 86_400_000;

export type DashboardKpis = { dau: number; mau: number; sessions: number; events: number };

/**
 * dau and mau end now (last 24 h, last 30 days); sessions and events cover the window. One scan over
 * the union of those ranges, split by conditional aggregates.
 */
export async function dashboardKpis(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  nowMs: number,
): Promise<DashboardKpis> {
  const monthAgo = nowMs - 30 * DAY_MS;
  const [row] = await selectRows<Record<keyof DashboardKpis, string>>(
    ch,
    `
    SELECT
      ${distinctIf("player", "timestamp >= {dayAgo:DateTime64(6, 'UTC')} AND timestamp <= {now:DateTime64(6, 'UTC')}")} AS dau,
      ${distinctIf("player", "timestamp >= {monthAgo:DateTime64(6, 'UTC')} AND timestamp <= {now:DateTime64(6, 'UTC')}")} AS mau,
      ${distinctIf("session_id", "timestamp >= {from:DateTime64(6, 'UTC')}")} AS sessions,
      countIf(timestamp >= {from:DateTime64(6, 'UTC')}) AS events
    FROM ${CH_DB}.events
    WHERE project_id = {projectId:UUID}
      AND timestamp >= {scanFrom:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}`,
    {
      projectId,
      from: w.from,
      to: w.to,
      now: chTime(nowMs),
      dayAgo: chTime(nowMs - DAY_MS),
      monthAgo: chTime(monthAgo),
      scanFrom: chTime(Math.min(w.fromMs, monthAgo)),
    },
  );
  return { dau: num(row?.dau), mau: num(row?.mau), sessions: num(row?.sessions), events: num(row?.events) };
}

export type DailyAndTop = {
  dailyActiveUsers: Array<{ date: string; count: number }>;
  topEvents: Array<{ event_name: string; count: number }>;
};

/**
 * Unique players per day and the 10 most frequent events (ties by name) of the window: two
 * aggregations of one statement, which ClickHouse runs side by side.
 */
export async function dailyActiveUsersAndTopEvents(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
): Promise<DailyAndTop> {
  const scope = `project_id = {projectId:UUID}
      AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}`;
  const rows = await selectRows<{ kind: "day" | "event"; key: string; value: string }>(
    ch,
    `
    SELECT 'day' AS kind, toString(toDate(timestamp)) AS key, ${distinct("player")} AS value
    FROM ${CH_DB}.events WHERE ${scope}
    GROUP BY key
    UNION ALL
    (SELECT 'event' AS kind, toString(event_name) AS key, count() AS value
    FROM ${CH_DB}.events WHERE ${scope}
    GROUP BY key
    ORDER BY value DESC, key ASC
    LIMIT 10)`,
    { projectId, from: w.from, to: w.to },
  );
  const perDay = new Map(rows.filter((r) => r.kind === "day").map((r) => [r.key, num(r.value)]));
  return {
    dailyActiveUsers: w.dates.map((date) => ({ date, count: perDay.get(date) ?? 0 })),
    topEvents: rows
      .filter((r) => r.kind === "event")
      .map((r) => ({ event_name: r.key, count: num(r.value) }))
      .sort((a, b) => b.count - a.count || byText(a.event_name, b.event_name)),
  };
}
