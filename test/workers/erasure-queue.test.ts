import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog, erasures } from "../../schema/pg/schema.js";
import type { ErasureMessage } from "../../workers/api/erasure/run.js";
import { ERASURE_STEPS } from "../../workers/api/erasure/steps.js";
import worker from "../../workers/api/index.js";
import { sha256Hex } from "../../workers/shared/credentials/secrets.js";
import { QUEUES } from "../../workers/shared/queues.js";
import { event } from "../support/batches.js";
import { eraseAndWait } from "../support/erasures.js";
import { ingestAndWait, storedCount } from "../support/events.js";
import { seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api } from "../support/http.js";
import { knobs } from "../support/knobs.js";
import type { OkBody, Schemas } from "../support/schema.js";
import { waitFor } from "../support/wait.js";

// The erasure on its queue (workers/api/erasure/run.ts): the request records it and answers 201 once
// done or 202 to poll; a delivery that throws is retried from where it stopped, a duplicate changes
// nothing, and one that fails every attempt ends failed and is dead-lettered.

const CLOSED_CH = "http://127.0.0.1:1";

type Erasure = Schemas["Erasure"];

/** A studio whose player `who` has `n` events in two sessions (one anonymous before sign-in), and bob 3. */
async function studio(name: string, who: string, n = 6): Promise<Tenant> {
  const t = await seedTenant("enterprise", name);
  await ingestAndWait(t.projectId, t.keys.ingest.key, [
    ...Array.from({ length: n - 2 }, (_, i) => event(i, { playerId: who, sessionId: `${who}-s1` }, 3600)),
    ...[0, 1].map((i) => event(50 + i, { playerId: "", sessionId: `${who}-s1` }, 2 * 86_400)),
    ...[0, 1, 2].map((i) => event(80 + i, { playerId: "bob", sessionId: "bob-s" }, 3600)),
  ]);
  return t;
}

const playerRows = (t: Tenant, who: string) =>
  storedCount(t.projectId, `player_id = '${who}' OR session_id = '${who}-s1'`);

function post(t: Tenant, playerId: string, headers: Record<string, string> = {}) {
  return api(
    `/v1/projects/${t.projectId}/erasures`,
    { key: t.keys.full.key },
    {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ playerId }),
    },
  );
}

async function read(t: Tenant, id: string): Promise<Erasure> {
  const res = await api(`/v1/projects/${t.projectId}/erasures/${id}`, { key: t.keys.full.key });
  expect(res.status).toBe(200);
  return ((await res.json()) as OkBody<"/v1/projects/{id}/erasures/{erasureId}">).data;
}

/** An erasure recorded as the request records it, whose message a test delivers by hand. */
async function recorded(t: Tenant, playerId: string): Promise<ErasureMessage> {
  const playerIdSha256 = await sha256Hex(playerId);
  const [row] = await withDb((db) =>
    db
      .insert(erasures)
      .values({ projectId: t.projectId, requestedBy: t.keys.full.id, playerIdSha256, status: "running" })
      .returning({ id: erasures.id }),
  );
  return {
    v: 1,
    erasureId: row?.id as string,
    playerId,
    requester: { actor: { type: "api_key", id: t.keys.full.id, label: "full" }, ip: null, userAgent: null },
  };
}

type QueueResult = { explicitAcks: string[]; retryMessages: Array<{ msgId: string }> };

async function deliver(
  body: ErasureMessage,
  { attempts = 1, overrides = {}, queue = QUEUES.erasures.name } = {} as {
    attempts?: number;
    overrides?: Record<string, string>;
    queue?: string;
  },
): Promise<QueueResult> {
  const b = createMessageBatch(queue, [{ id: "m-1", timestamp: new Date(), attempts, body }]);
  const ctx = createExecutionContext();
  await worker.queue(b, { ...env, ...overrides } as Env);
  return (await getQueueResult(b, ctx)) as unknown as QueueResult;
}

const TABLES = ERASURE_STEPS.length;

