import {
  createExecutionContext,
  createMessageBatch,
  env,
  SELF,
  waitOnExecutionContext,
} from "cloudflare:test";
import { beforeAll, describe, expect, inject, it } from "vitest";
import api from "../../workers/api/index.js";
import { dispatchApiQueue } from "../../workers/api/queues.js";
import ingestWorker from "../../workers/ingest/index.js";
import { dispatchIngestQueue } from "../../workers/ingest/queues.js";
import { UnknownQueue } from "../../workers/shared/queues.js";
import type { HostEnv } from "../support/app-host.js";
import { BASE, seedTenant, type Tenant } from "../support/harness.js";
import { problemOf } from "../support/http.js";
import type { OkBody } from "../support/schema.js";

// Nothing listens on port 1 of loopback: a connection there is refused at once, as when an engine is down.
const CLOSED = "127.0.0.1:1";

/** The same SDK-style request, built afresh for each send (a body can be read once). */
function sdkRequest(path: string, key: string | null, init: { method?: string; body?: Uint8Array } = {}) {
  const body = init.body ?? new Uint8Array([0x0a, 0x00]);
  const headers = new Headers({
    "Content-Type": "application/x-protobuf",
    "Content-Length": String(body.byteLength),
    "X-SDK-Version": "1.0.0",
  });
  if (key !== null) {
    headers.set("X-API-Key", key);
  }
  const method = init.method ?? "POST";
  return new Request(`${BASE}${path}`, method === "POST" ? { method, headers, body } : { method, headers });
}

async function answer(res: Response) {
  return { status: res.status, body: await res.text(), contentType: res.headers.get("content-type") };
}

let t: Tenant;
beforeAll(async () => {
  t = await seedTenant("pro", "Split Studio");
});

describe("routing: the ingest Worker answers both ingest paths", () => {
  it("gives the same answer at /v1/events and /api/v1/events for the same requests", async () => {
    const cases: Array<[string | null, string]> = [
      [null, "POST"], // no key: 401
      ["gta_not-a-real-key-000000000000000000000000000", "POST"], // unknown key: 401
      [t.keys.read.key, "POST"], // a key without events:write: 403
      [t.keys.ingest.key, "GET"], // not POST: 405
    ];
    for (const [key, method] of cases) {
      const sdkPath = await answer(await SELF.fetch(sdkRequest("/v1/events", key, { method })));
      const appPath = await answer(await SELF.fetch(sdkRequest("/api/v1/events", key, { method })));
      expect(appPath).toEqual(sdkPath);
      expect(sdkPath.contentType).toBe("application/problem+json");
    }
    const statuses = await Promise.all(
      cases.map(
        async ([key, method]) => (await SELF.fetch(sdkRequest("/v1/events", key, { method }))).status,
      ),
    );
    expect(statuses).toEqual([401, 401, 403, 405]);
  });

  it("counts both paths against the one RateLimiter the API Worker defines", async () => {
    const fresh = await seedTenant("pro", "Split Limits");
    const first = await SELF.fetch(sdkRequest("/v1/events", fresh.keys.ingest.key));
    const second = await SELF.fetch(sdkRequest("/api/v1/events", fresh.keys.ingest.key));
    const limit = Number(first.headers.get("X-RateLimit-Limit"));
    expect(limit).toBe(36_000);
    expect(Number(first.headers.get("X-RateLimit-Remaining"))).toBe(limit - 1);
    expect(Number(second.headers.get("X-RateLimit-Remaining"))).toBe(limit - 2);
    // Exhaust the bucket from the API Worker's side: the ingest Worker sees the same object.
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`ingest:${fresh.projectId}`));
    await stub.chargeWindow(limit, 3600, limit - 2);
    for (const path of ["/v1/events", "/api/v1/events"]) {
      const res = await SELF.fetch(sdkRequest(path, fresh.keys.ingest.key));
      expect(res.status).toBe(429);
      expect((await problemOf(res)).detail).toMatch(/Ingest rate of 36000 batches per hour/);
    }
  });

  it("answers any other path on the ingest host with a 404 problem, never a redirect", async () => {
    const ingestHost = (env as HostEnv).INGEST;
    for (const path of ["/", "/v1/other", "/api/v1/whoami"]) {
      const res = await ingestHost.fetch(`https://ingest.example${path}`, { redirect: "manual" });
      expect(res.status).toBe(404);
      expect((await problemOf(res)).detail).toMatch(/\/v1\/events/);
    }
  });

  it("leaves everything else to the API Worker", async () => {
    const whoami = await SELF.fetch(`${BASE}/api/v1/whoami`, { headers: { "X-API-Key": t.keys.full.key } });
    expect(whoami.status).toBe(200);
    expect(((await whoami.json()) as OkBody<"/v1/whoami">).data.projectId).toBe(t.projectId);
    const page = await SELF.fetch(`${BASE}/dashboard`, { redirect: "manual" });
    expect(page.status).toBe(307);
    expect(page.headers.get("location")).toBe("/sign-in?returnTo=%2Fdashboard");
  });
});

