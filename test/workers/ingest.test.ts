import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { revokeKey } from "../../workers/api/bootstrap.js";
import { handleIngest } from "../../workers/ingest/handler.js";
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

/** A valid uncompressed batch of exactly `size` bytes, padded through an attribute value (≤ 512). */
function batchOfSize(size: number): Uint8Array {
  const padded = (i: number, n: number) => event(i, { attributes: { pad: "x".repeat(n) } });
  const events = Array.from({ length: 200 }, (_, i) => padded(i, 500));
  let bytes = batch(events);
  for (let guard = 0; guard < 400 && bytes.length !== size; guard++) {
    const last = events[events.length - 1];
    const next = (last?.attributes?.pad ?? "").length + (size - bytes.length);
    if (next < 0) {
      events.pop();
    } else if (next > 512) {
      events.push(padded(events.length, 0));
    } else {
      events[events.length - 1] = padded(events.length - 1, next);
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
    await stub.chargeWindow(3600, 3600, 3600);
    const res = await ingest(batchOf(1), fresh.keys.ingest.key);
    const p = await expectProblem(res, 429, /Ingest rate/);
    expect(Number(res.headers.get("Retry-After"))).toBe(p.retry_after);
    expect(p.retry_after).toBeGreaterThan(3500);
  });

  it("429 once the tenant's monthly event budget is used, charged by event count", async () => {
    const fresh = await seedTenant("free", "Budget Ingest");
    const month = new Date().toISOString().slice(0, 7);
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`budget:${fresh.tenantId}:${month}`));
    await stub.chargeBudget(1_000_000, 999_990, Date.now() + 1000);
    expect((await ingest(batchOf(10), fresh.keys.ingest.key)).status).toBe(202);
    const res = await ingest(batchOf(1), fresh.keys.ingest.key);
    const p = await expectProblem(res, 429, /budget/);
    expect(p.retry_after).toBeGreaterThan(0);
    expect(res.headers.get("Retry-After")).toBe(String(p.retry_after));
    // The refused batch was not charged.
    expect((await stub.chargeBudget(1_000_000, 0, Date.now())).used).toBe(1_000_000);
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
    expect((await budget.chargeBudget(null, 0, Date.now())).used).toBe(0);
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
  const GiB = 1024n * 1024n * 1024n;
  const many = <V>(n: number, value: V): Record<string, V> =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value]));
  // Bounds are UTF-16 code units, one over each; float bounds one float32 step over.
  const cases: Array<[string, Parameters<typeof event>[1], RegExp]> = [
    ["a timestamp older than 30 days", { timestampUs: nowUs() - 31n * DAY_US }, /events\[1\]\.timestamp_us/],
    ["a timestamp over 48 hours ahead", { timestampUs: nowUs() + 3n * DAY_US }, /events\[1\]\.timestamp_us/],
    ["an empty event_name", { eventName: "" }, /events\[1\]\.event_name/],
    ["an empty session_id", { sessionId: "" }, /events\[1\]\.session_id/],
    ["an event_name of 129 units", { eventName: "e".repeat(129) }, /events\[1\]\.event_name/],
    ["a CJK event_name of 129 characters", { eventName: "試".repeat(129) }, /events\[1\]\.event_name/],
    ["a map_id of 129 units", { mapId: "m".repeat(129) }, /events\[1\]\.map_id/],
    ["a build_id of 129 units", { buildId: "b".repeat(129) }, /events\[1\]\.build_id/],
    ["a player_id of 129 units", { playerId: "p".repeat(129) }, /events\[1\]\.player_id/],
    ["a platform of 65 units", { platform: "w".repeat(65) }, /events\[1\]\.platform/],
    ["an engine_version of 65 units", { engineVersion: "6".repeat(65) }, /events\[1\]\.engine_version/],
    ["a non-finite fps", { fps: Number.NaN }, /events\[1\]\.fps/],
    ["an fps over 1000", { fps: 1000.0001 }, /events\[1\]\.fps/],
    ["a frame time over 10,000 ms", { frameTimeMs: 10_000.001 }, /events\[1\]\.frame_time_ms/],
    ["a GPU time over 10,000 ms", { gpuTimeMs: 10_000.001 }, /events\[1\]\.gpu_time_ms/],
    ["a game thread time over 10,000 ms", { gameThreadMs: 10_000.001 }, /events\[1\]\.game_thread_ms/],
    ["a render thread time over 10,000 ms", { renderThreadMs: 10_000.001 }, /events\[1\]\.render_thread_ms/],
    ["memory over 64 GiB", { memoryUsedBytes: 64n * GiB + 1n }, /events\[1\]\.memory_used_bytes/],
    [
      "an infinite position",
      { position: { x: Number.POSITIVE_INFINITY, y: 0, z: 0 } },
      /events\[1\]\.position\.x/,
    ],
    ["a position beyond 1e9", { position: { x: 0, y: -1_000_000_064, z: 0 } }, /events\[1\]\.position\.y/],
    ["a non-finite metric", { metrics: { kills: Number.POSITIVE_INFINITY } }, /events\[1\]\.metrics/],
    ["a camera yaw without pitch", { cameraYaw: 90 }, /events\[1\]\.camera_(yaw|pitch)/],
    ["a camera pitch without yaw", { cameraPitch: 10 }, /events\[1\]\.camera_(yaw|pitch)/],
    ["a camera yaw of 360", { cameraYaw: 360, cameraPitch: 0 }, /events\[1\]\.camera_yaw/],
    ["a camera pitch over 90", { cameraYaw: 0, cameraPitch: 90.00001 }, /events\[1\]\.camera_pitch/],
    ["51 attributes", { attributes: many(51, "v") }, /events\[1\]\.attributes/],
    ["an attribute key of 65 units", { attributes: { ["k".repeat(65)]: "v" } }, /events\[1\]\.attributes/],
    ["an attribute value of 513 units", { attributes: { big: "v".repeat(513) } }, /events\[1\]\.attributes/],
    ["51 metrics", { metrics: many(51, 1) }, /events\[1\]\.metrics/],
    ["a metric key of 65 units", { metrics: { ["k".repeat(65)]: 1 } }, /events\[1\]\.metrics/],
  ];

  it.each(cases)("rejects the whole batch for %s, naming the event and field", async (_, over, detail) => {
    const body = batch([event(0), event(1, over), event(2)]);
    const res = await ingest(body, t.keys.ingest.key);
    const p = await expectProblem(res, 400, detail);
    expect(p.event_index).toBe(1);
    expect(p.error_category).toBe("validation");
  });

  it("rejects an empty batch: no bytes at all, or a device context without events", async () => {
    // In the SDKs' layout a batch without events encodes to nothing.
    expect(batch([])).toHaveLength(0);
    await expectProblem(await ingest(batch([]), t.keys.ingest.key), 400, /body/);
    const deviceOnly = batch([], { device: { gpu: "RTX 4070" } });
    await expectProblem(await ingest(deviceOnly, t.keys.ingest.key), 400, /events/);
  });
});

