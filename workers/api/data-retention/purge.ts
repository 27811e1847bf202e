// The daily retention purge: deletes every project's rows dated before its studio's horizon from every
// table of telemetry rows (tables.ts), with one lightweight DELETE per table that has any, for all
// projects at once. Reads already stop at the horizon (horizon.ts), so the purge only frees the disk
// and makes the expiry physical; the tables' own TTL (migrations 0015, 0021) is the backstop at the
// longest plan's retention. Planned by the API Worker's cron: the first run of a UTC day claims the day
// in retention_runs and sends the work to the jobs queue in bounded messages (planPurge), whose
// consumer deletes; a run that fails to send gives the claim back, so the next run retries.
import type { ClickHouseClient } from "@clickhouse/client-web";
import { eq, sql } from "drizzle-orm";
import { projects, retentionRuns, tenants } from "../../../schema/pg/schema.js";
import { dayOfDate } from "../../shared/actors.js";
import type { Db } from "../db.js";
import type { PurgeJob } from "../jobs.js";
import { dateOf } from "../window.js";
import { dataRetentionOf } from "./horizon.js";
import { RETAINED_TABLES, type RetainedTable } from "./tables.js";

/** Projects per statement: their ids and horizons are two bound arrays. */
const CHUNK = 2_000;

/** Every project with its horizon date (YYYY-MM-DD) at `now`. */
export async function projectHorizons(
  db: Db,
  nowMs: number,
): Promise<Array<{ id: string; horizon: string }>> {
  const rows = await db
    .select({ id: projects.id, planId: tenants.planId, days: tenants.retentionDays })
    .from(projects)
    .innerJoin(tenants, eq(tenants.id, projects.tenantId));
  return rows.map((r) => ({ id: r.id, horizon: dateOf(dataRetentionOf(r.planId, r.days, nowMs).fromMs) }));
}

/** A row is expired when its day is before its project's horizon; projects not listed are untouched. */
function expired(t: RetainedTable): string {
  return `project_id IN {projects:Array(UUID)}
    AND ${t.day} < {latest:Date}
    AND ${t.day} < arrayElement({horizons:Array(Date)}, indexOf({projects:Array(UUID)}, project_id))`;
}

/**
 * Deletes the expired rows of `horizons`' projects from every table; returns the rows deleted per
 * table. A table without any is not touched (a count over the days before the latest horizon, which
 * the primary keys and monthly partitions narrow, rather than a mutation of every part).
 */
export async function deleteExpired(
  ch: ClickHouseClient,
  horizons: Array<{ id: string; horizon: string }>,
): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  for (let i = 0; i < horizons.length; i += CHUNK) {
    const chunk = horizons.slice(i, i + CHUNK);
    const params = {
      projects: chunk.map((p) => p.id),
      horizons: chunk.map((p) => p.horizon),
      latest:
        chunk
          .map((p) => p.horizon)
          .sort()
          .at(-1) ?? "1970-01-01",
    };
    for (const t of RETAINED_TABLES) {
      const rs = await ch.query({
        query: `SELECT count() AS n FROM ${t.table} WHERE ${expired(t)}`,
        query_params: params,
        format: "JSONEachRow",
      });
      const [row] = await rs.json<{ n: string | number }>();
      const n = Number(row?.n ?? 0);
      if (n > 0) {
        await ch.command({
          query: `DELETE FROM ${t.table} WHERE ${expired(t)} SETTINGS lightweight_deletes_sync = 2, mutations_sync = 2`,
          query_params: params,
        });
      }
      deleted[t.table] = (deleted[t.table] ?? 0) + n;
    }
  }
  return deleted;
}

/** Objects asked at once by expireNumbers. */
const NUMBER_OBJECTS_AT_ONCE = 16;

/**
 * Forgets the dense numbers (workers/shared/actors.ts) of every player and session of these projects
 * whose latest event is before the project's horizon, in each project's BatchClaims object: their
 * events are gone, and a returning player gets a new number (a new first retained day, as retention
 * counts it). Returns the mappings dropped. Idempotent.
 */
export async function expireNumbers(
  env: Env,
  horizons: Array<{ id: string; horizon: string }>,
): Promise<number> {
  let dropped = 0;
  for (let i = 0; i < horizons.length; i += NUMBER_OBJECTS_AT_ONCE) {
    const counts = await Promise.all(
      horizons
        .slice(i, i + NUMBER_OBJECTS_AT_ONCE)
        .map((p) => env.BATCH_CLAIMS.get(env.BATCH_CLAIMS.idFromName(p.id)).expire(dayOfDate(p.horizon))),
    );
    dropped += counts.reduce((a, b) => a + b, 0);
  }
  return dropped;
}

/**
 * Projects per purge message: bounds one message's work (one count, and at most one DELETE, per table
 * for these projects) and its size (about 70 bytes a project, far under a message's 128 KB).
 */
export const PURGE_PROJECTS_PER_MESSAGE = 1_000;

/** Claims today's purge (null: another run has it, claimed and not stale for an hour). */
async function claimDay(db: Db, now: Date): Promise<string | null> {
  const day = dateOf(now.getTime());
  const claimed = await db
    .insert(retentionRuns)
    .values({ day, startedAt: now })
    .onConflictDoUpdate({
      target: retentionRuns.day,
      set: { startedAt: now },
      setWhere: sql`${retentionRuns.finishedAt} IS NULL AND ${retentionRuns.startedAt} < ${new Date(now.getTime() - 3_600_000)}`,
    })
    .returning({ day: retentionRuns.day });
  return claimed.length ? day : null;
}

/**
 * The cron's part, once a UTC day: claims the day, computes every project's horizon (Postgres only) and
 * sends the purge to the jobs queue in messages of PURGE_PROJECTS_PER_MESSAGE projects, which its
 * consumer deletes (consume.ts) and whose numbers it expires (expireNumbers). The day is finished once every message is sent; a send that fails
 * gives the day back to the next run. Deleting is idempotent (rows before a horizon), so a redelivered
 * or retried message changes nothing, and a dead-lettered one is caught up by the next day's purge.
 */
export async function planPurge(
  env: Env,
  db: Db,
  now: Date,
): Promise<{ day: string; projects: number; messages: number } | null> {
  const day = await claimDay(db, now);
  if (!day) {
    return null;
  }
  try {
    const horizons = await projectHorizons(db, now.getTime());
    const messages: PurgeJob[] = [];
    for (let i = 0; i < horizons.length; i += PURGE_PROJECTS_PER_MESSAGE) {
      messages.push({
        v: 1,
        kind: "purge",
        day,
        horizons: horizons.slice(i, i + PURGE_PROJECTS_PER_MESSAGE),
      });
    }
    // Three messages of at most ~70 KB per sendBatch: under its 256 KB.
    for (let i = 0; i < messages.length; i += 3) {
      await env.JOBS_QUEUE.sendBatch(
        messages.slice(i, i + 3).map((body) => ({ body, contentType: "json" as const })),
      );
    }
    await db.update(retentionRuns).set({ finishedAt: new Date() }).where(eq(retentionRuns.day, day));
    return { day, projects: horizons.length, messages: messages.length };
  } catch (err) {
    await db.delete(retentionRuns).where(eq(retentionRuns.day, day));
    throw err;
  }
}
