// The erasures queue's consumers (workers/shared/queues.ts): the work queue, one message per erasure
// (POST …/erasures sends it), and its dead-letter queue.
import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import { z } from "zod";
import { AUDIT_ACTOR_TYPES } from "../../../schema/pg/columns.js";
import { type ErasureRow, erasures, projects } from "../../../schema/pg/schema.js";
import { CH_EVENTS, openClickHouse } from "../../shared/clickhouse.js";
import { configOf, localKnobsOf } from "../../shared/config.js";
import { sha256Hex } from "../../shared/credentials/secrets.js";
import { QUEUES, queueRetryDelaySeconds } from "../../shared/queues.js";
import { dataChanged } from "../analytics/cache.js";
import { auditOutside } from "../audit/record.js";
import { type Db, openDb } from "../db.js";
import { erasePlayer, type StepOutcome } from "./erase.js";
import { stageKeys } from "./keys.js";
import { playerSessions } from "./steps.js";

/**
 * One erasure to run. The player id travels only in the message (the erasure keeps its SHA-256): the
 * consumer checks it against the record before deleting anything. `requester` attributes the
 * completion's audit entry to whoever asked, as the request's own entry is.
 */
export const ErasureMessage = z.object({
  v: z.literal(1),
  erasureId: z.string(),
  playerId: z.string(),
  requester: z.object({
    actor: z.object({
      type: z.enum(AUDIT_ACTOR_TYPES),
      id: z.string().nullable(),
      label: z.string(),
      userId: z.string().nullable().optional(),
    }),
    ip: z.string().nullable(),
    userAgent: z.string().nullable(),
  }),
});
export type ErasureMessage = z.output<typeof ErasureMessage>;

/**
 * How long a delivery holds an erasure (renewed at each step): a duplicate delivery arriving meanwhile
 * waits for it to end instead of running the same steps at once. Past the consumer's 15 minutes of wall
 * time a holder is gone, so its lease can be taken.
 */
export const LEASE_MS = 15 * 60_000;
/** Covers the longest statement a step may run (a lightweight DELETE waits for its mutation). */
const STATEMENT_TIMEOUT_MS = 14 * 60_000;

/**
 * The local knob erasureFaultAfterSteps (LOCAL_KNOBS, workers/shared/config.ts): a delivery throws once
 * that many steps are recorded, on its first attempt only (retries then finish the erasure). Null
 * wherever the knob is not set (every deployed Worker).
 */
function faultAfter(env: Env, attempts: number): number | null {
  return attempts > 1 ? null : localKnobsOf(env).erasureFaultAfterSteps;
}

type Claim = { kind: "claimed"; row: ErasureRow } | { kind: "ended" } | { kind: "busy"; waitSeconds: number };

/** Takes the erasure for this delivery: running and not held by another live delivery. */
async function claim(db: Db, erasureId: string, now: Date): Promise<Claim> {
  const [row] = await db
    .update(erasures)
    .set({
      leaseUntil: new Date(now.getTime() + LEASE_MS),
      attempts: sql`${erasures.attempts} + 1`,
      startedAt: sql`coalesce(${erasures.startedAt}, ${now.toISOString()}::timestamptz)`,
    })
    .where(
      and(
        eq(erasures.id, erasureId),
        eq(erasures.status, "running"),
        or(isNull(erasures.leaseUntil), lt(erasures.leaseUntil, now)),
      ),
    )
    .returning();
  if (row) {
    return { kind: "claimed", row };
  }
  const [held] = await db.select().from(erasures).where(eq(erasures.id, erasureId)).limit(1);
  if (held?.status !== "running" || !held.leaseUntil) {
    return { kind: "ended" };
  }
  return {
    kind: "busy",
    waitSeconds: Math.max(1, Math.ceil((held.leaseUntil.getTime() - now.getTime()) / 1000)),
  };
}

/** What the record says of the steps: the events removed, and every table's count. */
export function recordOf(steps: StepOutcome[]) {
  return { steps, rowsRemoved: steps.find((s) => s.table === CH_EVENTS)?.rowsRemoved ?? 0 };
}

function entry(m: ErasureMessage, row: Pick<ErasureRow, "id" | "playerIdSha256">, at: Date) {
  return {
    actor: m.requester.actor,
    ip: m.requester.ip,
    userAgent: m.requester.userAgent,
    at,
    target: { type: "erasure", id: row.id, label: null },
  };
}

