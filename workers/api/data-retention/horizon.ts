// The studio's retention at read time: how many UTC days of raw events it keeps (its plan's, or the
// shorter number an owner chose: tenants.retention_days), and the horizon, 00:00 UTC of the oldest
// kept day. Every read stops at the horizon (windowFor below, the query endpoint, exports), so no
// answer holds an expired row even before the daily purge (purge.ts) or a merge removed it.
import { eq } from "drizzle-orm";
import { projects, tenants } from "../../../schema/pg/schema.js";
import type { Config } from "../../shared/config.js";
import { dependencyDownIn } from "../../shared/errors.js";
import { type PlanId, planOf } from "../../shared/plans.js";
import { type Db, httpDb } from "../db.js";
import { type Window, windowOf } from "../window.js";

export type DataRetention = {
  /** The days kept now: the plan's, or the owner's shorter choice. */
  days: number;
  /** The plan's days, the most an owner may choose. */
  planDays: number;
  /** The owner's choice; null: the plan's. */
  chosenDays: number | null;
  /** 00:00 UTC of the oldest day kept (ms): rows dated before it are expired. */
  fromMs: number;
};

/** The days kept: the plan caps the owner's choice, so a downgrade needs no update of the tenant. */
export function dataRetentionOf(planId: PlanId, chosenDays: number | null, nowMs: number): DataRetention {
  const planDays = planOf(planId).retentionDays;
  const days = chosenDays === null ? planDays : Math.min(chosenDays, planDays);
  return { days, planDays, chosenDays, fromMs: windowOf(days, nowMs).fromMs };
}

// The owner's choice per tenant, for a minute per isolate: a change reaches every isolate within a
// minute (this one at once: forgetDataRetention), well inside the day the retention promises.
const TTL_MS = 60_000;
const chosen = new Map<string, { days: number | null; expires: number }>();

/** Drops this isolate's copy of a tenant's choice (after a change). */
export function forgetDataRetention(tenantId: string): void {
  chosen.delete(tenantId);
}

export async function chosenDataRetentionDays(db: Db, tenantId: string): Promise<number | null> {
  const [row] = await db
    .select({ days: tenants.retentionDays })
    .from(tenants)
    .where(eq(tenants.id, tenantId))
    .limit(1);
  return row?.days ?? null;
}

/**
 * The retention of a project's studio at `nowMs`, read from Postgres: for work outside a request
 * (the export consumer). Null when the project is gone.
 */
export async function projectDataRetention(
  db: Db,
  projectId: string,
  nowMs: number,
): Promise<DataRetention | null> {
  const [row] = await db
    .select({ planId: tenants.planId, days: tenants.retentionDays })
    .from(projects)
    .innerJoin(tenants, eq(tenants.id, projects.tenantId))
    .where(eq(projects.id, projectId))
    .limit(1);
  return row ? dataRetentionOf(row.planId, row.days, nowMs) : null;
}

/**
 * Who reads, and when: the caller's studio and plan (the principal's), the request's clock, and the
 * configuration to read the owner's choice with. The routes build it from the request (readerOf,
 * middleware/auth.ts); nothing here sees the request itself.
 */
export type Reader = { tenantId: string; planId: PlanId; nowMs: number; config: Config };

/** The tenant's choice, cached; Postgres down: the last copy (stale-if-error), else the 503. */
async function cachedChoice(config: Config, tenantId: string): Promise<number | null> {
  const now = Date.now();
  const entry = chosen.get(tenantId);
  if (entry && entry.expires > now) {
    return entry.days;
  }
  let days: number | null;
  try {
    days = await chosenDataRetentionDays(httpDb(config), tenantId);
  } catch (err) {
    if (entry && dependencyDownIn(err)) {
      return entry.days;
    }
    throw err;
  }
  if (chosen.size >= 10_000) {
    chosen.clear();
  }
  chosen.set(tenantId, { days, expires: now + TTL_MS });
  return days;
}

/** The retention of the reader's studio at the reader's clock. */
export async function readerRetention(r: Reader): Promise<DataRetention> {
  return dataRetentionOf(r.planId, await cachedChoice(r.config, r.tenantId), r.nowMs);
}

/**
 * The analytics window of `days` at the reader's clock, its start moved up to the studio's horizon
 * (window.ts windowOf): the one place every analytics read gets its bounds from.
 */
export async function windowFor(r: Reader, days: number): Promise<Window> {
  return windowOf(days, r.nowMs, (await readerRetention(r)).fromMs);
}
