import type { ClickHouseClient } from "@clickhouse/client-web";
import { and, asc, desc, eq, inArray, isNotNull, lt, sql } from "drizzle-orm";
import type { WorstCellsRecord } from "../../../schema/pg/columns.js";
import {
  type AlertRuleRow,
  alertEvaluationEvents,
  alertPairStates,
  alertRuleChannels,
  alertRuleProfiles,
  alertRules,
  maps,
  type ThresholdProfileRow,
  thresholdProfiles,
} from "../../../schema/pg/schema.js";
import { openClickHouse } from "../../shared/clickhouse.js";
import { configOf } from "../../shared/config.js";
import { type Db, openDb, type Tx } from "../db.js";
import type { PairRef } from "../jobs.js";
import { windowOf } from "../window.js";
import { type CellJudgement, type CellScope, judgeScope, judgeScopeGroup, type PairQuery } from "./cells.js";
import { type AlertStatus, type LatestStatus, latestStatuses } from "./latest.js";
import { linked } from "./links.js";
import { thresholdOf } from "./metrics.js";
import type { AlertNotification, NotificationMessage } from "./notification.js";

// One message's evaluation (the jobs queue consumer, consume.ts), with exactly-once effects per
// (rule, profile, scheduled run):
//
//   - alert_pair_states holds, per pair, the newest run that evaluated it. Recording locks that row:
//     a run at or before it (a redelivered message, a retried message, an overlapping older run) records
//     nothing; runs only move forward.
//   - An event is recorded only when the status differs from the pair's newest event, read under the
//     same lock, so two overlapping runs cannot both record the same change. Its id is derived from
//     (rule, profile, run), and a unique index on (rule, profile, run_at) backs it.
//   - Notifications are an outbox: the event row carries the messages still to hand to the notifications
//     queue (pending_notifications), written in the event's transaction after the cooldown claim (which
//     the cooldown object remembers per event id, so a retried run gets the same answer, never a second
//     stamp). They are sent after the commit and cleared; anything left pending (a consumer that died in
//     between, a queue error) is sent by the next message touching the rule. The delivery side posts
//     each (event, channel) once (deliver.ts, the cooldown object's ledger).

/** Pairs of one message evaluated at once: bounds one consumer's load on ClickHouse and Postgres. */
const CONCURRENCY = 4;

type Profile = ThresholdProfileRow;
type Rule = AlertRuleRow & {
  map: { id: string; mapId: string; name: string };
  profiles: Profile[];
  channelIds: string[];
};

export type RunSummary = {
  /** Pairs the message (or run) named. */
  pairs: number;
  /** Pairs judged and recorded by this call. */
  evaluated: number;
  /** Pairs already recorded for this run or a newer one (a duplicate delivery or an overlapping run). */
  skipped: number;
  /** Pairs whose rule is gone, inactive, or no longer bundles the profile. */
  gone: number;
  changed: number;
  notified: number;
  /** Pairs that cannot be evaluated (e.g. the profile lost the threshold): recorded as "error". */
  errors: number;
  /** Pairs that failed on a dependency (ClickHouse, Postgres, a queue): the message is retried. */
  failed: number;
  /** Wall time. */
  ms: number;
};

const emptySummary = (): RunSummary => ({
  pairs: 0,
  evaluated: 0,
  skipped: 0,
  gone: 0,
  changed: 0,
  notified: 0,
  errors: 0,
  failed: 0,
  ms: 0,
});

/** The scheduled run a message belongs to. */
export type EvaluationRun = {
  /** The cron's scheduledTime (ms): the run key and the evaluation's clock (windows, cooldowns). */
  runAt: number;
  /**
   * Fault injection for local stacks and tests (consume.ts): throw after recording this many pairs, as a
   * consumer dying halfway would. Null: off.
   */
  throwAfterPairs?: number | null;
};

/** Thrown by the fault-injection knob: the message fails as if the consumer had died. */
export class InjectedFault extends Error {}

