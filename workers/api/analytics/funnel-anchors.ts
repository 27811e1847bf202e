// Funnels' stored anchor hours (0029_funnel_anchors.sql, docs/analytics.md "Funnels").
//
// A player's level in a funnel is the best over their step-1 events (anchors) of the steps they did in
// order within `window` of it. The chains anchored in the UTC hour h use only the events of
// [h, h + 1 h + window), so once h + 1 h + window has passed, "who reaches each step from an anchor in
// h" is a fixed set per (project, definition, hour): the jobs queue stores it as bitmaps of dense
// player numbers, and a read ORs the stored hours with the hours it computes live (funnels.ts).
//
// A stored hour carries a stamp of what it was computed from: the project's data version (bumped by every
// erasure) and its step events per UTC day those events can lie on (daily_events). A late batch of a step
// into those days changes a day's count, an erasure the version: the stamp no longer matches and the read
// computes the hour live, until the job stores it again.
import type { ClickHouseClient } from "@clickhouse/client-web";
import { eq } from "drizzle-orm";
import { projects } from "../../../schema/pg/schema.js";
import {
  CH_DAILY_EVENTS,
  CH_FUNNEL_ANCHORS,
  CH_FUNNEL_DEFINITIONS,
  CH_FUNNEL_EVENTS,
  openClickHouse,
} from "../../shared/clickhouse.js";
import { configOf } from "../../shared/config.js";
import { projectDataRetention } from "../data-retention/horizon.js";
import { openDb } from "../db.js";
import type { FunnelAnchorsJob } from "../jobs.js";
import { DAY_MS, dateOf, dayStartMs } from "../window.js";
import { num, selectRows } from "./select.js";

export const HOUR_MS = 3_600_000;

/**
 * Anchor hours one job message stores at most: one statement over a day of anchors and `window` after.
 * Each player's anchor hours each scan the player's events of the range, so a day costs less in all
 * than a week per message (measured at 20M events).
 */
export const HOURS_PER_MESSAGE = 24;

/** The oldest anchor the job stores: the longest window a read asks for (90 days, today included). */
const STORED_DAYS = 90;

/** A definition: distinct step names, in order, and the window in seconds. */
export type FunnelDefinition = { steps: string[]; windowS: number };

/** The text whose cityHash64 is the definition's key in funnel_anchors and funnel_definitions. */
export function definitionKey(d: FunnelDefinition): string {
  return JSON.stringify([d.windowS, d.steps]);
}

/** The UTC days the events of the chains anchored in the hour at `hourMs` can lie on. */
export function coveredDays(hourMs: number, windowS: number): string[] {
  const days: string[] = [];
  const last = dayStartMs(hourMs + HOUR_MS + windowS * 1000 - 1);
  for (let d = dayStartMs(hourMs); d <= last; d += DAY_MS) {
    days.push(dateOf(d));
  }
  return days;
}

export type DayStamp = { events: bigint; consistent: boolean };

/**
 * Per UTC day of [fromDay, toDay], the project's events of the step names, from the per-day totals of
 * `daily_events` (0004_rollups.sql: a few rows per day and name, whatever the events). `consistent`
 * (only when `checked`): funnel_events holds as many of those events for the day, so no insert was half
 * visible (the two tables are filled by two views of one insert) when the job read them. A day absent
 * from the answer has none.
 */
