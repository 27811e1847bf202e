import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_EVENTS } from "../shared/clickhouse.js";
import { chTime, mondayOf, monthOf, type Window } from "../shared/window.js";
import { distinct, num, selectRows } from "./select.js";

export const INSIGHT_METRICS = ["count", "unique_players"] as const;
export const INSIGHT_GROUPS = [
  "day",
  "week",
  "month",
  "event_name",
  "map_id",
  "platform",
  "build_id",
] as const;
export type InsightMetric = (typeof INSIGHT_METRICS)[number];
export type InsightGroupBy = (typeof INSIGHT_GROUPS)[number];

export type InsightQuery = {
  metric: InsightMetric;
  groupBy: InsightGroupBy;
  limit: number;
  eventName?: string;
};
export type InsightGroup = { key: string; value: number };

// SQL fragments chosen from fixed tables by validated enumerations; user values are only ever bound.
const METRIC_SQL: Record<InsightMetric, string> = { count: "count()", unique_players: distinct("player") };
const KEY_SQL: Record<InsightGroupBy, string> = {
  day: "toString(toDate(timestamp))",
  week: "toString(toMonday(timestamp))",
  month: "toString(toStartOfMonth(timestamp))",
  event_name: "toString(event_name)",
  map_id: "toString(map_id)",
  platform: "toString(platform)",
  build_id: "toString(build_id)",
};

const isTimeGrouping = (g: InsightGroupBy) => g === "day" || g === "week" || g === "month";

/** Start dates of the periods that overlap the window, oldest first; weeks start on Monday. */
export function periodsOf(groupBy: "day" | "week" | "month", w: Window): string[] {
  if (groupBy === "day") {
    return w.dates;
  }
  const startOf = groupBy === "week" ? mondayOf : monthOf;
  return [...new Set(w.dates.map(startOf))];
}

function scope(q: InsightQuery): string {
  return `project_id = {projectId:UUID}
      AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}
      ${q.eventName === undefined ? "" : "AND event_name = {eventName:String}"}`;
}

/**
 * Time groupings: the most recent `limit` periods of the window, zero-filled, ascending, reading only
 * from the oldest of them. Other groupings: the top `limit` keys by value, ties by key.
 */
export async function insightGroups(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: InsightQuery,
): Promise<InsightGroup[]> {
  const params = { projectId, to: w.to, eventName: q.eventName, limit: q.limit };
  if (isTimeGrouping(q.groupBy)) {
    const periods = periodsOf(q.groupBy as "day" | "week" | "month", w).slice(-q.limit);
    const oldest = Math.max(w.fromMs, Date.parse(`${periods[0] ?? w.today}T00:00:00Z`));
    const rows = await selectRows<{ key: string; value: string }>(
      ch,
      `SELECT ${KEY_SQL[q.groupBy]} AS key, ${METRIC_SQL[q.metric]} AS value
      FROM ${CH_EVENTS} WHERE ${scope(q)}
      GROUP BY key`,
      { ...params, from: chTime(oldest) },
    );
    const byKey = new Map(rows.map((r) => [r.key, num(r.value)]));
    return periods.map((key) => ({ key, value: byKey.get(key) ?? 0 }));
  }
  const rows = await selectRows<{ key: string; value: string }>(
    ch,
    `SELECT ${KEY_SQL[q.groupBy]} AS key, ${METRIC_SQL[q.metric]} AS value
    FROM ${CH_EVENTS} WHERE ${scope(q)}
    GROUP BY key
    ORDER BY value DESC, key ASC
    LIMIT {limit:UInt8}`,
    { ...params, from: w.from },
  );
  // Already in order: ClickHouse sorted by value, then key by bytes.
  return rows.map((r) => ({ key: r.key, value: num(r.value) }));
}

/** The metric over the whole window: unique players are counted once, not summed over groups. */
export async function insightTotal(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: InsightQuery,
): Promise<number> {
  const [row] = await selectRows<{ value: string }>(
    ch,
    `SELECT ${METRIC_SQL[q.metric]} AS value FROM ${CH_EVENTS} WHERE ${scope(q)}`,
    { projectId, from: w.from, to: w.to, eventName: q.eventName },
  );
  return num(row?.value);
}