describe("queue dispatch", () => {
  const message = { id: "m-1", timestamp: new Date(), attempts: 1, body: new Uint8Array([1]) };

  it("throws on a queue the ingest Worker does not consume, the API's queues included", async () => {
    for (const queue of ["telemetry-unknown", "telemetry-notifications", "telemetry-exports"]) {
      await expect(dispatchIngestQueue(createMessageBatch(queue, [message]), env)).rejects.toThrow(
        UnknownQueue,
      );
    }
  });

  it("throws on a queue the API Worker does not consume, the events queues included", async () => {
    for (const queue of ["telemetry-unknown", "telemetry-events", "telemetry-events-dlq"]) {
      await expect(dispatchApiQueue(createMessageBatch(queue, [message]), env)).rejects.toThrow(UnknownQueue);
    }
  });
});

describe("unknown paths under /api", () => {
  it("answer a 404 problem with valid credentials, not the sign-in redirect", async () => {
    for (const path of ["/api/v1/nope", "/api/v2/projects", "/api/v1/projects/x/y/z", "/api"]) {
      const res = await SELF.fetch(`${BASE}${path}`, {
        headers: { "X-API-Key": t.keys.full.key },
        redirect: "manual",
      });
      expect(res.status, path).toBe(404);
      expect(res.headers.get("location")).toBeNull();
      const p = await problemOf(res);
      expect(p.detail).toBe("No such endpoint.");
      expect(p.retryable).toBe(false);
    }
  });

  it("still answer 401 without credentials", async () => {
    const res = await SELF.fetch(`${BASE}/api/v1/nope`, { redirect: "manual" });
    expect(res.status).toBe(401);
  });
});

/** A Worker's own handler with one engine pointed at a closed port: everything else is real. */
async function withEngineDown(
  worker: { fetch?: ExportedHandler<Env>["fetch"] },
  overrides: Partial<Record<"CLICKHOUSE_URL" | "DATABASE_URL", string>>,
  request: Request,
): Promise<Response> {
  const ctx = createExecutionContext();
  const fetchHandler = worker.fetch;
  if (!fetchHandler) {
    throw new Error("no fetch handler");
  }
  const res = await fetchHandler(
    request as Request<unknown, IncomingRequestCfProperties>,
    { ...env, ...overrides },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

async function expectUnavailable(res: Response, dependency: string) {
  expect(res.status).toBe(503);
  expect(res.headers.get("Retry-After")).toBe("5");
  const p = await problemOf(res);
  expect(p).toMatchObject({ retryable: true, retry_after: 5, dependency, error_category: "internal" });
  expect(p.detail).toBe(`${dependency} is temporarily unavailable; retry the request.`);
}

describe("a dependency that is down is a retryable 503", () => {
  it("API Worker: an analytics read with ClickHouse down", async () => {
    const res = await withEngineDown(
      api,
      { CLICKHOUSE_URL: `http://${CLOSED}` },
      new Request(`${BASE}/api/v1/projects/${t.projectId}/dashboard?days=7`, {
        headers: { "X-API-Key": t.keys.read.key },
      }),
    );
    await expectUnavailable(res, "ClickHouse");
  });

  const heatmapRequest = () =>
    new Request(`${BASE}/api/v1/projects/${t.projectId}/heatmap?mapId=dust&cellSize=25&days=7`, {
      headers: { "X-API-Key": t.keys.read.key },
    });

  it("API Worker: a heatmap with ClickHouse down", async () => {
    const res = await withEngineDown(api, { CLICKHOUSE_URL: `http://${CLOSED}` }, heatmapRequest());
    await expectUnavailable(res, "ClickHouse");
  });

  // A 200 from ClickHouse that breaks off midway (the heatmap's answer is hundreds of KB) is a 503 too.
  it.each(["clickhouse-exception", "clickhouse-cut"])(
    "API Worker: a heatmap whose ClickHouse answer fails midway (%s)",
    async (path) => {
      const res = await withEngineDown(
        api,
        { CLICKHOUSE_URL: `${inject("hookUrl")}/${path}` },
        heatmapRequest(),
      );
      await expectUnavailable(res, "ClickHouse");
    },
  );

  it("API Worker: a Postgres-backed read with Postgres down", async () => {
    // A key this isolate has never cached, so the lookup must reach Postgres.
    const fresh = await seedTenant("pro", "Split API Postgres Down");
    const res = await withEngineDown(
      api,
      { DATABASE_URL: `postgres://nobody:nothing@${CLOSED}/telemetry` },
      new Request(`${BASE}/api/v1/projects`, { headers: { "X-API-Key": fresh.keys.read.key } }),
    );
    await expectUnavailable(res, "Postgres");
  });

  it("ingest Worker: a batch with Postgres down (the key cannot be checked)", async () => {
    // A key this isolate has never cached, so the lookup must reach Postgres.
    const fresh = await seedTenant("pro", "Split Postgres Down");
    const res = await withEngineDown(
      ingestWorker,
      { DATABASE_URL: `postgres://nobody:nothing@${CLOSED}/telemetry` },
      sdkRequest("/v1/events", fresh.keys.ingest.key),
    );
    await expectUnavailable(res, "Postgres");
  });
});