/** Some pairs failed on a dependency; the others are recorded. The message must be retried. */
export class PairsFailed extends Error {
  constructor(
    readonly pairs: PairRef[],
    cause: string,
  ) {
    super(`${pairs.length} alert pair(s) failed: ${cause}`);
  }
}

type Ctx = {
  env: Env;
  /** The app's public origin for the notifications' links (APP_URL; empty: root-relative). */
  origin: string;
  db: Db;
  ch: ClickHouseClient;
  run: EvaluationRun;
  now: Date;
  latest: Map<string, LatestStatus>;
  summary: RunSummary;
  /** The message's pairs to judge (phase one reads for all of them at once). */
  work: Work[];
  /**
   * Judgements by (project, map), made once per message for all of its pairs there (judgeScopeGroup: one
   * read per window and cell size for the means, one per window for the failing shares).
   */
  judged: Map<string, Promise<Map<string, CellJudgement>>>;
  recorded: number;
  aborted: boolean;
};

type Work = { rule: Rule; profile: Profile; scope: CellScope; key: string };

/** What phase one (ClickHouse) found for a pair; recorded in phase two (Postgres). */
type Judged = {
  status: AlertStatus;
  counts: { failCount: number; totalCount: number };
  failPercentage: number;
  threshold: number;
  /** Worst cells as judged (failing shares filled in only for a change to triggered). */
  worst: CellJudgement["worst"];
  /** Whether the worst cells' failing shares were read (a pair that changes to triggered). */
  shares: boolean;
};

const pairKey = (ruleId: string, profileId: string) => `${ruleId}:${profileId}`;

/**
 * Evaluates one message's pairs of one scheduled run. Pairs already recorded for this run (or a newer
 * one) are skipped; each other pair is judged and recorded on its own. A pair that cannot be evaluated
 * is recorded as an error; if any pair failed on a dependency, the others stay recorded and this throws
 * PairsFailed, so the queue retries the message (the recorded pairs are then skipped).
 */
export async function evaluatePairs(env: Env, pairs: PairRef[], run: EvaluationRun): Promise<RunSummary> {
  const config = configOf(env);
  const { db, close } = openDb(config);
  const started = Date.now();
  const summary: RunSummary = { ...emptySummary(), pairs: pairs.length };
  try {
    const ruleIds = [...new Set(pairs.map(([r]) => r))];
    // Notifications an earlier delivery committed but did not hand over (it died, or the queue failed).
    await flushOutbox(env, db, ruleIds);
    const [rules, done, latest] = await Promise.all([
      loadActiveRules(db, ruleIds),
      recordedRuns(db, ruleIds),
      latestStatuses(db, ruleIds),
    ]);
    const ctx: Ctx = {
      env,
      origin: config.APP_URL,
      db,
      ch: openClickHouse(config),
      run,
      now: new Date(run.runAt),
      latest,
      summary,
      work: [],
      judged: new Map(),
      recorded: 0,
      aborted: false,
    };
    const work = ctx.work;
    for (const [ruleId, profileId] of pairs) {
      const rule = rules.get(ruleId);
      const profile = rule?.profiles.find((p) => p.id === profileId);
      if (!rule || !profile) {
        summary.gone++;
        continue;
      }
      if ((done.get(pairKey(ruleId, profileId)) ?? -1) >= run.runAt) {
        summary.skipped++;
        continue;
      }
      const scope = scopeOf(ctx, rule, profile);
      work.push({ rule, profile, scope, key: scopeKey(scope) });
    }
    // The pairs of one scope next to each other: the lanes then share each scope's one read.
    work.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const failed: PairRef[] = [];
    let cause = "";
    await forEachLimited(work, CONCURRENCY, ctx, async (w) => {
      try {
        await evaluatePair(ctx, w);
      } catch (err) {
        if (err instanceof InjectedFault) {
          ctx.aborted = true;
          throw err;
        }
        const message = err instanceof Error ? err.message : String(err);
        summary.failed++;
        failed.push([w.rule.id, w.profile.id]);
        cause ||= message;
        console.error("alert evaluation failed", w.rule.id, w.profile.id, message);
        await noteFailure(db, w.rule.id, w.profile.id, message).catch(() => {});
      }
    });
    if (failed.length) {
      throw new PairsFailed(failed, cause);
    }
  } finally {
    summary.ms = Date.now() - started;
    await close().catch(() => {});
  }
  return summary;
}