describe("the erasure on its queue", () => {
  it("answers 202 with Location at once when asked (Prefer: respond-async); GET follows it to completed", async () => {
    const t = await studio("Erasure Async", "ann");
    expect(await playerRows(t, "ann")).toBe(6);
    const res = await post(t, "ann", { Prefer: "respond-async" });
    expect(res.status).toBe(202);
    const accepted = ((await res.json()) as OkBody<"/v1/projects/{id}/erasures", "post">).data;
    expect(res.headers.get("Location")).toBe(`/api/v1/projects/${t.projectId}/erasures/${accepted.id}`);
    expect(accepted).toMatchObject({ status: "running", rowsRemoved: 0, completedAt: null });
    const done = await waitFor(
      () => read(t, accepted.id),
      (e) => e.status !== "running",
      { timeoutMs: 50_000, intervalMs: 200, message: "the erasure to end" },
    );
    expect(done).toMatchObject({ status: "completed", rowsRemoved: 6, error: null, attempts: 1 });
    expect(done.startedAt).not.toBeNull();
    expect(done.steps.map((s) => s.table).slice(0, TABLES)).toEqual(ERASURE_STEPS.map((s) => s.table));
    expect(await playerRows(t, "ann")).toBe(0);
    expect(await storedCount(t.projectId, "player_id = 'bob'")).toBe(3);
    // The default waits up to 20 s for the erasure: 201 with it completed when it ended by then, else
    // 202 with it running and its Location, as above. Which one is the machine's speed; that the answer
    // says what the erasure is, and that it completes, is not.
    const again = await post(t, "bob");
    const answered = ((await again.json()) as { data: Erasure }).data;
    if (again.status === 201) {
      expect(answered).toMatchObject({ status: "completed", rowsRemoved: 3 });
    } else {
      expect(again.status).toBe(202);
      expect(answered.status).toBe("running");
      expect(again.headers.get("Location")).toBe(`/api/v1/projects/${t.projectId}/erasures/${answered.id}`);
    }
    const ended = await waitFor(
      () => read(t, answered.id),
      (e) => e.status !== "running",
      { timeoutMs: 50_000, intervalMs: 200, message: "the default erasure to end" },
    );
    expect(ended).toMatchObject({ status: "completed", rowsRemoved: 3 });
  });

  it("a delivery that throws midway is retried from where it stopped; duplicates change nothing", async () => {
    const t = await studio("Erasure Redelivery", "cy", 8);
    const m = await recorded(t, "cy");
    // ClickHouse down before anything: retried, nothing recorded but the error.
    const down = await deliver(m, { overrides: { CLICKHOUSE_URL: CLOSED_CH } });
    expect(down.retryMessages.map((r) => r.msgId)).toEqual(["m-1"]);
    expect(await read(t, m.erasureId)).toMatchObject({ status: "running", steps: [], attempts: 1 });
    expect((await read(t, m.erasureId)).error).not.toBeNull();
    // Then a step throws after the events and two more tables are done.
    const midway = await deliver(m, { overrides: knobs({ erasureFaultAfterSteps: 3 }) });
    expect(midway.retryMessages.map((r) => r.msgId)).toEqual(["m-1"]);
    const half = await read(t, m.erasureId);
    expect(half).toMatchObject({ status: "running", rowsRemoved: 8, attempts: 2 });
    expect(half.steps.map((s) => s.table)).toEqual(ERASURE_STEPS.slice(0, 3).map((s) => s.table));
    expect(half.error).toContain("injected fault");
    expect(await playerRows(t, "cy")).toBe(0);
    // The retry resumes: the events step is not counted again, the rest are done, once.
    expect((await deliver(m, { attempts: 2 })).explicitAcks).toEqual(["m-1"]);
    const done = await read(t, m.erasureId);
    expect(done).toMatchObject({ status: "completed", rowsRemoved: 8, error: null, attempts: 3 });
    expect(done.steps.slice(0, TABLES).map((s) => s.table)).toEqual(ERASURE_STEPS.map((s) => s.table));
    expect(done.steps.filter((s) => s.table === "telemetry.events")).toEqual([
      { table: "telemetry.events", rowsRemoved: 8 },
    ]);
    // A late duplicate of the message: acknowledged, the record as it was.
    expect((await deliver(m, { attempts: 1 })).explicitAcks).toEqual(["m-1"]);
    expect(await read(t, m.erasureId)).toEqual(done);
    const completions = await withDb((db) =>
      db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.targetId, m.erasureId), eq(auditLog.action, "erasure.completed"))),
    );
    expect(completions).toHaveLength(1);
    expect(completions[0]).toMatchObject({ actorType: "api_key", actorId: t.keys.full.id });
    expect(await storedCount(t.projectId, "player_id = 'bob'")).toBe(3);
  });

  it("a retry after the rollups were rebuilt (the last update failed) reports each table once", async () => {
    const t = await studio("Erasure Late Fault", "hal");
    const m = await recorded(t, "hal");
    // Every step and the rebuild recorded, then the delivery throws before the erasure is completed.
    const late = await deliver(m, { overrides: knobs({ erasureFaultAfterSteps: TABLES + 1 }) });
    expect(late.retryMessages.map((r) => r.msgId)).toEqual(["m-1"]);
    expect((await read(t, m.erasureId)).status).toBe("running");
    expect((await deliver(m, { attempts: 2 })).explicitAcks).toEqual(["m-1"]);
    const done = await read(t, m.erasureId);
    expect(done).toMatchObject({ status: "completed", rowsRemoved: 6 });
    const tables = done.steps.map((s) => s.table);
    expect(tables).toEqual([...ERASURE_STEPS.map((s) => s.table), ...done.rebuiltTables]);
    expect(await playerRows(t, "hal")).toBe(0);
  });

  it("a delivery while another holds the erasure waits for its lease", async () => {
    const t = await studio("Erasure Lease", "dee");
    const m = await recorded(t, "dee");
    const until = new Date(Date.now() + 120_000);
    await withDb((db) => db.update(erasures).set({ leaseUntil: until }).where(eq(erasures.id, m.erasureId)));
    const r = await deliver(m);
    expect(r.explicitAcks).toEqual([]);
    expect(r.retryMessages.map((x) => x.msgId)).toEqual(["m-1"]);
    expect(await read(t, m.erasureId)).toMatchObject({ status: "running", steps: [], attempts: 0 });
    expect(await playerRows(t, "dee")).toBe(6);
  });

  it("fails after its last attempt with the error, is dead-lettered, and the dead letter keeps it failed", async () => {
    const t = await studio("Erasure Dead", "eve");
    const m = await recorded(t, "eve");
    const last = await deliver(m, {
      attempts: QUEUES.erasures.maxRetries + 1,
      overrides: { CLICKHOUSE_URL: CLOSED_CH },
    });
    // Retried past max_retries: the platform moves it to the dead-letter queue.
    expect(last.explicitAcks).toEqual([]);
    expect(last.retryMessages.map((x) => x.msgId)).toEqual(["m-1"]);
    const failed = await read(t, m.erasureId);
    expect(failed.status).toBe("failed");
    expect(failed.error).toBeTruthy();
    expect(failed.completedAt).not.toBeNull();
    const [work] = await withDb((db) =>
      db.select({ work: erasures.work }).from(erasures).where(eq(erasures.id, m.erasureId)),
    );
    expect(work?.work).toBeNull();
    expect((await deliver(m, { queue: QUEUES.erasuresDeadLetter.name })).explicitAcks).toEqual(["m-1"]);
    expect(await read(t, m.erasureId)).toEqual(failed);
    const entries = await withDb((db) =>
      db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.targetId, m.erasureId), eq(auditLog.action, "erasure.failed"))),
    );
    expect(entries.map((e) => e.outcome)).toEqual(["failure"]);
    // Nothing was deleted; a healthy late copy changes nothing.
    expect((await deliver(m)).explicitAcks).toEqual(["m-1"]);
    expect(await playerRows(t, "eve")).toBe(6);
  });

  it("the dead letter of an erasure whose last attempt could not record it records it failed", async () => {
    const t = await studio("Erasure Dead Unrecorded", "fay");
    const m = await recorded(t, "fay");
    expect((await deliver(m, { queue: QUEUES.erasuresDeadLetter.name })).explicitAcks).toEqual(["m-1"]);
    const failed = await read(t, m.erasureId);
    expect(failed.status).toBe("failed");
    expect(failed.error).toContain("dead-lettered");
  });
});

