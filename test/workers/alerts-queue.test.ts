import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  env,
  getQueueResult,
} from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import {
  alertEvaluationEvents,
  alertRuleProfiles,
  alertRules,
  maps,
  projects,
  tenants,
  thresholdProfiles,
} from "../../schema/pg/schema.js";
import { faultOf } from "../../workers/api/alerts/consume.js";
import type { NotificationMessage } from "../../workers/api/alerts/notification.js";
import {
  MAX_PAIRS_PER_MESSAGE,
  MAX_SCOPES_PER_MESSAGE,
  planMessages,
  sendBatches,
} from "../../workers/api/alerts/plan.js";
import worker from "../../workers/api/index.js";
import { type AlertPairsJob, JobMessage } from "../../workers/api/jobs.js";
import { QUEUES } from "../../workers/shared/queues.js";
import { hookUrl, json, received, send, waitForDeliveries, waitForRun } from "../support/alerts.js";
import { batch, event, perf } from "../support/batches.js";
import { once, seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, ingest } from "../support/http.js";
import { knobs } from "../support/knobs.js";
import { insertMap, insertProfile } from "../support/records.js";
import type { Ok, OkBody } from "../support/schema.js";
import { waitFor } from "../support/wait.js";

// The jobs queue's alert pairs (workers/api/jobs.ts, alerts/plan.ts, consume.ts, evaluate.ts): the cron plans, the queue's
// consumer evaluates, and every effect happens once per (rule, profile, scheduled run) however the
// messages arrive: twice, after a consumer died halfway, from overlapping runs, after a dependency
// was down.

const MAP = "queue-arena";
const CLOSED_DB = "postgres://nobody:nothing@127.0.0.1:1/telemetry";
const CLOSED_CH = "http://127.0.0.1:1";
/**
 * The runs these tests deliver by hand are a day ahead (rules look back 3 days, so today's events
 * count): other test files' cron runs (a cooldown test runs an hour ahead) never outrun them.
 */
const AHEAD = () => Date.now() + 86_400_000;

type Arena = { t: Tenant; mapRowId: string; everyone: string; windows: string };

/** A studio whose map runs badly everywhere: every rule on it triggers for both profiles. */
const arena = once(async (): Promise<Arena> => {
  const t = await seedTenant("studio", "Alert Queue Studio");
  const a: Arena = {
    t,
    mapRowId: await insertMap(t.projectId, MAP, { name: "Queue Arena" }),
    everyone: await insertProfile(t.projectId, { name: "Everyone", fpsWarn: 30 }),
    windows: await insertProfile(t.projectId, { name: "Windows", platform: "windows", fpsWarn: 30 }),
  };
  const events = Array.from({ length: 40 }, (_, i) =>
    event(i, {
      mapId: MAP,
      position: { x: (i % 8) * 10 + 1, y: Math.floor(i / 8) * 10 + 1, z: 0 },
      ...perf({ fps: 12 }),
    }),
  );
  const res = await ingest(batch(events), t.keys.ingest.key);
  expect(res.status).toBe(202);
  await waitFor(
    async () => {
      const r = await api(`/v1/projects/${t.projectId}/status?fresh=1`, { key: t.keys.read.key });
      return ((await r.json()) as OkBody<"/v1/projects/{id}/status">).data.kpis.totalEvents;
    },
    (n) => n >= events.length,
    { intervalMs: 250, message: "events stored" },
  );
  return a;
});

type Setup = {
  a: Arena;
  ruleId: string;
  hookPath: string;
  channelId: string;
  pairs: Array<{ ruleId: string; profileId: string }>;
};

/** A rule of its own on the arena (cooldown 0: every change notifies) with a webhook of its own. */
async function setup(name: string): Promise<Setup> {
  const a = await arena();
  const w = { key: a.t.keys.readwrite.key };
  const hookPath = `/hook/queue-${crypto.randomUUID()}`;
  const hook = await json<Ok<"/v1/projects/{id}/channels", "post">>(
    await send(`/v1/projects/${a.t.projectId}/channels`, w, "POST", {
      kind: "webhook",
      name,
      url: hookUrl(hookPath),
    }),
    201,
  );
  const rule = await json<Ok<"/v1/projects/{id}/alerts", "post">>(
    await send(`/v1/projects/${a.t.projectId}/alerts`, w, "POST", {
      name,
      mapId: a.mapRowId,
      thresholdProfileIds: [a.everyone, a.windows],
      metric: "fps",
      thresholdLevel: "warn",
      failPercentage: 10,
      evaluationDays: 3,
      cellSize: 10,
      cooldownMinutes: 0,
      channelIds: [hook.id],
    }),
    201,
  );
  return {
    a,
    ruleId: rule.id,
    hookPath,
    channelId: hook.id,
    pairs: [a.everyone, a.windows].map((profileId) => ({ ruleId: rule.id, profileId })),
  };
}