/** The message's rules that are still active, with their bundles (profiles) and channels. */
async function loadActiveRules(db: Db, ids: string[]): Promise<Map<string, Rule>> {
  if (!ids.length) {
    return new Map();
  }
  const [rows, bundles, channels] = await Promise.all([
    db
      .select({ rule: alertRules, map: { id: maps.id, mapId: maps.mapId, name: maps.name } })
      .from(alertRules)
      .innerJoin(maps, eq(maps.id, alertRules.mapId))
      .where(and(inArray(alertRules.id, ids), eq(alertRules.isActive, true))),
    db
      .select({ ruleId: alertRuleProfiles.alertRuleId, profile: thresholdProfiles })
      .from(alertRuleProfiles)
      .innerJoin(thresholdProfiles, eq(thresholdProfiles.id, alertRuleProfiles.thresholdProfileId))
      .where(inArray(alertRuleProfiles.alertRuleId, ids))
      .orderBy(asc(alertRuleProfiles.ordinal)),
    db.select().from(alertRuleChannels).where(inArray(alertRuleChannels.alertRuleId, ids)),
  ]);
  return new Map(
    rows.map(({ rule, map }) => [
      rule.id,
      {
        ...rule,
        map,
        profiles: bundles.filter((b) => b.ruleId === rule.id).map((b) => b.profile),
        channelIds: channels.filter((c) => c.alertRuleId === rule.id).map((c) => c.channelId),
      },
    ]),
  );
}

/** The newest run each pair of these rules was recorded for (ms), keyed `${ruleId}:${profileId}`. */
async function recordedRuns(db: Db, ruleIds: string[]): Promise<Map<string, number>> {
  const s = alertPairStates;
  const rows = await db
    .select({ ruleId: s.alertRuleId, profileId: s.thresholdProfileId, runAt: s.runAt })
    .from(s)
    .where(inArray(s.alertRuleId, ruleIds));
  return new Map(rows.map((r) => [pairKey(r.ruleId, r.profileId), r.runAt.getTime()]));
}

function scopeOf(ctx: Ctx, rule: Rule, profile: Profile): CellScope {
  return {
    projectId: rule.projectId,
    mapId: rule.map.mapId,
    window: windowOf(rule.evaluationDays, ctx.now.getTime()),
    cellSize: rule.cellSize,
    filters: {
      platform: profile.platform,
      resolution: profile.resolution,
      buildConfig: profile.buildConfig,
      gpu: profile.gpu,
      storage: profile.storage,
    },
  };
}

function scopeKey(scope: CellScope): string {
  const f = scope.filters;
  return JSON.stringify([
    scope.projectId,
    scope.mapId,
    scope.window.from,
    scope.cellSize,
    f.platform,
    f.resolution,
    f.buildConfig,
    f.gpu,
    f.storage,
  ]);
}

const pairQuery = (w: Work, threshold: number): PairQuery & { work: Work } => ({
  ...w.scope,
  key: pairKey(w.rule.id, w.profile.id),
  work: w,
  metric: w.rule.metric,
  threshold,
});

function statusOf(rule: Rule, counts: { failCount: number; totalCount: number }): AlertStatus {
  // No evaluated cells: nothing fails, so the pair is resolved at 0 of 0.
  const failPercentage = counts.totalCount ? (counts.failCount / counts.totalCount) * 100 : 0;
  return failPercentage > rule.failPercentage ? "triggered" : "resolved";
}

/**
 * The judgements of every pair of the message on this pair's project and map, read once for them all
 * (judgeScopeGroup); the failing shares only for the pairs that change to triggered as the message
 * started (the only ones that record worst cells).
 */
