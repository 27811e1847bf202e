import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { handleIngest } from "../../workers/ingest/handler.js";
import { revokeKey } from "../../workers/shared/bootstrap.js";
import { batch, batchOf, event, gzip, nowUs } from "../support/batches.js";
import { seedTenant, type Tenant, withDb } from "../support/harness.js";
import { ingest, problemOf } from "../support/http.js";

let t: Tenant;
beforeAll(async () => {
  t = await seedTenant("pro", "Ingest Studio");
});

async function expectProblem(res: Response, status: number, detail?: RegExp) {
  expect(res.status).toBe(status);
  const p = await problemOf(res);
  if (detail) {
    expect(p.detail).toMatch(detail);
  }
  return p;
}

/** A valid uncompressed batch of exactly `size` bytes, padded through a property value. */
function batchOfSize(size: number): Uint8Array {
  const events = Array.from({ length: 120 }, (_, i) => event(i, { properties: { pad: "x".repeat(1000) } }));
  let bytes = batch(events);
  for (let guard = 0; guard < 20 && bytes.length !== size; guard++) {
    const last = events[events.length - 1];
    const pad = (last?.properties as Record<string, string> | undefined)?.pad ?? "";
    const next = pad.length + (size - bytes.length);
    if (next < 0 || next > 1024) {
      events.pop();
    } else {
      events[events.length - 1] = event(events.length - 1, { properties: { pad: "x".repeat(next) } });
    }
    bytes = batch(events);
  }
  expect(bytes.length).toBe(size);
  return bytes;
}

describe("POST /v1/events — accepted", () => {
  it("202 {status:'accepted'} for a plain and a gzip batch", async () => {
    const plain = await ingest(batchOf(5), t.keys.ingest.key);
    expect(plain.status).toBe(202);
    expect(await plain.json()).toEqual({ status: "accepted" });
    const zipped = await ingest(await gzip(batchOf(5)), t.keys.ingest.key, { gzip: true });
    expect(zipped.status).toBe(202);
    expect(zipped.headers.get("X-RateLimit-Limit")).toBe("36000");
  });

  it("accepts exactly 126,000 bytes and refuses 126,001 with 413", async () => {
    const exact = batchOfSize(126_000);
    expect((await ingest(exact, t.keys.ingest.key)).status).toBe(202);
    const over = batchOfSize(126_001);
    await expectProblem(await ingest(over, t.keys.ingest.key), 413, /126000/);
  });
});

describe("POST /v1/events — rejections, in the spec's order", () => {
  it("405 for any method but POST", async () => {
    const res = await SELF.fetch("http://127.0.0.1:8787/api/v1/events", {
      headers: { "X-API-Key": t.keys.ingest.key },
    });
    await expectProblem(res, 405);
  });

  it("400 for missing Content-Type or X-SDK-Version, before authentication", async () => {
    const body = batchOf(1);
    const noType = await ingest(body, null, { headers: { "Content-Type": null } });
    await expectProblem(noType, 400, /Content-Type/);
    const noSdk = await ingest(body, null, { headers: { "X-SDK-Version": null } });
    await expectProblem(noSdk, 400, /X-SDK-Version/);
  });

  it("401 without a key, with a Bearer token only, with an unknown or revoked key", async () => {
    const body = batchOf(1);
    await expectProblem(await ingest(body, null), 401, /X-API-Key/);
    await expectProblem(await ingest(body, null, { headers: { Authorization: `Bearer ${t.token}` } }), 401);
    await expectProblem(await ingest(body, `gta_${"B".repeat(40)}`), 401);
    const revoked = await seedTenant("pro", "Revoked Ingest");
    await withDb((db) => revokeKey(db, revoked.keys.ingest.id));
    await expectProblem(await ingest(body, revoked.keys.ingest.key), 401);
  });

  it("403 for a key without events:write", async () => {
    for (const preset of ["read", "readwrite", "full"] as const) {
      const p = await expectProblem(await ingest(batchOf(1), t.keys[preset].key), 403, /events:write/);
      expect(p.error_category).toBe("authorization");
    }
  });

  it("411 without Content-Length", async () => {
    const bytes = batchOf(1);
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(bytes);
        c.close();
      },
    });
    await expectProblem(await rawIngest(stream), 411);
  });

  it("400 when Content-Length does not match the body", async () => {
    const body = batchOf(3);
    for (const declared of [body.length - 1, body.length + 1]) {
      const res = await ingest(body, t.keys.ingest.key, { headers: { "Content-Length": String(declared) } });
      const p = await expectProblem(res, 400, /Content-Length/);
      expect(p.field).toBe("Content-Length");
    }
  });

  it("413 when Content-Length announces more than 126,000 bytes, before reading the body", async () => {
    await expectProblem(
      await ingest(batchOf(1), t.keys.ingest.key, { headers: { "Content-Length": "200000" } }),
      413,
    );
  });

  it("415 for another Content-Type or Content-Encoding", async () => {
    const body = batchOf(1);
    await expectProblem(
      await ingest(body, t.keys.ingest.key, { headers: { "Content-Type": "application/json" } }),
      415,
    );
    await expectProblem(
      await ingest(body, t.keys.ingest.key, { headers: { "Content-Encoding": "br" } }),
      415,
    );
  });

  it("413 for a gzip bomb, without exhausting memory", async () => {
    const bomb = await gzip(new Uint8Array(64 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(126_000);
    await expectProblem(await ingest(bomb, t.keys.ingest.key, { gzip: true }), 413, /Decompressed/);
  });

  it("400 for a body that is not gzip though it says so, or not protobuf", async () => {
    await expectProblem(await ingest(batchOf(2), t.keys.ingest.key, { gzip: true }), 400, /gzip/);
    const garbage = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]);
    await expectProblem(await ingest(garbage, t.keys.ingest.key), 400, /malformed/);
  });

  it("429 with Retry-After once the project's ingest rate is used", async () => {
    const fresh = await seedTenant("free", "Rate Ingest");
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`ingest:${fresh.projectId}`));
    await stub.hit(3600, 3600, 3600);
    const res = await ingest(batchOf(1), fresh.keys.ingest.key);
    const p = await expectProblem(res, 429, /Ingest rate/);
    expect(Number(res.headers.get("Retry-After"))).toBe(p.retry_after);
    expect(p.retry_after).toBeGreaterThan(3500);
  });

  it("429 once the tenant's monthly event budget is used, charged by event count", async () => {
    const fresh = await seedTenant("free", "Budget Ingest");
    const month = new Date().toISOString().slice(0, 7);
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`budget:${fresh.tenantId}:${month}`));
    await stub.charge(1_000_000, 999_990, Date.now() + 1000);
    expect((await ingest(batchOf(10), fresh.keys.ingest.key)).status).toBe(202);
    const res = await ingest(batchOf(1), fresh.keys.ingest.key);
    const p = await expectProblem(res, 429, /budget/);
    expect(p.retry_after).toBeGreaterThan(0);
    expect(res.headers.get("Retry-After")).toBe(String(p.retry_after));
    // The refused batch was not charged.
    expect((await stub.charge(1_000_000, 0, Date.now())).used).toBe(1_000_000);
  });
});