async function tenantOf(db: Db, projectId: string): Promise<string | null> {
  const [p] = await db
    .select({ tenantId: projects.tenantId })
    .from(projects)
    .where(eq(projects.id, projectId))
    .limit(1);
  return p?.tenantId ?? null;
}

/**
 * Runs one delivery of an erasure: claims it, reads the player's sessions and days once (kept with the
 * erasure for every later attempt), runs the steps not yet recorded, then records it completed. Safe to
 * deliver again at any point: an ended erasure is left as it is, a held one waits, a resumed one skips
 * what is recorded.
 */
async function runErasure(db: Db, env: Env, m: ErasureMessage, attempts: number): Promise<Claim> {
  const now = new Date();
  const claimed = await claim(db, m.erasureId, now);
  if (claimed.kind !== "claimed") {
    return claimed;
  }
  const row = claimed.row;
  if ((await sha256Hex(m.playerId)) !== row.playerIdSha256) {
    throw new Error("the message's player is not the erasure's");
  }
  const tenantId = await tenantOf(db, row.projectId);
  if (!tenantId) {
    return { kind: "ended" };
  }
  const project = { id: row.projectId, tenantId };
  const ch = openClickHouse(configOf(env), STATEMENT_TIMEOUT_MS);
  let work = row.work;
  if (!work) {
    const read = await playerSessions(ch, row.projectId, m.playerId);
    // The rollup keys of the events about to go, staged before the work is recorded: every attempt
    // from here on rebuilds only those keys (keys.ts).
    await stageKeys(ch, row.id, read);
    work = { identified: read.identified, emptied: read.emptied, days: read.days, staged: true };
    await db.update(erasures).set({ work }).where(eq(erasures.id, row.id));
  }
  const today = now.toISOString().slice(0, 10);
  const { staged, ...sessions } = work;
  const bound = {
    project: row.projectId,
    player: m.playerId,
    ...sessions,
    within: [...new Set([...work.days, today])],
    ...(staged ? { erasure: row.id } : {}),
  };
  const fault = faultAfter(env, attempts);
  let ran = 0;
  const steps = await erasePlayer(ch, bound, row.steps, async (done) => {
    await db
      .update(erasures)
      .set({ ...recordOf(done), leaseUntil: new Date(Date.now() + LEASE_MS) })
      .where(eq(erasures.id, row.id));
    ran++;
    if (fault !== null && ran >= fault) {
      throw new Error(`injected fault after ${ran} step(s)`);
    }
  }).finally(() => dataChanged(db, env, project));
  await forgetNumbers(env, row.projectId, m.playerId, work);
  await db.transaction(async (tx) => {
    const [done] = await tx
      .update(erasures)
      .set({
        ...recordOf(steps),
        status: "completed",
        completedAt: new Date(),
        error: null,
        work: null,
        leaseUntil: null,
      })
      .where(and(eq(erasures.id, row.id), eq(erasures.status, "running")))
      .returning();
    if (done) {
      await auditOutside(tx, {
        ...entry(m, row, new Date()),
        tenantId,
        projectId: row.projectId,
        action: "erasure.completed",
        detail: { playerIdSha256: row.playerIdSha256, rowsRemoved: done.rowsRemoved },
      });
    }
  });
  return claimed;
}

/**
 * The erased player's dense numbers go (workers/shared/actors.ts): the player's own, those of the
 * anonymous players of their identified sessions (whose events the erasure took), and those of the
 * sessions it emptied. After the events are gone, so a row stored meanwhile carries a number that is
 * then forgotten, never a new one for a player still being erased; an id that comes back later is a new
 * player with a new number. Idempotent: a retry forgets nothing twice.
 */
async function forgetNumbers(
  env: Env,
  projectId: string,
  player: string,
  work: { identified: string[]; emptied: string[] },
): Promise<void> {
  const stub = env.BATCH_CLAIMS.get(env.BATCH_CLAIMS.idFromName(projectId));
  await stub.forget([...new Set([player, ...work.identified])], work.emptied);
}

/**
 * Records the end of an attempt that threw: the lease goes (the retry may take it at once) and the
 * error stays on the record; on the last attempt the erasure is failed, with that error, and audited.
 * The work read before the first delete goes with a failed erasure: the record keeps no session id.
 */