function judgedPairs(ctx: Ctx, w: Work): Promise<Map<string, CellJudgement>> {
  const key = JSON.stringify([w.rule.projectId, w.rule.map.mapId]);
  let judged = ctx.judged.get(key);
  if (!judged) {
    const pairs: Array<PairQuery & { work: Work }> = [];
    for (const o of ctx.work) {
      if (o.rule.projectId !== w.rule.projectId || o.rule.map.mapId !== w.rule.map.mapId) {
        continue;
      }
      const threshold = thresholdOf(o.profile, o.rule.metric, o.rule.thresholdLevel);
      if (threshold !== null) {
        pairs.push(pairQuery(o, threshold));
      }
    }
    judged = judgeScopeGroup(
      ctx.ch,
      pairs,
      (p, counts) =>
        statusOf(p.work.rule, counts) === "triggered" && ctx.latest.get(p.key)?.status !== "triggered",
    );
    // A failed read fails every pair of the group that awaits it; the message is retried.
    judged.catch(() => {});
    ctx.judged.set(key, judged);
  }
  return judged;
}

/** Phase one: the pair's cells judged (ClickHouse; the message's pairs of one map read at once). */
async function judge(ctx: Ctx, w: Work, threshold: number): Promise<Judged> {
  const key = pairKey(w.rule.id, w.profile.id);
  const judged = (await judgedPairs(ctx, w)).get(key);
  if (!judged) {
    throw new Error(`pair ${key} was not judged`);
  }
  const { worst, ...counts } = judged;
  const failPercentage = counts.totalCount ? (counts.failCount / counts.totalCount) * 100 : 0;
  const status = statusOf(w.rule, counts);
  const shares = status === "triggered" && ctx.latest.get(key)?.status !== "triggered";
  return { status, counts, failPercentage, threshold, worst, shares };
}

/** The scope as judged, so the event's links hold even after the rule changes; a resolved pair lists no cells. */
async function worstRecord(ctx: Ctx, w: Work, j: Judged): Promise<WorstCellsRecord> {
  const { rule } = w;
  let cells: CellJudgement["worst"] = [];
  if (j.status === "triggered") {
    // The shares were read with the group unless another run changed the status since the message
    // started: then this pair's are read now, on their own.
    cells = j.shares ? j.worst : (await judgeScope(ctx.ch, pairQuery(w, j.threshold))).worst;
  }
  return { mapId: rule.map.mapId, days: rule.evaluationDays, cellSize: rule.cellSize, cells };
}

async function evaluatePair(ctx: Ctx, w: Work): Promise<void> {
  const { rule, profile } = w;
  const threshold = thresholdOf(profile, rule.metric, rule.thresholdLevel);
  if (threshold === null) {
    // Validation forbids it, but a profile edited afterwards may have dropped the threshold: retrying
    // cannot help, so the pair records the error (the rule shows it) and the message goes on.
    await recordError(
      ctx.db,
      rule.id,
      profile.id,
      ctx.run.runAt,
      `profile ${profile.id} defines no ${rule.metric} ${rule.thresholdLevel} threshold`,
    );
    ctx.summary.errors++;
    return;
  }
  const j = await judge(ctx, w, threshold);
  // Read ahead of the lock, the usual case: the newest event's status as the message started.
  const changedAhead = ctx.latest.get(pairKey(rule.id, profile.id))?.status !== j.status;
  const ahead = changedAhead ? await worstRecord(ctx, w, j) : null;
  const eventId = await runEventId(rule.id, profile.id, ctx.run.runAt);
  const outcome = await ctx.db.transaction((tx) => record(ctx, tx, w, j, ahead, eventId));
  if (outcome === "stale") {
    ctx.summary.skipped++;
    return;
  }
  ctx.summary.evaluated++;
  if (outcome !== "same") {
    ctx.summary.changed++;
    if (outcome === "notified") {
      ctx.summary.notified++;
      await flushEvents(ctx.env, ctx.db, [eventId]);
    }
  }
  ctx.recorded++;
  const limit = ctx.run.throwAfterPairs;
  if (limit != null && ctx.recorded >= limit) {
    throw new InjectedFault(`fault injection: consumer stops after ${limit} pair(s)`);
  }
}