function messageOf(s: Setup, runAt: number): AlertPairsJob {
  return {
    v: 1,
    kind: "alert-pairs",
    runAt,
    projectId: s.a.t.projectId,
    pairs: s.pairs.map((p) => [p.ruleId, p.profileId]),
  };
}

type QueueResult = { explicitAcks: string[]; retryMessages: Array<{ msgId: string }> };

/** One delivery of `body` to the jobs queue's consumer (the Worker's own queue handler). */
async function deliver(
  body: unknown,
  { attempts = 1, id = "m-1", overrides = {}, queue = QUEUES.jobs.name } = {} as {
    attempts?: number;
    id?: string;
    overrides?: Record<string, unknown>;
    queue?: string;
  },
): Promise<QueueResult> {
  const b = createMessageBatch(queue, [{ id, timestamp: new Date(), attempts, body }]);
  const ctx = createExecutionContext();
  await worker.queue(b, { ...env, ...overrides } as Env);
  return (await getQueueResult(b, ctx)) as unknown as QueueResult;
}

type Row = {
  id: string;
  profileId: string;
  status: string;
  notified: boolean;
  runAt: Date | null;
  pending: string | null;
};

async function events(ruleId: string): Promise<Row[]> {
  const e = alertEvaluationEvents;
  return withDb((db) =>
    db
      .select({
        id: e.id,
        profileId: e.evaluatedProfileId,
        status: e.status,
        notified: e.notified,
        runAt: e.runAt,
        pending: e.pendingNotifications,
      })
      .from(e)
      .where(eq(e.alertRuleId, ruleId)),
  );
}

/**
 * The deliveries on the rule's webhook, by event id, once everything queued before has been delivered:
 * a barrier notification on the same channel, sent last, must have arrived.
 */