describe("POST /v1/events — the queue refuses", () => {
  it("503 with Retry-After, and the batch is not charged to the budget", async () => {
    const fresh = await seedTenant("pro", "Queue Outage");
    // Fault injection: the real Queue cannot be made to fail on demand, so this one refuses every send.
    const refusing = {
      ...env,
      EVENTS_QUEUE: { send: () => Promise.reject(new Error("queue unavailable")) },
    } as unknown as Env;
    const body = batchOf(4);
    const request = new Request("http://127.0.0.1:8787/api/v1/events", {
      method: "POST",
      body,
      headers: {
        "Content-Type": "application/x-protobuf",
        "Content-Length": String(body.length),
        "X-SDK-Version": "1",
        "X-API-Key": fresh.keys.ingest.key,
      },
    });
    const ctx = createExecutionContext();
    const res = await handleIngest(request, refusing, ctx);
    await waitOnExecutionContext(ctx);
    const p = await expectProblem(res, 503);
    expect(p.retryable).toBe(true);
    expect(res.headers.get("Retry-After")).toBe("5");
    const month = new Date().toISOString().slice(0, 7);
    const budget = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`budget:${fresh.tenantId}:${month}`));
    expect((await budget.charge(null, 0, Date.now())).used).toBe(0);
  });
});

function rawIngest(body: ReadableStream): Promise<Response> {
  return SELF.fetch("http://127.0.0.1:8787/api/v1/events", {
    method: "POST",
    body,
    headers: {
      "Content-Type": "application/x-protobuf",
      "X-SDK-Version": "1",
      "X-API-Key": t.keys.ingest.key,
    },
    // @ts-expect-error workerd needs duplex for streamed request bodies
    duplex: "half",
  });
}

describe("POST /v1/events — per-event validation", () => {
  const DAY_US = 86_400_000_000n;
  const cases: Array<[string, Parameters<typeof event>[1], RegExp]> = [
    ["a timestamp older than 30 days", { timestampUs: nowUs() - 31n * DAY_US }, /events\[1\]\.timestamp_us/],
    ["a timestamp over 48 hours ahead", { timestampUs: nowUs() + 3n * DAY_US }, /events\[1\]\.timestamp_us/],
    ["an empty event_name", { eventName: "" }, /events\[1\]\.event_name/],
    ["an empty session_id", { sessionId: "" }, /events\[1\]\.session_id/],
    ["an event_name over 128 bytes", { eventName: "e".repeat(129) }, /events\[1\]\.event_name/],
    ["a map_id over 255 bytes", { mapId: "m".repeat(256) }, /events\[1\]\.map_id/],
    ["a non-finite fps", { perf: { fps: Number.NaN } }, /events\[1\]\.perf\.fps/],
    [
      "an infinite position",
      { position: { x: Number.POSITIVE_INFINITY, y: 0, z: 0 } },
      /events\[1\]\.position\.x/,
    ],
    ["a non-finite metric", { metrics: { kills: Number.POSITIVE_INFINITY } }, /events\[1\]\.metrics/],
    ["a camera position without rotation", { cameraPosition: { x: 1, y: 2, z: 3 } }, /events\[1\]\.camera_/],
    [
      "too many properties",
      { properties: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, "v"])) },
      /events\[1\]\.properties/,
    ],
    [
      "a property value over 1024 bytes",
      { properties: { big: "v".repeat(1025) } },
      /events\[1\]\.properties/,
    ],
  ];

  it.each(cases)("rejects the whole batch for %s, naming the event and field", async (_, over, detail) => {
    const body = batch([event(0), event(1, over), event(2)]);
    const res = await ingest(body, t.keys.ingest.key);
    const p = await expectProblem(res, 400, detail);
    expect(p.event_index).toBe(1);
    expect(p.error_category).toBe("validation");
  });

  it("rejects an empty batch", async () => {
    await expectProblem(await ingest(batch([]), t.keys.ingest.key), 400, /events/);
  });
});
