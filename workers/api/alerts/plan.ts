// The cron's share of alert evaluation: read the active (rule, profile) pairs from Postgres and send
// them to the jobs queue, pairs that share cells in one message. It reads no events: its cost grows
// with the number of rules, not with the data. The consumer (consume.ts) evaluates each message.
import { asc, eq } from "drizzle-orm";
import { alertRuleProfiles, alertRules, thresholdProfiles } from "../../../schema/pg/schema.js";
import { configOf } from "../../shared/config.js";
import { type Db, openDb } from "../db.js";
import type { AlertPairsJob, BuildsJob, PairRef } from "../jobs.js";

/** Sends the run's build judging to the jobs queue. */
export async function planBuilds(env: Env, now: Date): Promise<void> {
  const body: BuildsJob = { v: 1, kind: "builds", runAt: now.getTime() };
  await env.JOBS_QUEUE.send(body, { contentType: "json" });
}

/**
 * The bound of one message's work: at most this many pairs, of at most MAX_SCOPES_PER_MESSAGE scopes.
 * The consumer reads a message's cells per map: the means once per cell size on the rollup (sizes 25
 * and 50; per window and four profiles on the samples, sizes 5 and 10), the failing shares once. A
 * message therefore holds a map's pairs whole where they fit, so that map's cells are read by one
 * message, not once per message holding a piece of it; a map with more pairs or scopes than this is
 * split over messages (each piece reads the map's cells once).
 */
export const MAX_PAIRS_PER_MESSAGE = 400;
export const MAX_SCOPES_PER_MESSAGE = 96;

/** Queues' sendBatch limits: 100 messages and 256 KB per call; we keep well under the bytes. */
const SEND_BATCH_MESSAGES = 100;
const SEND_BATCH_BYTES = 192 * 1024;

export type PlanSummary = {
  runAt: number;
  pairs: number;
  scopes: number;
  messages: number;
  sendBatches: number;
  /** Wall time of the planning query and packing, and of the whole plan including sending. */
  planMs: number;
  ms: number;
};

type PlannedPair = {
  projectId: string;
  ruleId: string;
  profileId: string;
  /** The map whose cells the consumer reads together. */
  group: string;
  scope: string;
};

/**
 * Every active pair, in one query: the rule's scope (map, window days, cell size) and the profile's
 * device filters make its scope key. Ordered, so the same rules always pack the same way.
 */
export async function activePairs(db: Db): Promise<PlannedPair[]> {
  const p = thresholdProfiles;
  const rows = await db
    .select({
      projectId: alertRules.projectId,
      ruleId: alertRules.id,
      profileId: p.id,
      mapId: alertRules.mapId,
      days: alertRules.evaluationDays,
      cellSize: alertRules.cellSize,
      platform: p.platform,
      resolution: p.resolution,
      buildConfig: p.buildConfig,
      gpu: p.gpu,
      storage: p.storage,
    })
    .from(alertRules)
    .innerJoin(alertRuleProfiles, eq(alertRuleProfiles.alertRuleId, alertRules.id))
    .innerJoin(p, eq(p.id, alertRuleProfiles.thresholdProfileId))
    .where(eq(alertRules.isActive, true))
    .orderBy(asc(alertRules.projectId), asc(alertRules.id), asc(alertRuleProfiles.ordinal));
  return rows.map((r) => ({
    projectId: r.projectId,
    ruleId: r.ruleId,
    profileId: r.profileId,
    group: r.mapId,
    scope: JSON.stringify([
      r.mapId,
      r.cellSize,
      r.days,
      r.platform,
      r.resolution,
      r.buildConfig,
      r.gpu,
      r.storage,
    ]),
  }));
}

/**
 * Packs pairs into messages: per project, a message takes scopes until it holds MAX_PAIRS_PER_MESSAGE
 * pairs or MAX_SCOPES_PER_MESSAGE scopes. A scope that fits in one message stays whole; a larger one is
 * cut into pieces that fill messages (each piece reads the scope's cells once).
 */