export async function dayStamps(
  ch: ClickHouseClient,
  projectId: string,
  steps: string[],
  fromDay: string,
  toDay: string,
  checked: boolean,
): Promise<Map<string, DayStamp>> {
  const totals = `
      SELECT day, sum(events) AS events FROM ${CH_DAILY_EVENTS}
      WHERE project_id = {projectId:UUID} AND day >= {fromDay:Date} AND day <= {toDay:Date}
        AND event_name IN {steps:Array(String)}
      GROUP BY day`;
  const query = checked
    ? `
      SELECT toString(if(t.day = toDate(0), f.day, t.day)) AS day, toString(t.events) AS events,
        t.events = f.n AS consistent
      FROM (${totals}) AS t
      FULL OUTER JOIN (
        SELECT toDate(timestamp) AS day, count() AS n FROM ${CH_FUNNEL_EVENTS}
        WHERE project_id = {projectId:UUID} AND event_name IN {steps:Array(String)}
          AND toDate(timestamp) >= {fromDay:Date} AND toDate(timestamp) <= {toDay:Date}
        GROUP BY day) AS f ON t.day = f.day`
    : `SELECT toString(day) AS day, toString(events) AS events, 1 AS consistent FROM (${totals})`;
  const rows = await selectRows(
    ch,
    query,
    { projectId, steps, fromDay, toDay },
    { day: "string", events: "string", consistent: "unknown" },
  );
  return new Map(rows.map((r) => [r.day, { events: BigInt(r.events), consistent: num(r.consistent) === 1 }]));
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

/** 64-bit FNV-1a of a text: the stamp's fingerprint (no secret, only a change detector). */
function fnv1a64(text: string): bigint {
  let h = FNV_OFFSET;
  for (const byte of new TextEncoder().encode(text)) {
    h = ((h ^ BigInt(byte)) * FNV_PRIME) & MASK;
  }
  return h;
}

/**
 * The stamp an anchor hour's stored result must carry to be used: a fingerprint of the project's data
 * version (Postgres, bumped by every erasure: analytics/cache.ts dataChanged) and of the step events of
 * each day its events can lie on. A late batch of a step adds to a day; an erasure bumps the version.
 */
export function hourStamp(
  stamps: Map<string, DayStamp>,
  dataVersion: number,
  hourMs: number,
  windowS: number,
): bigint {
  const days = coveredDays(hourMs, windowS).map((day) => `${day}=${stamps.get(day)?.events ?? 0n}`);
  return fnv1a64(`${dataVersion}|${days.join(",")}`);
}

/** Whether every day an hour's events can lie on was read consistently (see dayStamps). */
function consistentHour(stamps: Map<string, DayStamp>, hourMs: number, windowS: number): boolean {
  return coveredDays(hourMs, windowS).every((day) => stamps.get(day)?.consistent ?? true);
}

/** The hours stored for a definition in [fromMs, toMs) (any stamp): hour (ms) → the stamps stored. */
export async function storedHours(
  ch: ClickHouseClient,
  projectId: string,
  d: FunnelDefinition,
  fromMs: number,
  toMs: number,
): Promise<Map<number, bigint[]>> {
  const rows = await selectRows(
    ch,
    `SELECT toUnixTimestamp(hour) AS hour, toString(stamp) AS stamp FROM ${CH_FUNNEL_ANCHORS}
      WHERE project_id = {projectId:UUID} AND definition = cityHash64({definition:String}) AND level = 0
        AND hour >= toDateTime({fromS:UInt32}, 'UTC') AND hour < toDateTime({toS:UInt32}, 'UTC')
      GROUP BY hour, stamp`,
    {
      projectId,
      definition: definitionKey(d),
      fromS: Math.floor(fromMs / 1000),
      toS: Math.floor(toMs / 1000),
    },
    { hour: "unknown", stamp: "string" },
  );
  const out = new Map<number, bigint[]>();
  for (const r of rows) {
    const h = num(r.hour) * 1000;
    out.set(h, [...(out.get(h) ?? []), BigInt(r.stamp)]);
  }
  return out;
}

/**
 * The anchor hours of [fromMs, toMs) whose stored result a read can use, with their stamps: stored, with
 * the stamp of their days now, and whole chains before `toMs` (h + 1 h + window ≤ toMs).
 */
export async function usableHours(
  ch: ClickHouseClient,
  projectId: string,
  d: FunnelDefinition,
  fromMs: number,
  toMs: number,
  dataVersion: number,
): Promise<Map<number, bigint>> {
  const lastDay = dateOf(toMs - 1);
  const [stored, stamps] = await Promise.all([
    storedHours(ch, projectId, d, fromMs, toMs),
    dayStamps(ch, projectId, d.steps, dateOf(fromMs), lastDay, false),
  ]);
  const usable = new Map<number, bigint>();
  for (const [h, list] of stored) {
    if (h + HOUR_MS + d.windowS * 1000 > toMs) {
      continue;
    }
    const want = hourStamp(stamps, dataVersion, h, d.windowS);
    if (list.includes(want)) {
      usable.set(h, want);
    }
  }
  return usable;
}

// Definitions are recorded at most once an hour per isolate: a read adds one small row, not one a read.
const recorded = new Map<string, number>();

/**
 * Records that a definition was read (funnel_definitions), so the job stores its hours from the next
 * run on. A definition never read before is answered live.
 */
export async function recordDefinition(
  ch: ClickHouseClient,
  projectId: string,
  d: FunnelDefinition,
  nowMs: number,
): Promise<void> {
  const key = `${projectId} ${definitionKey(d)}`;
  if ((recorded.get(key) ?? 0) > nowMs - HOUR_MS) {
    return;
  }
  await ch.command({
    query: `INSERT INTO ${CH_FUNNEL_DEFINITIONS} (project_id, definition, steps, window_s, read_at)
      SELECT {projectId:UUID}, cityHash64({definition:String}), {steps:Array(String)}, {windowS:UInt32},
        toDateTime({readS:UInt32}, 'UTC')`,
    query_params: {
      projectId,
      definition: definitionKey(d),
      steps: d.steps,
      windowS: d.windowS,
      readS: Math.floor(nowMs / 1000),
    },
  });
  recorded.set(key, nowMs);
}

/** The definitions read since `sinceMs`, per project. */
export async function recentDefinitions(
  ch: ClickHouseClient,
  sinceMs: number,
): Promise<Array<{ projectId: string } & FunnelDefinition>> {
  const rows = await selectRows(
    ch,
    `SELECT toString(project_id) AS project, any(steps) AS steps, any(window_s) AS window_s
      FROM ${CH_FUNNEL_DEFINITIONS}
      WHERE read_at >= toDateTime({sinceS:UInt32}, 'UTC')
      GROUP BY project_id, definition
      ORDER BY project_id, definition`,
    { sinceS: Math.floor(sinceMs / 1000) },
    { project: "string", steps: "unknown", window_s: "unknown" },
  );
  return rows.map((r) => ({
    projectId: r.project,
    steps: (r.steps as unknown[]).map(String),
    windowS: num(r.window_s),
  }));
}

/**
 * The per-hour levels of the players anchored in `hours` (UNIX seconds), then one row per (hour, level)
 * with the bitmap of the players reaching at least that level, and the hours' level-0 markers. Per
 * player: their step events of [first hour, last hour + 1 h + window), and for each hour holding one
 * of their step-1 events, windowFunnel over those events with step 1 restricted to that hour (the same
 * function as the live read, so both count a chain alike).
 */
function storeSql(stepCount: number, windowUs: number): string {
  const later = Array.from(
    { length: stepCount - 1 },
    (_, i) => `arrayMap(n -> n = {steps:Array(String)}[${i + 2}], names)`,
  );
  return `
    INSERT INTO ${CH_FUNNEL_ANCHORS} (project_id, definition, day, hour, level, stamp, players)
    SELECT {projectId:UUID}, cityHash64({definition:String}), toDate(hour), hour, toUInt8(k),
      toUInt64OrZero({stamps:Array(String)}[indexOf({hours:Array(UInt32)}, toUInt32(hour))]), groupBitmapState(idx)
    FROM (
      SELECT idx, toDateTime(anchor * 3600, 'UTC') AS hour,
        arrayReduce('windowFunnel(${windowUs})', times,
          arrayMap((t, n) -> n = {steps:Array(String)}[1] AND intDiv(t, 3600000000) = anchor, times, names)${later.map((c) => `,\n          ${c}`).join("")}) AS level
      FROM (
        SELECT max(player_idx) AS idx,
          groupArray(toUInt64(toUnixTimestamp64Micro(timestamp))) AS times,
          groupArray(event_name) AS names,
          arrayDistinct(groupArrayIf(intDiv(toUInt64(toUnixTimestamp64Micro(timestamp)), 3600000000),
            event_name = {steps:Array(String)}[1]
              AND toUInt32(intDiv(toUnixTimestamp64Micro(timestamp), 3600000000) * 3600) IN {hours:Array(UInt32)})) AS anchors
        FROM ${CH_FUNNEL_EVENTS}
        WHERE project_id = {projectId:UUID} AND event_name IN {steps:Array(String)}
          AND timestamp >= toDateTime64({fromS:UInt32}, 6, 'UTC') AND timestamp < toDateTime64({toS:UInt32}, 6, 'UTC')
        GROUP BY player_hash
        HAVING notEmpty(anchors))
      ARRAY JOIN anchors AS anchor)
    ARRAY JOIN range(1, level + 1) AS k
    GROUP BY hour, k
    UNION ALL
    SELECT {projectId:UUID}, cityHash64({definition:String}), toDate(hour), hour, toUInt8(0),
      toUInt64OrZero({stamps:Array(String)}[indexOf({hours:Array(UInt32)}, toUInt32(hour))]), groupBitmapStateIf(toUInt32(0), false)
    FROM (SELECT toDateTime(arrayJoin({hours:Array(UInt32)}), 'UTC') AS hour)
    GROUP BY hour`;
}

export type StoreOutcome = { stored: number; skipped: number; more: boolean };

/**
 * One message of the funnel-anchors job: the oldest up to HOURS_PER_MESSAGE hours of the definition
 * that can no longer change (h + 1 h + window ≤ runAt), lie in the last STORED_DAYS days and the
 * studio's retention, and have no stored result with their current stamp. An hour is skipped (left to a
 * later run, and to live reads meanwhile) when its days were not read consistently, or when a step-1
 * event in it has no dense number yet (rows stored before numbering, until the backfill). `more`: hours
 * remain after these. Idempotent: a repeat stores the same bitmaps under the same key.
 */
export async function storeFunnelHours(
  ch: ClickHouseClient,
  job: Pick<FunnelAnchorsJob, "projectId" | "steps" | "windowS" | "runAt">,
  horizonMs: number,
  dataVersion: number,
): Promise<StoreOutcome> {
  const d: FunnelDefinition = { steps: job.steps, windowS: job.windowS };
  const windowMs = d.windowS * 1000;
  const firstMs = Math.max(horizonMs, dayStartMs(job.runAt) - (STORED_DAYS - 1) * DAY_MS);
  const endMs = Math.floor((job.runAt - windowMs) / HOUR_MS) * HOUR_MS; // anchors before this are closed
  if (endMs <= firstMs) {
    return { stored: 0, skipped: 0, more: false };
  }
  const [stored, stamps] = await Promise.all([
    storedHours(ch, job.projectId, d, firstMs, endMs),
    dayStamps(ch, job.projectId, d.steps, dateOf(firstMs), dateOf(endMs + windowMs), true),
  ]);
  const missing: number[] = [];
  let skipped = 0;
  for (let h = firstMs; h < endMs; h += HOUR_MS) {
    if ((stored.get(h) ?? []).includes(hourStamp(stamps, dataVersion, h, d.windowS))) {
      continue;
    }
    if (!consistentHour(stamps, h, d.windowS)) {
      skipped++;
      continue;
    }
    missing.push(h);
  }
  const first = missing[0];
  if (first === undefined) {
    return { stored: 0, skipped, more: false };
  }
  let hours = missing.filter((h) => h < first + HOURS_PER_MESSAGE * HOUR_MS);
  const fromS = first / 1000;
  const toS = ((hours.at(-1) ?? first) + HOUR_MS + windowMs) / 1000;
  // Hours holding a step-1 event without a number: their players cannot go into a bitmap.
  const unnumbered = await selectRows(
    ch,
    `SELECT DISTINCT toUnixTimestamp(toStartOfHour(timestamp)) AS hour FROM ${CH_FUNNEL_EVENTS}
      WHERE project_id = {projectId:UUID} AND event_name = {step:String} AND player_idx = 0
        AND timestamp >= toDateTime64({fromS:UInt32}, 6, 'UTC') AND timestamp < toDateTime64({toS:UInt32}, 6, 'UTC')`,
    { projectId: job.projectId, step: d.steps[0], fromS, toS },
    { hour: "unknown" },
  );
  const bad = new Set(unnumbered.map((r) => num(r.hour) * 1000));
  skipped += hours.filter((h) => bad.has(h)).length;
  hours = hours.filter((h) => !bad.has(h));
  // Hours stored before under another stamp: their stale rows go first (a read meanwhile computes them
  // live), so an hour keeps one stored result however often late batches or erasures invalidate it.
  const stale = hours.filter((h) => stored.has(h));
  if (stale.length) {
    await ch.command({
      query: `DELETE FROM ${CH_FUNNEL_ANCHORS}
        WHERE project_id = {projectId:UUID} AND definition = cityHash64({definition:String})
          AND toUInt32(hour) IN {stale:Array(UInt32)}
        SETTINGS lightweight_deletes_sync = 2, mutations_sync = 2`,
      query_params: {
        projectId: job.projectId,
        definition: definitionKey(d),
        stale: stale.map((h) => h / 1000),
      },
    });
  }
  if (hours.length) {
    await ch.command({
      query: storeSql(d.steps.length, d.windowS * 1_000_000),
      query_params: {
        projectId: job.projectId,
        definition: definitionKey(d),
        steps: d.steps,
        hours: hours.map((h) => h / 1000),
        stamps: hours.map((h) => hourStamp(stamps, dataVersion, h, d.windowS).toString()),
        fromS,
        toS,
      },
    });
  }
  const lastTried = first + HOURS_PER_MESSAGE * HOUR_MS;
  return { stored: hours.length, skipped, more: missing.some((h) => h >= lastTried) };
}

/**
 * The funnel-anchors job of one message: the studio's horizon and the project's data version from
 * Postgres (read before the events: an erasure bumps it after deleting), then storeFunnelHours.
 */
export async function runFunnelAnchorsJob(env: Env, job: FunnelAnchorsJob): Promise<StoreOutcome> {
  const { db, close } = openDb(configOf(env));
  let horizonMs: number;
  let dataVersion: number;
  try {
    const retention = await projectDataRetention(db, job.projectId, job.runAt);
    const [row] = await db
      .select({ dataVersion: projects.dataVersion })
      .from(projects)
      .where(eq(projects.id, job.projectId))
      .limit(1);
    if (!retention || !row) {
      return { stored: 0, skipped: 0, more: false };
    }
    horizonMs = retention.fromMs;
    dataVersion = row.dataVersion;
  } finally {
    await close();
  }
  return storeFunnelHours(openClickHouse(configOf(env), 120_000), job, horizonMs, dataVersion);
}

/** Definitions read within this many days are kept stored (funnel_definitions expires at 35). */
const RECENT_DAYS = 30;

/**
 * The fan-out (a funnel-plan message, sent by the cron once an hour): one funnel-anchors message per
 * definition read in the last RECENT_DAYS days.
 */
export async function planFunnelAnchors(env: Env, runAt: number): Promise<number> {
  const ch = openClickHouse(configOf(env), 30_000);
  const defs = await recentDefinitions(ch, runAt - RECENT_DAYS * DAY_MS);
  const messages = defs.map((d) => ({
    body: {
      v: 1 as const,
      kind: "funnel-anchors" as const,
      runAt,
      projectId: d.projectId,
      steps: d.steps,
      windowS: d.windowS,
    } satisfies FunnelAnchorsJob,
    contentType: "json" as const,
  }));
  for (let i = 0; i < messages.length; i += 100) {
    await env.JOBS_QUEUE.sendBatch(messages.slice(i, i + 100));
  }
  return messages.length;
}

/**
 * An erasure's share (erasure/erase.ts): deletes the project's stored anchor hours whose events could
 * lie on the player's days (an hour's chains reach at most 1 h + 7 days past it), so no stored result
 * keeps the player's number. Their stamps no longer match anyway (the batch totals of those days are
 * rebuilt); the job stores them again without the player.
 */
export async function forgetAnchorHours(
  ch: ClickHouseClient,
  projectId: string,
  days: string[],
): Promise<void> {
  if (!days.length) {
    return;
  }
  await ch.command({
    query: `DELETE FROM ${CH_FUNNEL_ANCHORS}
      WHERE project_id = {projectId:UUID}
        AND arrayExists(d -> day <= d AND day >= d - 8, {days:Array(Date)})
      SETTINGS lightweight_deletes_sync = 2, mutations_sync = 2`,
    query_params: { projectId, days },
  });
}