async function deliveriesById(s: Setup, expected: number): Promise<Map<string, number>> {
  await waitForDeliveries(s.hookPath, expected);
  const barrier = crypto.randomUUID();
  const message: NotificationMessage = {
    v: 1,
    channelId: s.channelId,
    alert: {
      type: "alert.triggered",
      eventId: barrier,
      createdAt: new Date().toISOString(),
      projectId: s.a.t.projectId,
      rule: {
        id: s.ruleId,
        name: "barrier",
        metric: "fps",
        thresholdLevel: "warn",
        failPercentage: 10,
        evaluationDays: 1,
        cellSize: 10,
      },
      thresholdProfile: { id: s.a.everyone, name: "Everyone", threshold: 30 },
      map: { id: s.a.mapRowId, mapId: MAP, name: "Queue Arena" },
      result: { status: "triggered", failCount: 1, totalCount: 1, failPercentage: 100 },
    },
  };
  await env.NOTIFICATIONS_QUEUE.send(message, { contentType: "json" });
  const all = await waitFor(
    () => received(s.hookPath),
    (got) => got.some((d) => d.headers["x-telemetry-delivery"] === barrier),
    { timeoutMs: 20_000, intervalMs: 200, message: "the barrier notification" },
  );
  const counts = new Map<string, number>();
  for (const d of all) {
    const id = d.headers["x-telemetry-delivery"] as string;
    if (id !== barrier) {
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  }
  return counts;
}

/** Each pair has exactly one event, triggered and notified, of run `runAt` (null: any); each posted exactly once. */
async function expectOnce(s: Setup, runAt: number | null): Promise<void> {
  const rows = await events(s.ruleId);
  expect(
    rows
      .map((r) => [
        r.profileId,
        r.status,
        r.notified,
        runAt === null || r.runAt?.getTime() === runAt,
        r.pending,
      ])
      .sort(),
  ).toEqual([s.a.everyone, s.a.windows].sort().map((p) => [p, "triggered", true, true, null]));
  const counts = await deliveriesById(s, 2);
  expect(Object.fromEntries(counts)).toEqual(Object.fromEntries(rows.map((r) => [r.id, 1])));
}

describe("the jobs queue's message", () => {
  it("is read by one schema: every kind the cron sends, alert pairs without a kind as alert pairs, nothing else", () => {
    const pairs: [string, string][] = [["r", "p"]];
    const legacy = { v: 1, runAt: 5, projectId: "x", pairs };
    expect(JobMessage.parse(legacy)).toEqual({ ...legacy, kind: "alert-pairs" });
    expect(JobMessage.parse({ ...legacy, kind: "alert-pairs" })).toEqual({ ...legacy, kind: "alert-pairs" });
    expect(JobMessage.parse({ v: 1, kind: "builds", runAt: 5 })).toEqual({ v: 1, kind: "builds", runAt: 5 });
    const purge = { v: 1, kind: "purge", day: "2026-12-01", horizons: [{ id: "x", horizon: "2026-11-01" }] };
    expect(JobMessage.parse(purge)).toEqual(purge);
    const notice = { v: 1, kind: "sso-notice", runAt: 5 };
    expect(JobMessage.parse(notice)).toEqual(notice);
    for (const bad of [
      { ...legacy, kind: "other" },
      { ...legacy, v: 2 },
      { ...legacy, pairs: [["r"]] },
      { v: 1, kind: "builds" },
      { ...purge, horizons: [{ id: "x", horizon: "yesterday" }] },
      "text",
      null,
    ]) {
      expect(JobMessage.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});

describe("the alerts queue", () => {
  it("alert pairs sent before jobs carried a kind (in flight during a deploy) are evaluated; an unreadable job is dropped", async () => {
    const s = await setup("legacy");
    const runAt = AHEAD();
    const { kind: _, ...legacy } = messageOf(s, runAt);
    expect((await deliver(legacy)).explicitAcks).toEqual(["m-1"]);
    await expectOnce(s, runAt);
    const unreadable = await deliver({ ...legacy, kind: "evaluate" }, { id: "m-2" });
    expect([unreadable.explicitAcks, unreadable.retryMessages]).toEqual([["m-2"], []]);
  });

  it("a message delivered twice, one after the other and at once, records one event per pair and notifies once", async () => {
    const s = await setup("twice");
    const runAt = AHEAD();
    const m = messageOf(s, runAt);
    expect((await deliver(m)).explicitAcks).toEqual(["m-1"]);
    expect((await deliver(m, { id: "m-2" })).explicitAcks).toEqual(["m-2"]);
    const results = await Promise.all([deliver(m, { id: "m-3" }), deliver(m, { id: "m-4" })]);
    expect(results.flatMap((r) => r.explicitAcks).sort()).toEqual(["m-3", "m-4"]);
    await expectOnce(s, runAt);

    // The rule says when it was evaluated, and with what result.
    const rule = await json<Ok<"/v1/projects/{id}/alerts/{alertId}">>(
      await api(`/v1/projects/${s.a.t.projectId}/alerts/${s.ruleId}`, { key: s.a.t.keys.read.key }),
      200,
    );
    expect(rule.lastResult).toBe("triggered");
    // Recorded just now (the wall clock), for the run a day ahead.
    expect(Math.abs(Date.parse(rule.lastEvaluatedAt as string) - Date.now())).toBeLessThan(120_000);
    expect(rule.lastEvaluations.map((e) => [e.thresholdProfileId, e.runAt, e.result])).toEqual(
      [s.a.everyone, s.a.windows].map((p) => [p, new Date(runAt).toISOString(), "triggered"]),
    );
    expect(rule.lastEvaluations.every((e) => (e.failCount ?? 0) > 0)).toBe(true);
  });

  it("a consumer that dies halfway is retried and ends with every pair recorded once, notified once", async () => {
    const s = await setup("dies");
    const runAt = AHEAD();
    const m = messageOf(s, runAt);
    const faulty = knobs({ alertFaultThrowAfter: "1" });
    const first = await deliver(m, { overrides: faulty });
    expect(first.explicitAcks).toEqual([]);
    expect(first.retryMessages.map((r) => r.msgId)).toEqual(["m-1"]);
    const partial = await events(s.ruleId);
    expect(partial.length).toBeGreaterThanOrEqual(1);
    // The retry (attempt 2: the knob only breaks first deliveries) finishes the message.
    expect((await deliver(m, { attempts: 2, overrides: faulty })).explicitAcks).toEqual(["m-1"]);
    await expectOnce(s, runAt);
    // The knob is for local stacks and tests: without LOCAL_KNOBS (every deployed Worker) there is none.
    const probe = { attempts: 1, body: m };
    expect(faultOf({ ...env, ...faulty } as Env, probe)).toBe(1);
    expect(faultOf({ ...env, ...faulty, LOCAL_KNOBS: undefined } as Env, probe)).toBeNull();
    expect(
      faultOf({ ...env, ...knobs({ alertFaultThrowAfter: `2:${runAt + 1}` }) } as Env, probe),
    ).toBeNull();
    expect(faultOf({ ...env, ...knobs({ alertFaultThrowAfter: `2:${runAt}` }) } as Env, probe)).toBe(2);
  });

  it("notifications committed with their event but refused by the queue are sent by the retry, once", async () => {
    const s = await setup("outbox");
    const runAt = AHEAD();
    const m = messageOf(s, runAt);
    const refusing = {
      NOTIFICATIONS_QUEUE: {
        send: () => Promise.reject(new Error("queue unavailable")),
        sendBatch: () => Promise.reject(new Error("queue unavailable")),
      },
    };
    const first = await deliver(m, { overrides: refusing });
    expect(first.retryMessages.map((r) => r.msgId)).toEqual(["m-1"]);
    // The events are recorded with their notifications pending in the outbox; nothing was sent.
    const pending = await events(s.ruleId);
    expect(pending.map((r) => [r.status, r.notified, r.pending !== null])).toEqual([
      ["triggered", true, true],
      ["triggered", true, true],
    ]);
    expect(await received(s.hookPath)).toEqual([]);
    // The retry evaluates nothing again (the run is recorded) and hands the outbox over.
    expect((await deliver(m, { attempts: 2 })).explicitAcks).toEqual(["m-1"]);
    await expectOnce(s, runAt);
  });

  it("overlapping cron runs, through the real queue, record each change once and notify once", async () => {
    const s = await setup("overlap");
    const t0 = Date.now();
    const run = (at: number) =>
      worker.scheduled(createScheduledController({ scheduledTime: at, cron: "*/5 * * * *" }), env);
    // The same run twice at once (a retried invocation) and the next run while they are still going.
    await Promise.all([run(t0), run(t0), run(t0 + 1000)]);
    await waitForRun(t0 + 1000, s.pairs);
    // A later run, queued after all of them, as a barrier: the pairs' status holds, so it records none.
    await run(t0 + 2000);
    await waitForRun(t0 + 2000, s.pairs);
    const rows = await events(s.ruleId);
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => r.profileId))).toEqual(new Set([s.a.everyone, s.a.windows]));
    // Whichever run recorded a pair's change (another test file's cron run may too), it did so once.
    await expectOnce(s, null);
  });

  it("a down ClickHouse or Postgres retries the message, then the dead letter marks the pairs failed; the next run recovers", async () => {
    const s = await setup("down");
    const runAt = AHEAD();
    const m = messageOf(s, runAt);
    for (const overrides of [{ CLICKHOUSE_URL: CLOSED_CH }, { DATABASE_URL: CLOSED_DB }] as Record<
      string,
      string
    >[]) {
      const r = await deliver(m, { overrides, attempts: QUEUES.jobs.maxRetries + 1 });
      expect(r.explicitAcks).toEqual([]);
      expect(r.retryMessages.map((x) => x.msgId)).toEqual(["m-1"]);
    }
    expect(await events(s.ruleId)).toEqual([]);
    // Past max_retries the platform dead-letters it; the dead-letter consumer marks the run's pairs.
    expect((await deliver(m, { queue: QUEUES.jobsDeadLetter.name })).explicitAcks).toEqual(["m-1"]);
    const failed = await json<Ok<"/v1/projects/{id}/alerts/{alertId}">>(
      await api(`/v1/projects/${s.a.t.projectId}/alerts/${s.ruleId}`, { key: s.a.t.keys.read.key }),
      200,
    );
    expect(failed.lastResult).toBe("error");
    expect(failed.lastEvaluations.map((e) => [e.result, e.runAt])).toEqual([
      ["error", new Date(runAt).toISOString()],
      ["error", new Date(runAt).toISOString()],
    ]);
    expect(failed.lastEvaluations.every((e) => e.error?.includes("dead-lettered"))).toBe(true);
    expect(await events(s.ruleId)).toEqual([]);
    // A late healthy copy of the dead run changes nothing; the next run evaluates normally.
    expect((await deliver(m)).explicitAcks).toEqual(["m-1"]);
    expect(await events(s.ruleId)).toEqual([]);
    expect((await deliver(messageOf(s, runAt + 300_000))).explicitAcks).toEqual(["m-1"]);
    await expectOnce(s, runAt + 300_000);
  });

  it("plans 20,000 pairs (20 studios × 500 rules × 2 profiles) from Postgres alone, in bounded messages", async () => {
    const runAt = Date.now();
    const STUDIOS = 20;
    const RULES = 500;
    const scopeOfPair = new Map<string, string>();
    const measured = await withDb((db) =>
      db
        .transaction(async (tx) => {
          const mine: string[] = [];
          for (let i = 0; i < STUDIOS; i++) {
            const [tenant] = await tx
              .insert(tenants)
              .values({ name: `plan-${i}`, planId: "enterprise" })
              .returning({ id: tenants.id });
            const [project] = await tx
              .insert(projects)
              .values({ tenantId: tenant?.id as string, name: "p" })
              .returning({ id: projects.id });
            const projectId = project?.id as string;
            mine.push(projectId);
            const [map] = await tx
              .insert(maps)
              .values({
                projectId,
                mapId: "m",
                name: "m",
                imageKey: `maps/${projectId}/m`,
                imageContentType: "image/png",
                imageWidth: 512,
                imageHeight: 512,
                worldMinX: 0,
                worldMinY: 0,
                worldMaxX: 100,
                worldMaxY: 100,
              })
              .returning({ id: maps.id });
            const profiles = await tx
              .insert(thresholdProfiles)
              .values([
                { projectId, name: "all", fpsWarn: 30 },
                { projectId, name: "android", platform: "android", fpsWarn: 30 },
              ])
              .returning({ id: thresholdProfiles.id });
            const rules = await tx
              .insert(alertRules)
              .values(
                Array.from({ length: RULES }, (_, r) => ({
                  projectId,
                  name: `r${r}`,
                  mapId: map?.id as string,
                  metric: "fps" as const,
                  thresholdLevel: "warn" as const,
                  failPercentage: 1 + (r % 90),
                  evaluationDays: [1, 3, 7][r % 3] as number,
                  cellSize: [5, 10, 25, 50][r % 4] as number,
                  cooldownMinutes: 60,
                })),
              )
              .returning({ id: alertRules.id });
            await tx.insert(alertRuleProfiles).values(
              rules.flatMap((rule, r) =>
                profiles.map((p, ordinal) => {
                  scopeOfPair.set(`${rule.id}:${p.id}`, `${projectId}|${r % 3}|${r % 4}|${ordinal}`);
                  return { alertRuleId: rule.id, thresholdProfileId: p.id, ordinal };
                }),
              ),
            );
          }
          const started = performance.now();
          const planned = await planMessages(tx, runAt);
          const batches = sendBatches(planned.messages);
          const ms = performance.now() - started;
          const messages = planned.messages.filter((m) => mine.includes(m.projectId));
          throw new Rollback({
            ms,
            messages,
            batches: batches.map((b) => b.length),
            sizes: batches.map(bytesOf),
          });
        })
        .catch((err: unknown) => {
          if (err instanceof Rollback) {
            return err.result;
          }
          throw err;
        }),
    );
    const { ms, messages, batches, sizes } = measured;
    console.log(
      `planning 20,000 pairs: ${ms.toFixed(0)} ms, ${messages.length} messages, ${batches.length} sendBatch calls`,
    );
    expect(messages.reduce((n, m) => n + m.pairs.length, 0)).toBe(STUDIOS * RULES * 2);
    expect(new Set(messages.flatMap((m) => m.pairs.map((p) => p.join(":")))).size).toBe(STUDIOS * RULES * 2);
    for (const m of messages) {
      expect(m.pairs.length).toBeLessThanOrEqual(MAX_PAIRS_PER_MESSAGE);
      expect(m.runAt).toBe(runAt);
    }
    // 24 scopes per studio (4 cell sizes × 3 windows × 2 profile filters) of 41 or 42 pairs: messages
    // fill up (a large scope is cut where a message is full), so hardly more than pairs / 40 of them.
    expect(messages.length).toBeLessThanOrEqual(
      STUDIOS * (Math.ceil((RULES * 2) / MAX_PAIRS_PER_MESSAGE) + 1),
    );
    for (const m of messages) {
      const scopes = new Set(m.pairs.map((p) => scopeOfPair.get(p.join(":"))));
      expect(scopes.size).toBeLessThanOrEqual(MAX_SCOPES_PER_MESSAGE);
      expect(scopes.has(undefined)).toBe(false);
    }
    expect(Math.max(...batches)).toBeLessThanOrEqual(100);
    expect(Math.max(...sizes)).toBeLessThan(256 * 1024);
    // How long planning takes is the machine's, not a property a test can hold on any machine: it is
    // printed above, and timed at volume by `npm run bench:alerts`.
  });
});

class Rollback extends Error {
  constructor(
    readonly result: { ms: number; messages: AlertPairsJob[]; batches: number[]; sizes: number[] },
  ) {
    super("rollback");
  }
}

function bytesOf(batch: AlertPairsJob[]): number {
  return batch.reduce((n, m) => n + JSON.stringify(m).length, 0);
}
