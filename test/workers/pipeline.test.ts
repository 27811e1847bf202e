import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { CLAIM_LEASE_MS } from "../../workers/ingest/consumer/events.js";
import { dispatchIngestQueue } from "../../workers/ingest/queues.js";
import { CH_EVENTS, openClickHouse } from "../../workers/shared/clickhouse.js";
import { configOf } from "../../workers/shared/config.js";
import { openEnvelope, sealEnvelope } from "../../workers/shared/envelope.js";
import { retryDelaySeconds } from "../../workers/shared/queues.js";
import { auditEntries, onlyAuditEntry } from "../support/audit.js";
import { batch, event, gzip } from "../support/batches.js";
import { eventsQueueSettled } from "../support/events.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api, ingest } from "../support/http.js";
import type { Ok, OkBody } from "../support/schema.js";
import { waitFor } from "../support/wait.js";

let t: Tenant;
const ch = () => openClickHouse(configOf(env));
beforeAll(async () => {
  t = await seedTenant("pro", "Pipeline Studio");
  // Rows per INSERT, summed: a view counts every row that reaches telemetry.events (as the rollups'
  // views do), so a second insert of a row shows here even after the ReplacingMergeTree merged it away.
  await ch().command({
    query:
      "CREATE TABLE IF NOT EXISTS telemetry.test_inserted_rows (project_id UUID, rows UInt64) ENGINE = SummingMergeTree ORDER BY project_id",
  });
  await ch().command({
    query: `CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.test_inserted_rows_mv TO telemetry.test_inserted_rows
            AS SELECT project_id, count() AS rows FROM ${CH_EVENTS} GROUP BY project_id`,
  });
});

/** Every row ever inserted into telemetry.events for the project, copies included. */
async function insertedRows(tenant: Tenant): Promise<number> {
  const rs = await ch().query({
    query: "SELECT sum(rows) FROM telemetry.test_inserted_rows WHERE project_id = {p:UUID}",
    query_params: { p: tenant.projectId },
    format: "JSONCompactEachRow",
  });
  const [[n] = [0]] = await rs.json<[number | string]>();
  return Number(n);
}

type Kpis = Ok<"/v1/projects/{id}/status">["kpis"];

async function kpis(tenant: Tenant): Promise<Kpis> {
  const res = await api(`/v1/projects/${tenant.projectId}/status?fresh=1`, { key: tenant.keys.read.key });
  expect(res.status).toBe(200);
  return ((await res.json()) as OkBody<"/v1/projects/{id}/status">).data.kpis;
}

function waitForTotal(tenant: Tenant, total: number): Promise<Kpis> {
  return waitFor(
    () => kpis(tenant),
    (k) => k.totalEvents >= total,
    { intervalMs: 250, message: `${total} events in the KPIs` },
  );
}

function isoOfUs(us: bigint): string {
  const ms = us / 1000n;
  const micro = (us % 1_000_000n).toString().padStart(6, "0");
  return `${new Date(Number(ms)).toISOString().slice(0, 19)}.${micro}Z`;
}

describe("ingest → queue → consumer → ClickHouse → project status", () => {
  it("counts every event of a gzip'd protobuf batch exactly once", async () => {
    const tenant = await seedTenant("pro", "E2E Studio");
    const empty = await kpis(tenant);
    expect(empty).toEqual({
      events24h: 0,
      players24h: 0,
      totalEvents: 0,
      lastEventAt: null,
      fetchedAt: expect.any(Number),
      activeAlertRules: 0,
    });

    const events = Array.from({ length: 40 }, (_, i) => event(i));
    // Two events older than 24 hours: counted in the total, not in the 24-hour figures.
    events.push(event(100, { playerId: "veteran" }, 3 * 86_400));
    events.push(event(101, { playerId: "veteran" }, 2 * 86_400));
    const body = await gzip(batch(events));
    const res = await ingest(body, tenant.keys.ingest.key, { gzip: true });
    expect(res.status).toBe(202);

    const k = await waitForTotal(tenant, events.length);
    const recent = events.filter((e) => !(e.playerId === "veteran"));
    const players = new Set(recent.map((e) => e.playerId || e.sessionId));
    const newest = recent.reduce(
      (m, e) => ((e.timestampUs as bigint) > m ? (e.timestampUs as bigint) : m),
      0n,
    );
    expect(k.totalEvents).toBe(42);
    expect(k.events24h).toBe(40);
    expect(k.players24h).toBe(players.size);
    expect(k.lastEventAt).toBe(isoOfUs(newest));

    // The SDK retrying the very same bytes (say, after a lost response) is not counted twice.
    expect((await ingest(body, tenant.keys.ingest.key, { gzip: true })).status).toBe(202);
    expect(
      (
        await ingest(await gzip(batch([event(7, { playerId: "late" })])), tenant.keys.ingest.key, {
          gzip: true,
        })
      ).status,
    ).toBe(202);
    await waitForTotal(tenant, 43);
    // A wrongly double-counted copy would have landed by the queue's barrier.
    await eventsQueueSettled();
    expect((await kpis(tenant)).totalEvents).toBe(43);
  });
});

