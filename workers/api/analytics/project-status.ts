import type { ClickHouseClient } from "@clickhouse/client-web";
import { z } from "@hono/zod-openapi";
import { CH_EVENTS } from "../../shared/clickhouse.js";
import { chTime, DAY_MS } from "../window.js";
import { type CachedProject, cached, cacheKey, type Defer } from "./cache.js";
import { num, selectRows } from "./select.js";

const EventKpisSchema = z.object({
  events24h: z.number(),
  players24h: z.number(),
  totalEvents: z.number(),
  lastEventAt: z.string().nullable(),
  // Unix ms when the query ran: the 24-hour figures end here, and a cached answer says how old it is.
  fetchedAt: z.number(),
});
export type EventKpis = z.infer<typeof EventKpisSchema>;

/**
 * One pass over the project's granules; the 24-hour figures are conditional aggregates of the same scan.
 * Nothing before the studio's retention horizon `retainedFromMs` is counted (retention/horizon.ts).
 */
export async function eventKpis(
  ch: ClickHouseClient,
  projectId: string,
  nowMs: number,
  retainedFromMs = 0,
): Promise<EventKpis> {
  const [row] = await selectRows(
    ch,
    `
      SELECT
        countIf(timestamp > {dayAgo:DateTime64(6, 'UTC')} AND timestamp <= {now:DateTime64(6, 'UTC')}) AS events24h,
        uniqExactIf(player, timestamp > {dayAgo:DateTime64(6, 'UTC')} AND timestamp <= {now:DateTime64(6, 'UTC')})
          AS players24h,
        count() AS totalEvents,
        if(count() = 0, NULL, formatDateTime(max(timestamp), '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC')) AS lastEventAt
      FROM ${CH_EVENTS}
      WHERE project_id = {projectId:UUID} AND timestamp >= {retainedFrom:DateTime64(6, 'UTC')}`,
    { projectId, now: chTime(nowMs), dayAgo: chTime(nowMs - DAY_MS), retainedFrom: chTime(retainedFromMs) },
    { events24h: "unknown", players24h: "unknown", totalEvents: "unknown", lastEventAt: "string | null" },
  );
  return {
    events24h: num(row?.events24h),
    players24h: num(row?.players24h),
    totalEvents: num(row?.totalEvents),
    lastEventAt: row?.lastEventAt ?? null,
    fetchedAt: nowMs,
  };
}

/**
 * The event KPIs as of at most about 60 s ago (the analytics cache), or computed at `now` (the request's
 * clock) when `fresh`.
 * Callers have authenticated and authorized the project: the cache key is the project (and its data
 * version) and the retention horizon, so no answer computed before a retention change is served after it.
 */
export function cachedEventKpis(
  ch: ClickHouseClient,
  project: CachedProject,
  fresh: boolean,
  now: number,
  defer: Defer,
  retainedFromMs = 0,
): Promise<EventKpis> {
  return cached(
    cacheKey("status", project, retainedFromMs > 0 ? { retainedFrom: retainedFromMs } : {}),
    fresh,
    () => eventKpis(ch, project.id, now, retainedFromMs),
    defer,
    (stored) => EventKpisSchema.parse(stored),
  );
}