async function recordFailure(db: Db, m: ErasureMessage, error: string, last: boolean): Promise<void> {
  if (!last) {
    await db
      .update(erasures)
      .set({ error, leaseUntil: null })
      .where(and(eq(erasures.id, m.erasureId), eq(erasures.status, "running")));
    return;
  }
  await db.transaction(async (tx) => {
    const [failed] = await tx
      .update(erasures)
      .set({ status: "failed", error, completedAt: new Date(), leaseUntil: null, work: null })
      .where(and(eq(erasures.id, m.erasureId), eq(erasures.status, "running")))
      .returning();
    const tenantId = failed ? await tenantOf(tx, failed.projectId) : null;
    if (failed && tenantId) {
      await auditOutside(tx, {
        ...entry(m, failed, new Date()),
        tenantId,
        projectId: failed.projectId,
        action: "erasure.failed",
        outcome: "failure",
        detail: { playerIdSha256: failed.playerIdSha256, rowsRemoved: failed.rowsRemoved },
      });
    }
  });
}

const errorOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Hands each readable erasure message of the batch to `handle`, with one Postgres pool for the batch;
 * an unreadable message (no erasure to record anything on) is logged and dropped.
 */
async function eachErasure(
  batch: MessageBatch<unknown>,
  env: Env,
  what: string,
  handle: (db: Db, m: Message<unknown>, body: ErasureMessage) => Promise<void>,
): Promise<void> {
  const { db, close } = openDb(configOf(env));
  try {
    for (const m of batch.messages) {
      const read = ErasureMessage.safeParse(m.body);
      if (read.success) {
        await handle(db, m, read.data);
      } else {
        console.error(`unreadable ${what} dropped`, m.id);
        m.ack();
      }
    }
  } finally {
    await close().catch(() => {});
  }
}

/**
 * One erasure per message. Acknowledged once completed (or already ended); retried with the queue's
 * backoff when a step throws (the record keeps the steps done and the error); on the last attempt the
 * erasure is recorded failed and the message retried once more, which dead-letters it: a failure is
 * never silently dropped. A duplicate delivery while another holds the erasure retries after the lease.
 */
export function consumeErasures(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  return eachErasure(batch, env, "erasure message", async (db, m, body) => {
    try {
      const outcome = await runErasure(db, env, body, m.attempts);
      if (outcome.kind === "busy") {
        // Another delivery holds it: this one comes back when its lease ends.
        m.retry({ delaySeconds: outcome.waitSeconds });
        return;
      }
      console.log("erasure", body.erasureId, outcome.kind === "claimed" ? "completed" : "already ended");
      m.ack();
    } catch (err) {
      const error = errorOf(err);
      const last = m.attempts > QUEUES.erasures.maxRetries;
      // Never the player id: the erasure's id names it.
      console.error(
        last ? "erasure failed, dead-lettering" : "erasure failed, will retry",
        body.erasureId,
        `attempt ${m.attempts}`,
        error,
      );
      await recordFailure(db, body, error, last).catch((e: unknown) =>
        console.error("erasure failure not recorded", body.erasureId, errorOf(e)),
      );
      m.retry({ delaySeconds: queueRetryDelaySeconds(QUEUES.erasures, m.attempts) });
    }
  });
}

/**
 * The dead-letter queue: an erasure whose message failed every attempt. Recorded failed here if the last
 * attempt could not record it (Postgres down then), and logged by id; a held erasure (a live delivery
 * still running it) is left to finish. Acknowledged once recorded, so the player id leaves the queue.
 */
export function consumeErasureDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  return eachErasure(batch, env, "dead-lettered erasure message", async (db, m, body) => {
    try {
      const [row] = await db.select().from(erasures).where(eq(erasures.id, body.erasureId)).limit(1);
      if (row?.status === "running" && row.leaseUntil && row.leaseUntil > new Date()) {
        m.retry({ delaySeconds: Math.ceil((row.leaseUntil.getTime() - Date.now()) / 1000) + 1 });
        return;
      }
      const attempts = QUEUES.erasures.maxRetries + 1;
      await recordFailure(
        db,
        body,
        `failed on all ${attempts} attempts (dead-lettered)${row?.error ? `: ${row.error}` : ""}`,
        true,
      );
      console.error("erasure dead-lettered", body.erasureId, row?.status ?? "gone");
      m.ack();
    } catch (err) {
      console.error("dead-lettered erasure not recorded, will retry", body.erasureId, errorOf(err));
      m.retry({ delaySeconds: queueRetryDelaySeconds(QUEUES.erasuresDeadLetter, m.attempts) });
    }
  });
}