function message(id: string, bytes: Uint8Array, attempts = 1) {
  return {
    id,
    timestamp: new Date(),
    attempts,
    body: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  };
}

function envelopeOf(tenant: Tenant, key: string, n: number, offset = 0): Uint8Array {
  const body = batch(Array.from({ length: n }, (_, i) => event(i + offset)));
  return sealEnvelope(
    {
      v: 1,
      projectId: tenant.projectId,
      tenantId: tenant.tenantId,
      batchKey: key,
      receivedAt: Date.now(),
      encoding: "identity",
      eventCount: n,
    },
    body,
  );
}

async function runQueue(queue: string, messages: ReturnType<typeof message>[], workerEnv: Env = env) {
  const b = createMessageBatch(queue, messages);
  const ctx = createExecutionContext();
  await dispatchIngestQueue(b, workerEnv);
  return (await getQueueResult(b, ctx)) as unknown as {
    explicitAcks: string[];
    retryMessages: Array<{ msgId: string }>;
  };
}

describe("queue consumer", () => {
  it("backs off exponentially: 5 s, 10 s, 20 s … capped at 10 minutes", () => {
    expect([1, 2, 3, 4, 8, 20].map((n) => retryDelaySeconds(n))).toEqual([5, 10, 20, 40, 600, 600]);
  });

  it("never counts a redelivered message twice, alone or inside another batch", async () => {
    const tenant = await seedTenant("pro", "Redelivery Studio");
    const a = envelopeOf(tenant, "batch-a", 10);
    const b = envelopeOf(tenant, "batch-b", 7, 50);

    const first = await runQueue("telemetry-events", [message("m-a", a)]);
    expect(first.explicitAcks).toEqual(["m-a"]);
    expect((await kpis(tenant)).totalEvents).toBe(10);

    // Redelivered inside a different batch, next to a new message.
    const second = await runQueue("telemetry-events", [message("m-a", a, 2), message("m-b", b)]);
    expect(second.explicitAcks.sort()).toEqual(["m-a", "m-b"]);
    expect((await kpis(tenant)).totalEvents).toBe(17);

    // And again, alone.
    await runQueue("telemetry-events", [message("m-b", b, 3)]);
    expect((await kpis(tenant)).totalEvents).toBe(17);
  });

  it("inserts a batch once when two deliveries of it race: the second waits for the first's claim", async () => {
    const tenant = await seedTenant("pro", "Race Studio");
    const key = `race-${crypto.randomUUID()}`;
    const a = envelopeOf(tenant, key, 12);
    // Another delivery of the batch holds the claim: it has passed the presence check and is inserting.
    const claims = env.BATCH_CLAIMS.get(env.BATCH_CLAIMS.idFromName(tenant.projectId));
    expect(await claims.claim([key], "other-delivery", CLAIM_LEASE_MS)).toEqual([key]);

    const held = await runQueue("telemetry-events", [message("race-1", a)]);
    expect(held.explicitAcks).toEqual([]);
    expect(held.retryMessages.map((m) => m.msgId)).toEqual(["race-1"]);
    expect(await insertedRows(tenant)).toBe(0);

    // The holder finishes and gives the claim back; the retry then stores the batch, once.
    await claims.release([key], "other-delivery");
    const retried = await runQueue("telemetry-events", [message("race-1", a, 2)]);
    expect(retried.explicitAcks).toEqual(["race-1"]);
    expect(await insertedRows(tenant)).toBe(12);
    expect((await kpis(tenant)).totalEvents).toBe(12);
  });

  it("counts every row once when deliveries of the same batches run at the same time", async () => {
    const tenant = await seedTenant("pro", "Concurrent Studio");
    const a = envelopeOf(tenant, `conc-a-${crypto.randomUUID()}`, 20);
    const b = envelopeOf(tenant, `conc-b-${crypto.randomUUID()}`, 8, 100);
    const c = envelopeOf(tenant, `conc-c-${crypto.randomUUID()}`, 5, 200);
    // The same batches redelivered in other compositions, all at once; whatever is retried is
    // delivered again until everything is acknowledged.
    let pending = [
      [message("c-a1", a), message("c-b1", b)],
      [message("c-a2", a, 2), message("c-c1", c)],
      [message("c-b2", b, 2), message("c-c2", c, 2), message("c-a3", a, 3)],
      [message("c-a4", a, 4)],
    ];
    for (let round = 0; pending.length && round < 5; round++) {
      const results = await Promise.all(pending.map((ms) => runQueue("telemetry-events", ms)));
      const all = pending.flat();
      pending = results
        .map((r) => r.retryMessages.map((m) => all.find((x) => x.id === m.msgId)))
        .map((ms) => ms.filter((m) => m !== undefined).map((m) => ({ ...m, attempts: m.attempts + 1 })))
        .filter((ms) => ms.length);
    }
    expect(pending).toEqual([]);
    expect(await insertedRows(tenant)).toBe(33);
    expect((await kpis(tenant)).totalEvents).toBe(33);
  });

  it("counts an SDK's concurrent retries of one batch once, through the real queue", async () => {
    const tenant = await seedTenant("pro", "Retry Storm Studio");
    const raw = batch(Array.from({ length: 30 }, (_, i) => event(i + 300)));
    const gz = await gzip(raw);
    // The same events sent four times at once, gzip'd and raw: one batch key.
    const answers = await Promise.all([
      ingest(gz, tenant.keys.ingest.key, { gzip: true }),
      ingest(gz, tenant.keys.ingest.key, { gzip: true }),
      ingest(raw, tenant.keys.ingest.key),
      ingest(gz, tenant.keys.ingest.key, { gzip: true }),
    ]);
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 202]);
    await waitForTotal(tenant, 30);
    // A wrongly inserted second copy would have landed by the queue's barrier.
    await eventsQueueSettled();
    expect(await insertedRows(tenant)).toBe(30);
  });

  it("retries with exponential delay and acknowledges nothing when ClickHouse is unreachable", async () => {
    const tenant = await seedTenant("pro", "Outage Studio");
    const down = { ...env, CLICKHOUSE_URL: "http://127.0.0.1:9" } as Env;
    const result = await runQueue(
      "telemetry-events",
      [
        message("m-1", envelopeOf(tenant, "outage-1", 3), 1),
        message("m-2", envelopeOf(tenant, "outage-2", 3), 3),
      ],
      down,
    );
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages.map((m) => m.msgId).sort()).toEqual(["m-1", "m-2"]);
    expect((await kpis(tenant)).totalEvents).toBe(0);

    // ClickHouse is back: the retries store every event, once (nothing was sent, so no claim lingers).
    const back = await runQueue("telemetry-events", [
      message("m-1", envelopeOf(tenant, "outage-1", 3), 2),
      message("m-2", envelopeOf(tenant, "outage-2", 3), 4),
    ]);
    expect(back.explicitAcks.sort()).toEqual(["m-1", "m-2"]);
    expect(await insertedRows(tenant)).toBe(6);
  });

  it("sends an undecodable message to the dead-letter queue, which parks it in R2", async () => {
    const garbage = new Uint8Array([0, 0, 0, 2, 123, 125, 0xff, 0xfe]);
    const result = await runQueue("telemetry-events", [message("poison-1", garbage)]);
    expect(result.explicitAcks).toEqual(["poison-1"]);
    // The real dead-letter consumer runs on its own and parks it.
    const keys = await waitFor(
      async () => (await env.DEAD_LETTERS.list({ prefix: "events/" })).objects.map((o) => o.key),
      (k) => k.length > 0,
      { timeoutMs: 20_000, intervalMs: 200, message: "a parked dead letter" },
    );
    expect(keys.length).toBeGreaterThan(0);
  });

  it("parks dead letters byte for byte under the project and day", async () => {
    const env1 = envelopeOf(t, "dead-1", 2);
    const result = await runQueue("telemetry-events-dlq", [message("dl-1", env1, 9)]);
    expect(result.explicitAcks).toEqual(["dl-1"]);
    const day = new Date().toISOString().slice(0, 10);
    const object = await env.DEAD_LETTERS.get(`events/${t.projectId}/${day}/dead-1-dl-1.bin`);
    expect(object).not.toBeNull();
    expect(new Uint8Array(await (object as R2ObjectBody).arrayBuffer())).toEqual(env1);
    expect(object?.customMetadata?.attempts).toBe("9");
    // A batch that reads well was parked because storing it kept failing; one that does not, says so.
    expect(object?.customMetadata?.reason).toBe(
      "Storing it failed on every delivery (ClickHouse refused or was unreachable)",
    );
    // An event whose length runs past the end of the batch.
    const { header } = openEnvelope(envelopeOf(t, "dead-2", 2));
    const broken = sealEnvelope(header, new Uint8Array([0x0a, 0xff, 0xff, 0x03]));
    await runQueue("telemetry-events-dlq", [message("dl-2", broken, 9)]);
    const parkedBroken = await env.DEAD_LETTERS.head(`events/${t.projectId}/${day}/dead-2-dl-2.bin`);
    expect(parkedBroken?.customMetadata?.reason).toMatch(/^Not a readable telemetry batch: /);
  });

  it("lists parked batches and replays them through the API; replay counts each event once", async () => {
    const tenant = await seedTenant("pro", "Replay Studio");
    const parked = envelopeOf(tenant, "a1b2c3", 6);
    // Park it twice (two dead-lettered deliveries of the same batch).
    await runQueue("telemetry-events-dlq", [message("dl-x", parked, 9), message("dl-y", parked, 9)]);

    const listed = await api(`/v1/projects/${tenant.projectId}/dead-letters`, { key: tenant.keys.full.key });
    expect(listed.status).toBe(200);
    const items = ((await listed.json()) as OkBody<"/v1/projects/{id}/dead-letters">).data;
    expect(items).toHaveLength(2);
    expect(items.every((i) => i.batchKey === "a1b2c3" && i.size === parked.length && i.attempts === 9)).toBe(
      true,
    );
    expect(items.map((i) => (i as { reason?: string | null }).reason)).toEqual([
      "Storing it failed on every delivery (ClickHouse refused or was unreachable)",
      "Storing it failed on every delivery (ClickHouse refused or was unreachable)",
    ]);
    // Only data:admin may see or replay them, and only for its own project.
    expect(
      (await api(`/v1/projects/${tenant.projectId}/dead-letters`, { key: tenant.keys.readwrite.key })).status,
    ).toBe(403);
    expect(
      (await api(`/v1/projects/${t.projectId}/dead-letters`, { key: tenant.keys.full.key })).status,
    ).toBe(404);

    // Without data:admin the replay is refused and recorded nowhere.
    const refused = await api(
      `/v1/projects/${tenant.projectId}/dead-letters/replay`,
      { key: tenant.keys.readwrite.key },
      { method: "POST" },
    );
    expect(refused.status).toBe(403);
    expect(await auditEntries(tenant.tenantId)).toEqual([]);
    const replay = await api(
      `/v1/projects/${tenant.projectId}/dead-letters/replay`,
      { key: tenant.keys.full.key },
      { method: "POST" },
    );
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual({ success: true, data: { replayed: 2, remaining: false } });
    expect(await onlyAuditEntry(tenant.tenantId, "dead_letters.replayed")).toMatchObject({
      tenantId: tenant.tenantId,
      projectId: tenant.projectId,
      actorType: "api_key",
      actorId: tenant.keys.full.id,
      targetType: "project",
      targetId: tenant.projectId,
      detail: { replayed: 2, remaining: false },
      outcome: "success",
    });
    await waitForTotal(tenant, 6);
    await eventsQueueSettled();
    expect((await kpis(tenant)).totalEvents).toBe(6);
    const after = await api(`/v1/projects/${tenant.projectId}/dead-letters`, { key: tenant.keys.full.key });
    expect(((await after.json()) as OkBody<"/v1/projects/{id}/dead-letters">).data).toEqual([]);
    // Nothing left to replay: the call changes nothing and records nothing more.
    const empty = await api(
      `/v1/projects/${tenant.projectId}/dead-letters/replay`,
      { key: tenant.keys.full.key },
      { method: "POST" },
    );
    expect(await empty.json()).toEqual({ success: true, data: { replayed: 0, remaining: false } });
    expect((await auditEntries(tenant.tenantId)).map((e) => e.action)).toEqual(["dead_letters.replayed"]);
  });
});