describe("CORS: browser games post from their own origin", () => {
  it("answers the preflight of the web SDK's POST on both paths, without credentials", async () => {
    for (const path of ["/v1/events", "/api/v1/events"]) {
      const res = await SELF.fetch(`http://127.0.0.1:8787${path}`, {
        method: "OPTIONS",
        headers: {
          Origin: "https://game.example",
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "content-encoding,content-type,x-api-key,x-sdk-version",
        },
      });
      expect(res.status, path).toBe(204);
      expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
      expect(res.headers.get("Access-Control-Allow-Methods")).toBe("POST");
      const allowed = (res.headers.get("Access-Control-Allow-Headers") ?? "").toLowerCase().split(/,\s*/);
      expect(allowed).toEqual(
        expect.arrayContaining(["content-type", "content-encoding", "x-api-key", "x-sdk-version"]),
      );
      expect(res.headers.get("Access-Control-Allow-Credentials")).toBeNull();
    }
  });

  it("lets any origin read accepted and refused answers, Retry-After included", async () => {
    const accepted = await ingest(batchOf(2), t.keys.ingest.key, {
      path: "/v1/events",
      headers: { Origin: "https://game.example" },
    });
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const refused = await ingest(batchOf(1), null, { headers: { Origin: "https://game.example" } });
    await expectProblem(refused, 401);
    expect(refused.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(refused.headers.get("Access-Control-Expose-Headers")).toMatch(/Retry-After/);
  });
});