/**
 * Phase two, in one transaction holding the pair's state row: records the run on the pair and, when
 * the status changed, the event with its outbox.
 */
async function record(
  ctx: Ctx,
  tx: Tx,
  w: Work,
  j: Judged,
  ahead: WorstCellsRecord | null,
  eventId: string,
): Promise<"stale" | "same" | "changed" | "notified"> {
  const { rule, profile } = w;
  const s = alertPairStates;
  const pair = and(eq(s.alertRuleId, rule.id), eq(s.thresholdProfileId, profile.id));
  // A first evaluation inserts the row (a concurrent one waits here for ours), then the row is locked.
  await tx
    .insert(s)
    .values({
      alertRuleId: rule.id,
      thresholdProfileId: profile.id,
      runAt: new Date(0),
      evaluatedAt: new Date(),
      result: j.status,
    })
    .onConflictDoNothing();
  const [state] = await tx.select({ runAt: s.runAt }).from(s).where(pair).for("update");
  if (state && state.runAt.getTime() >= ctx.run.runAt) {
    return "stale";
  }
  const e = alertEvaluationEvents;
  const [last] = await tx
    .select({ status: e.status })
    .from(e)
    .where(and(eq(e.alertRuleId, rule.id), eq(e.evaluatedProfileId, profile.id)))
    .orderBy(desc(e.createdAt), desc(e.id))
    .limit(1);
  let outcome: "same" | "changed" | "notified" = "same";
  if (last?.status !== j.status) {
    // Another run changed the status since the message started: its worst cells are read now.
    const worstCells = ahead ?? (await worstRecord(ctx, w, j));
    const pending =
      j.status === "triggered" ? await claimNotifications(ctx, w, j, eventId, worstCells) : null;
    await tx
      .insert(e)
      .values({
        id: eventId,
        projectId: rule.projectId,
        alertRuleId: rule.id,
        evaluatedProfileId: profile.id,
        thresholdProfileId: profile.id,
        thresholdProfileName: profile.name,
        ruleName: rule.name,
        metric: rule.metric,
        status: j.status,
        ...j.counts,
        failPercentage: j.failPercentage,
        notified: pending !== null,
        worstCells,
        runAt: ctx.now,
        pendingNotifications: pending && JSON.stringify(pending),
      })
      .onConflictDoNothing();
    outcome = pending ? "notified" : "changed";
  }
  await tx
    .update(s)
    .set({
      runAt: ctx.now,
      evaluatedAt: new Date(),
      result: j.status,
      ...j.counts,
      failPercentage: j.failPercentage,
      error: null,
    })
    .where(pair);
  return outcome;
}

/**
 * The notification messages of a change to triggered, if the pair's cooldown allows: one per channel.
 * The claim is keyed by the event id, so claiming again for the same event returns the first answer.
 */
async function claimNotifications(
  ctx: Ctx,
  w: Work,
  j: Judged,
  eventId: string,
  record: WorstCellsRecord,
): Promise<NotificationMessage[] | null> {
  const { rule, profile } = w;
  if (!rule.channelIds.length) {
    return null;
  }
  const cooldown = ctx.env.ALERT_COOLDOWN.get(
    ctx.env.ALERT_COOLDOWN.idFromName(pairKey(rule.id, profile.id)),
  );
  const claim = await cooldown.claim(rule.cooldownMinutes, ctx.now.getTime(), eventId);
  if (!claim.allowed) {
    return null;
  }
  const metric = rule.metric;
  const alert: AlertNotification = {
    type: "alert.triggered",
    eventId,
    createdAt: ctx.now.toISOString(),
    projectId: rule.projectId,
    rule: {
      id: rule.id,
      name: rule.name,
      metric,
      thresholdLevel: rule.thresholdLevel,
      failPercentage: rule.failPercentage,
      evaluationDays: rule.evaluationDays,
      cellSize: rule.cellSize,
    },
    thresholdProfile: { id: profile.id, name: profile.name, threshold: j.threshold },
    map: rule.map,
    result: { status: "triggered", ...j.counts, failPercentage: j.failPercentage },
    ...linked({ origin: ctx.origin, projectId: rule.projectId, metric, profileId: profile.id, record }),
  };
  return rule.channelIds.map((channelId) => ({ v: 1, channelId, alert }));
}

