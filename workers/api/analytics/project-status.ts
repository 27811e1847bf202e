import type { ClickHouseClient } from "@clickhouse/client-web";
import { z } from "@hono/zod-openapi";
import { CH_BATCH_TOTALS, CH_EVENTS } from "../../shared/clickhouse.js";
import { DependencyDown } from "../../shared/errors.js";
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
 * The batch keys of the project's inserts that may be under way: claimed by a consumer and not yet given
 * back (durable-objects/batch-claims.ts, `held`).
 */
export type InFlight = () => Promise<string[]>;

/** batch_totals' rows of the project since the retention horizon. */
const RETAINED = `${CH_BATCH_TOTALS} WHERE project_id = {projectId:UUID} AND day >= toDate({retainedFrom:DateTime64(6, 'UTC')})`;

/**
 * The totals with no batch in flight: the sums and latest events of batch_totals' per-day projection
 * (0044_batch_totals_by_day.sql). Cost: a row per day and part, not per batch (87 rows at 100M events
 * against 15.2M).
 */
const TOTALS = `SELECT sum(events) AS total, max(last_event) AS last FROM ${RETAINED}`;

/**
 * The totals of the settled batches: the projection's sum minus the in-flight batches' rows (the key's
 * batch id within each day finds them); the latest event is the projection's over the days no in-flight
 * batch has rows on, or the latest of the settled batches' rows of the days one has. The statement reads
 * the table through one snapshot of its parts (`enable_shared_storage_snapshot_in_query`), so a batch
 * committed while it runs is in every one of its reads or in none. Cost: the projection, the in-flight
 * batches' rows, and the batch rows of the days they have rows on (a day's batches: 0.5M rows at 100M).
 */
const HELD_TOTALS = `
  WITH held AS (
    SELECT day, sum(events) AS events FROM ${RETAINED} AND batch_id IN {inFlight:Array(String)} GROUP BY day
  )
  SELECT (SELECT sum(events) FROM ${RETAINED}) - (SELECT sum(events) FROM held) AS total,
    greatest(
      (SELECT max(last_event) FROM ${RETAINED} AND day NOT IN (SELECT day FROM held)),
      (SELECT max(last_event) FROM ${RETAINED} AND day IN (SELECT day FROM held)
        AND batch_id NOT IN {inFlight:Array(String)})
    ) AS last`;

/**
 * The 24-hour figures from the events of the last 24 hours (the primary key's day prunes the read to
 * two days of the project's rows; players by their dense number, 4 bytes a row); the totals from
 * batch_totals (0025_batch_totals.sql) through its per-day projection (TOTALS, HELD_TOTALS): neither
 * grows with the project's whole history of events. Nothing before the horizon `retainedFromMs` is
 * counted (retention/horizon.ts), nor the rows of the batches in `inFlight` (settledEventKpis), in
 * either read.
 */
export async function eventKpis(
  ch: ClickHouseClient,
  projectId: string,
  nowMs: number,
  retainedFromMs = 0,
  inFlight: readonly string[] = [],
): Promise<EventKpis> {
  const settled = inFlight.length ? "AND batch_id NOT IN {inFlight:Array(String)}" : "";
  const [row] = await selectRows(
    ch,
    `
      SELECT r.events24h AS events24h, r.players24h AS players24h, t.total AS totalEvents,
        if(t.total = 0, NULL, formatDateTime(t.last, '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC')) AS lastEventAt
      FROM (
        SELECT count() AS events24h, uniqExactIf(player_idx, player_idx != 0) AS players24h
        FROM ${CH_EVENTS}
        WHERE project_id = {projectId:UUID} AND timestamp > {dayAgo:DateTime64(6, 'UTC')}
          AND timestamp <= {now:DateTime64(6, 'UTC')} AND timestamp >= {retainedFrom:DateTime64(6, 'UTC')} ${settled}
      ) AS r
      CROSS JOIN (${inFlight.length ? HELD_TOTALS : TOTALS}) AS t
      SETTINGS enable_shared_storage_snapshot_in_query = 1`,
    {
      projectId,
      now: chTime(nowMs),
      dayAgo: chTime(nowMs - DAY_MS),
      retainedFrom: chTime(retainedFromMs),
      ...(inFlight.length ? { inFlight } : {}),
    },
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

/** How many times the count is taken again when a batch was claimed while it ran (settledEventKpis). */
const SETTLE_ROUNDS = 4;

/**
 * The event KPIs over the rows every read of the project sees: those whose INSERT has finished. An INSERT
 * commits the events' part first and each materialized view's part after it, so the events can hold
 * rows that the rollups the dashboard reads (daily_events, actor_buckets, …) do not
 * hold yet; a status that counted them told a studio "all stored" while its next dashboard read still
 * missed them. A consumer holds its batches' claims from before the INSERT until ClickHouse
 * confirmed it, so the rows of the batches not held are in every rollup. The claims are read before the
 * count (its rows of those batches are left out) and again after it: a batch claimed meanwhile may have
 * had its events' part committed while the count ran, so the count is taken again without it too, until
 * no batch was claimed while it ran (at most SETTLE_ROUNDS counts; a claim given back before the second
 * read belonged to an INSERT that finished before this answer).
 */
export async function settledEventKpis(
  ch: ClickHouseClient,
  projectId: string,
  nowMs: number,
  retainedFromMs: number,
  inFlight: InFlight,
): Promise<EventKpis> {
  const excluded = new Set(await inFlight());
  for (let round = 1; ; round++) {
    const kpis = await eventKpis(ch, projectId, nowMs, retainedFromMs, [...excluded]);
    const claimed = (await inFlight()).filter((key) => !excluded.has(key));
    if (!claimed.length || round === SETTLE_ROUNDS) {
      return kpis;
    }
    for (const key of claimed) {
      excluded.add(key);
    }
  }
}

/**
 * The event KPIs as of at most about 60 s ago (the analytics cache), or computed at `now` (the request's
 * clock) when `fresh`, over the rows whose INSERT has finished (settledEventKpis).
 * Callers have authenticated and authorized the project: the cache key is the project (and its data
 * version) and the retention horizon, so no answer computed before a retention change is served after it.
 */
export function cachedEventKpis(
  ch: ClickHouseClient,
  project: CachedProject,
  fresh: boolean,
  now: number,
  defer: Defer,
  inFlight: InFlight,
  retainedFromMs = 0,
): Promise<EventKpis> {
  return cached(
    cacheKey("status", project, retainedFromMs > 0 ? { retainedFrom: retainedFromMs } : {}),
    fresh,
    () => settledEventKpis(ch, project.id, now, retainedFromMs, inFlight),
    defer,
    (stored) => EventKpisSchema.parse(stored),
  );
}

/** The project's batches claimed by a consumer now (its BatchClaims object); unreachable is a 503. */
export async function batchesInFlight(env: Env, projectId: string): Promise<string[]> {
  try {
    return await env.BATCH_CLAIMS.get(env.BATCH_CLAIMS.idFromName(projectId)).held();
  } catch (err) {
    throw new DependencyDown("Durable Objects", err);
  }
}
