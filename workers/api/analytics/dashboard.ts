import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_DB } from "../../shared/clickhouse.js";
import { byText, num, selectRows } from "./select.js";
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
      uniqExactIf(player, timestamp >= {dayAgo:DateTime64(6, 'UTC')} AND timestamp <= {now:DateTime64(6, 'UTC')}) AS dau,
      uniqExactIf(player, timestamp >= {monthAgo:DateTime64(6, 'UTC')} AND timestamp <= {now:DateTime64(6, 'UTC')}) AS mau,
      uniqExactIf(session_id, timestamp >= {from:DateTime64(6, 'UTC')}) AS sessions,
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

/** Unique players per day and the 10 most frequent events (ties by name), in one scan of the window. */
export async function dailyActiveUsersAndTopEvents(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
): Promise<DailyAndTop> {
  const rows = await selectRows<{
    byEvent: number;
    day: string;
    event_name: string;
    events: string;
    players: string;
  }>(
    ch,
    `
    SELECT grouping(date) AS byEvent, toString(date) AS day, event_name, count() AS events, uniqExact(player) AS players
    FROM ${CH_DB}.events
    WHERE project_id = {projectId:UUID}
      AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}
    GROUP BY GROUPING SETS ((toDate(timestamp) AS date), (event_name))`,
    { projectId, from: w.from, to: w.to },
  );
  const perDay = new Map<string, number>();
  const perEvent: Array<{ event_name: string; count: number }> = [];
  for (const r of rows) {
    if (num(r.byEvent) === 1) {
      perEvent.push({ event_name: r.event_name, count: num(r.events) });
    } else {
      perDay.set(r.day, num(r.players));
    }
  }
  perEvent.sort((a, b) => b.count - a.count || byText(a.event_name, b.event_name));
  return {
    dailyActiveUsers: w.dates.map((date) => ({ date, count: perDay.get(date) ?? 0 })),
    topEvents: perEvent.slice(0, 10),
  };
}
