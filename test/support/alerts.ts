import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  env,
  getQueueResult,
} from "cloudflare:test";
import { and, gte, inArray } from "drizzle-orm";
import { expect, inject } from "vitest";
import { alertPairStates } from "../../schema/pg/schema.js";
import { activePairs } from "../../workers/api/alerts/plan.js";
import worker from "../../workers/api/index.js";
import type { BuildsJob } from "../../workers/api/jobs.js";
import { QUEUES } from "../../workers/shared/queues.js";
import { withDb } from "./harness.js";
import { type Auth, api } from "./http.js";
import { waitFor } from "./wait.js";

export async function json<T>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return (JSON.parse(text) as { data: T }).data;
}

export function send(path: string, auth: Auth, method: string, body?: unknown): Promise<Response> {
  return api(path, auth, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/**
 * One cron run at `now` (ms; the run's clock: windows, cooldowns), through the Worker's own scheduled
 * handler, which only plans: then waits until the jobs queue's consumer has recorded every pair that
 * was active before the run for it (or a newer run), or the pair is gone.
 */
export async function runScheduled(now = Date.now()): Promise<void> {
  const before = await withDb(activePairs);
  const controller = createScheduledController({ scheduledTime: now, cron: "*/5 * * * *" });
  await worker.scheduled(controller, env);
  await waitForRun(now, before);
}

/** Until every pair of `pairs` still active is recorded for run `runAt` or a newer one. */
export async function waitForRun(
  runAt: number,
  pairs: Array<{ ruleId: string; profileId: string }>,
  timeoutMs = 60_000,
): Promise<void> {
  if (!pairs.length) {
    return;
  }
  const ruleIds = [...new Set(pairs.map((p) => p.ruleId))];
  await waitFor(
    () =>
      withDb(async (db) => {
        const s = alertPairStates;
        const [active, done] = await Promise.all([
          activePairs(db),
          db
            .select({ ruleId: s.alertRuleId, profileId: s.thresholdProfileId })
            .from(s)
            .where(and(inArray(s.alertRuleId, ruleIds), gte(s.runAt, new Date(runAt)))),
        ]);
        const live = new Set(active.map((p) => `${p.ruleId}:${p.profileId}`));
        const recorded = new Set(done.map((p) => `${p.ruleId}:${p.profileId}`));
        return pairs.filter(
          (p) => live.has(`${p.ruleId}:${p.profileId}`) && !recorded.has(`${p.ruleId}:${p.profileId}`),
        ).length;
      }),
    (missing) => missing === 0,
    { timeoutMs, intervalMs: 200, message: (n) => `${String(n)} pair(s) of run ${runAt} recorded` },
  );
}

export const hookUrl = (path: string) => `${inject("hookUrl")}${path}`;

export type Received = { path: string; headers: Record<string, string>; body: string; at: number };

export async function received(path: string): Promise<Received[]> {
  const res = await fetch(`${inject("hookUrl")}/received?path=${encodeURIComponent(path)}`);
  return (await res.json()) as Received[];
}

/** Waits until the receiver has at least `n` deliveries on `path` (the queue consumer runs on its own). */
export function waitForDeliveries(path: string, n: number, timeoutMs = 20_000): Promise<Received[]> {
  return waitFor(
    () => received(path),
    (got) => got.length >= n,
    { timeoutMs, intervalMs: 200, message: `${n} deliveries on ${path}` },
  );
}

/**
 * The build-judging message a cron run at `runAt` sends (scheduled() → planBuilds), handed to the alerts
 * queue's consumer and awaited: the verdicts and their notifications are done when this returns.
 */
export async function judgeBuildsOfRun(runAt: number): Promise<void> {
  const body: BuildsJob = { v: 1, kind: "builds", runAt };
  const batch = createMessageBatch(QUEUES.jobs.name, [
    { id: `builds-${runAt}`, timestamp: new Date(runAt), attempts: 1, body },
  ]);
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  const result = (await getQueueResult(batch, ctx)) as unknown as { explicitAcks: string[] };
  expect(result.explicitAcks).toEqual([`builds-${runAt}`]);
}