describe("the erasure preview", () => {
  it("counts no row past the retention horizon; the erasure still takes them", async () => {
    const t = await seedTenant("pro", "Erasure Preview Retention");
    await ingestAndWait(t.projectId, t.keys.ingest.key, [
      ...[0, 1, 2].map((i) => event(i, { playerId: "gus", sessionId: "gus-old" }, 10 * 86_400)),
      ...[0, 1].map((i) => event(10 + i, { playerId: "gus", sessionId: "gus-new" }, 3600)),
    ]);
    const preview = async () => {
      const res = await api(
        `/v1/projects/${t.projectId}/erasures/preview`,
        { key: t.keys.full.key },
        {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ playerId: "gus" }),
        },
      );
      expect(res.status).toBe(200);
      return ((await res.json()) as OkBody<"/v1/projects/{id}/erasures/preview", "post">).data;
    };
    const before = await preview();
    expect(before.tables[0]).toEqual({ table: "telemetry.events", rows: 5 });
    expect(before.days).toBe(2);
    const res = await api(
      "/v1/data-retention",
      { key: t.keys.full.key },
      {
        method: "PATCH",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ retentionDays: 5 }),
      },
    );
    expect(res.status).toBe(200);
    const after = await preview();
    expect(after.tables[0]).toEqual({ table: "telemetry.events", rows: 2 });
    expect(after.days).toBe(1);
    // Every table: no more than before, and the events' own derived rows of the old session are gone.
    for (const [i, row] of after.tables.entries()) {
      expect(row.rows, row.table).toBeLessThanOrEqual(before.tables[i]?.rows ?? 0);
    }
    expect(await eraseAndWait(t.projectId, t.keys.full.key, "gus")).toMatchObject({
      status: "completed",
      rowsRemoved: 5,
    });
    expect(await storedCount(t.projectId, "player_id = 'gus'")).toBe(0);
  });
});