/** Hands the rules' pending notifications to the notifications queue (see flushEvents). */
async function flushOutbox(env: Env, db: Db, ruleIds: string[]): Promise<void> {
  if (!ruleIds.length) {
    return;
  }
  const e = alertEvaluationEvents;
  const rows = await db
    .select({ id: e.id })
    .from(e)
    .where(and(inArray(e.alertRuleId, ruleIds), isNotNull(e.pendingNotifications)));
  if (rows.length) {
    await flushEvents(
      env,
      db,
      rows.map((r) => r.id),
    );
  }
}

/**
 * Sends these events' pending notifications and clears them. Dying between the send and the clear
 * sends them again later; the delivery side then posts each (event, channel) once.
 */
async function flushEvents(env: Env, db: Db, eventIds: string[]): Promise<void> {
  const e = alertEvaluationEvents;
  const rows = await db
    .select({ id: e.id, pending: e.pendingNotifications })
    .from(e)
    .where(and(inArray(e.id, eventIds), isNotNull(e.pendingNotifications)));
  for (const row of rows) {
    const messages = JSON.parse(row.pending ?? "[]") as NotificationMessage[];
    if (messages.length) {
      await env.NOTIFICATIONS_QUEUE.sendBatch(
        messages.map((body) => ({ body, contentType: "json" as const })),
      );
    }
    await db.update(e).set({ pendingNotifications: null }).where(eq(e.id, row.id));
  }
}

/** A pair that cannot be evaluated for this run: "error" on its state (only moving the run forward). */
export async function recordError(
  db: Db,
  ruleId: string,
  profileId: string,
  runAt: number,
  error: string,
  /** Dead-lettered: append the cause the failed attempts noted on the pair (noteFailure). */
  withCause = false,
): Promise<void> {
  const s = alertPairStates;
  const at = new Date(runAt);
  await db
    .insert(s)
    .values({
      alertRuleId: ruleId,
      thresholdProfileId: profileId,
      runAt: at,
      evaluatedAt: new Date(),
      result: "error",
      error,
    })
    .onConflictDoUpdate({
      target: [s.alertRuleId, s.thresholdProfileId],
      set: {
        runAt: at,
        evaluatedAt: new Date(),
        result: "error",
        error: withCause ? sql`${error} || coalesce(': ' || ${s.error}, '')` : error,
      },
      setWhere: lt(s.runAt, at),
    });
}

/** A failed attempt: the error is kept on the pair (its result and run stay the last recorded ones). */
async function noteFailure(db: Db, ruleId: string, profileId: string, error: string): Promise<void> {
  const s = alertPairStates;
  await db
    .update(s)
    .set({ error })
    .where(and(eq(s.alertRuleId, ruleId), eq(s.thresholdProfileId, profileId)));
}

/** The event id of (rule, profile, run): the same on every delivery of the run's message. */
export async function runEventId(ruleId: string, profileId: string, runAt: number): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${ruleId}:${profileId}:${runAt}`)),
  );
  // The UUID layout with version 8 (vendor-specific) and the RFC 9562 variant.
  digest[6] = ((digest[6] as number) & 0x0f) | 0x80;
  digest[8] = ((digest[8] as number) & 0x3f) | 0x80;
  const hex = [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

async function forEachLimited<T>(
  items: T[],
  limit: number,
  ctx: { aborted: boolean },
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length && !ctx.aborted) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