export function packMessages(pairs: PlannedPair[], runAt: number): AlertPairsJob[] {
  const byProject = new Map<string, Map<string, PairRef[]>>();
  const groupOf = new Map<string, string>();
  for (const p of pairs) {
    groupOf.set(p.scope, p.group);
    let scopes = byProject.get(p.projectId);
    if (!scopes) {
      scopes = new Map();
      byProject.set(p.projectId, scopes);
    }
    let refs = scopes.get(p.scope);
    if (!refs) {
      refs = [];
      scopes.set(p.scope, refs);
    }
    refs.push([p.ruleId, p.profileId]);
  }
  const messages: AlertPairsJob[] = [];
  for (const [projectId, scopes] of byProject) {
    let current: AlertPairsJob | null = null;
    let scopeCount = 0;
    // Same map next to each other (the scope key starts with it, then the cell size): a message's
    // scopes then share the map's reads.
    const keys = [...scopes.keys()].sort();
    for (const [g, key] of keys.entries()) {
      const group = groupOf.get(key);
      if (current && (g === 0 || groupOf.get(keys[g - 1] as string) !== group)) {
        // A new map that would not fit the rest of the current message but fits one of its own
        // starts one, so it is read by one message.
        const inGroup = keys.filter((k) => groupOf.get(k) === group);
        const pairsIn = inGroup.reduce((n, k) => n + (scopes.get(k) as PairRef[]).length, 0);
        const fitsHere =
          current.pairs.length + pairsIn <= MAX_PAIRS_PER_MESSAGE &&
          scopeCount + inGroup.length <= MAX_SCOPES_PER_MESSAGE;
        const fitsAlone = pairsIn <= MAX_PAIRS_PER_MESSAGE && inGroup.length <= MAX_SCOPES_PER_MESSAGE;
        if (!fitsHere && fitsAlone) {
          current = null;
        }
      }
      let refs = scopes.get(key) as PairRef[];
      while (refs.length) {
        const room: number = current ? MAX_PAIRS_PER_MESSAGE - current.pairs.length : 0;
        // A scope that fits in a message of its own is not split; a larger one tops up the current one.
        const fresh =
          !current ||
          room === 0 ||
          scopeCount >= MAX_SCOPES_PER_MESSAGE ||
          (refs.length > room && refs.length <= MAX_PAIRS_PER_MESSAGE);
        if (fresh || !current) {
          current = { v: 1, kind: "alert-pairs", runAt, projectId, pairs: [] };
          messages.push(current);
          scopeCount = 0;
        }
        const take = Math.min(refs.length, MAX_PAIRS_PER_MESSAGE - current.pairs.length);
        current.pairs.push(...refs.slice(0, take));
        refs = refs.slice(take);
        scopeCount++;
      }
    }
  }
  return messages;
}

/** The run's messages from Postgres alone; nothing is sent. */
export async function planMessages(
  db: Db,
  runAt: number,
): Promise<{ messages: AlertPairsJob[]; scopes: number }> {
  const pairs = await activePairs(db);
  const scopes = new Set(pairs.map((p) => `${p.projectId}|${p.scope}`)).size;
  return { messages: packMessages(pairs, runAt), scopes };
}

/** Splits messages into sendBatch calls within the platform's limits (count and bytes). */
export function sendBatches(messages: AlertPairsJob[]): AlertPairsJob[][] {
  const batches: AlertPairsJob[][] = [];
  let current: AlertPairsJob[] = [];
  let bytes = 0;
  for (const m of messages) {
    const size = JSON.stringify(m).length + 64;
    if (current.length && (current.length >= SEND_BATCH_MESSAGES || bytes + size > SEND_BATCH_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(m);
    bytes += size;
  }
  if (current.length) {
    batches.push(current);
  }
  return batches;
}

/**
 * The cron run: plans the scheduled run `now` and hands its messages to the jobs queue. Two planners
 * of the same run (a retried invocation) send the same messages twice; the consumer's run key makes the
 * second copy change nothing. A failed send throws: the invocation fails and is visible as such.
 */
export async function planAlerts(env: Env, now: Date): Promise<PlanSummary> {
  const started = Date.now();
  const { db, close } = openDb(configOf(env));
  const runAt = now.getTime();
  let planned: Awaited<ReturnType<typeof planMessages>>;
  try {
    planned = await planMessages(db, runAt);
  } finally {
    await close().catch(() => {});
  }
  const planMs = Date.now() - started;
  const batches = sendBatches(planned.messages);
  for (const batch of batches) {
    await env.JOBS_QUEUE.sendBatch(batch.map((body) => ({ body, contentType: "json" as const })));
  }
  const summary: PlanSummary = {
    runAt,
    pairs: planned.messages.reduce((n, m) => n + m.pairs.length, 0),
    scopes: planned.scopes,
    messages: planned.messages.length,
    sendBatches: batches.length,
    planMs,
    ms: Date.now() - started,
  };
  console.log("alert plan", JSON.stringify(summary));
  return summary;
}
