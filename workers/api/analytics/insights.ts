import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_ACTOR_BUCKETS, CH_DAILY_EVENTS, CH_PLAYER_DIMS } from "../../shared/clickhouse.js";
import { chTime, mondayOf, monthOf, type Window } from "../window.js";
import { num, selectRows } from "./select.js";

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
// Each grouping's key over the day-grain rollups (telemetry.daily_events has every dimension; actor_buckets'
// day grain only the day; player_dims has the event name, and each other dimension as `dim_value`).
const DAY_KEY_SQL: Record<InsightGroupBy, string> = {
  day: "toString(day)",
  week: "toString(toMonday(day))",
  month: "toString(toStartOfMonth(day))",
  event_name: "toString(event_name)",
  map_id: "toString(map_id)",
  platform: "toString(platform)",
  build_id: "toString(build_id)",
};

const isTimeGrouping = (g: InsightGroupBy): g is "day" | "week" | "month" =>
  g === "day" || g === "week" || g === "month";

/** A grouping's rows: its key (text, every DAY_KEY_SQL is a toString, `dim_value` a String) and the metric's value. */
const KEY_VALUE = { key: "string", value: "unknown" } as const;

/** Start dates of the periods that overlap the window, oldest first; weeks start on Monday. */
export function periodsOf(groupBy: "day" | "week" | "month", w: Window): string[] {
  if (groupBy === "day") {
    return w.dates;
  }
  const startOf = groupBy === "week" ? mondayOf : monthOf;
  return [...new Set(w.dates.map(startOf))];
}

const DAYS = "day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})";
const EVENT = (q: InsightQuery) => (q.eventName === undefined ? "" : "AND event_name = {eventName:String}");

/** The player_dims dimension of a grouping by a dimension. */
const DIM_OF: Partial<Record<InsightGroupBy, string>> = {
  map_id: "map",
  platform: "platform",
  build_id: "build",
};

/**
 * Where a query's metric and key come from (windows are whole UTC days, so day rows answer exactly):
 * counts from telemetry.daily_events; unique players from bitmaps of dense numbers
 * (0024_actor_bitmaps.sql, 0027_actor_buckets.sql), the cardinality of the OR of the group's bitmaps: of all
 * events by period or in total from actor_buckets' days, of one event name or by a dimension from player_dims (a row per day, event
 * name and dimension value; by a dimension over every event, its rows of all names, event_name '').
 * Cost: counts, a row per day, name, map, platform and build; unique players, a bitmap per day (all
 * events), or per day and value of the grouped dimension (and name, if one is asked for): bounded by days
 * and values, not events.
 */
function source(q: InsightQuery, key: InsightGroupBy | null): { key: string; value: string; from: string } {
  if (q.metric === "count") {
    return {
      key: key === null ? "''" : DAY_KEY_SQL[key],
      value: "sum(events)",
      from: `${CH_DAILY_EVENTS} WHERE project_id = {projectId:UUID} AND ${DAYS} ${EVENT(q)}`,
    };
  }
  if (q.eventName === undefined && (key === null || isTimeGrouping(key))) {
    return {
      key: key === null ? "''" : DAY_KEY_SQL[key],
      value: "groupBitmapMerge(players)",
      from: `${CH_ACTOR_BUCKETS} WHERE project_id = {projectId:UUID} AND grain = 'day' AND ${DAYS}`,
    };
  }
  const dim = key === null ? undefined : DIM_OF[key];
  // By a dimension over every event: its rows of all event names (event_name '', 0043).
  const event = q.eventName === undefined && dim !== undefined ? "AND event_name = ''" : EVENT(q);
  return {
    key: key === null ? "''" : dim === undefined ? DAY_KEY_SQL[key] : "dim_value",
    value: "groupBitmapMerge(players)",
    from: `${CH_PLAYER_DIMS} WHERE project_id = {projectId:UUID} AND ${DAYS} AND dim = '${dim ?? ""}' ${event}`,
  };
}

/**
 * Time groupings: the most recent \`limit\` periods of the window, zero-filled, ascending, reading only
 * from the oldest of them. Other groupings: the top \`limit\` keys by value, ties by key.
 */
export async function insightGroups(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: InsightQuery,
): Promise<InsightGroup[]> {
  const params = { projectId, to: w.to, eventName: q.eventName, limit: q.limit };
  const src = source(q, q.groupBy);
  if (isTimeGrouping(q.groupBy)) {
    const periods = periodsOf(q.groupBy, w).slice(-q.limit);
    const oldest = Math.max(w.fromMs, Date.parse(`${periods[0] ?? w.today}T00:00:00Z`));
    const rows = await selectRows(
      ch,
      `SELECT ${src.key} AS key, ${src.value} AS value
      FROM ${src.from}
      GROUP BY key`,
      { ...params, from: chTime(oldest) },
      KEY_VALUE,
    );
    const byKey = new Map(rows.map((r) => [r.key, num(r.value)]));
    return periods.map((key) => ({ key, value: byKey.get(key) ?? 0 }));
  }
  const rows = await selectRows(
    ch,
    `SELECT ${src.key} AS key, ${src.value} AS value
    FROM ${src.from}
    GROUP BY key
    ORDER BY value DESC, key ASC
    LIMIT {limit:UInt8}`,
    { ...params, from: w.from },
    KEY_VALUE,
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
  const src = source(q, null);
  const [row] = await selectRows(
    ch,
    `SELECT ${src.value} AS value FROM ${src.from}`,
    { projectId, from: w.from, to: w.to, eventName: q.eventName },
    { value: "unknown" },
  );
  return num(row?.value);
}
