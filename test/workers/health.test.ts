import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { startSession } from "../../workers/api/credentials/sessions.js";
import api from "../../workers/api/index.js";
import type { HostEnv } from "../support/app-host.js";
import { seedUser } from "../support/browser.js";
import { BASE, seedTenant, type Tenant, withDb } from "../support/harness.js";
import { problemOf } from "../support/http.js";
import { TEST_OPERATOR_SECRET } from "../support/operator.js";

// Liveness (GET /api/health, the ingest host's GET /health) and the operator's readiness view
// (GET /api/operator/health), docs/operations.md "Health and readiness". Outages are the API Worker's own
// handler run here with one engine's URL pointed at a closed port (as ingest-outage.test.ts does);
// everything else is real.

const CLOSED_DB = "postgres://nobody:nothing@127.0.0.1:1/telemetry";
const CLOSED_CH = "http://127.0.0.1:1";
const OPERATOR = { Authorization: `Bearer ${TEST_OPERATOR_SECRET}` };

let t: Tenant;
let sessionCookie = "";

beforeAll(async () => {
  t = await seedTenant("pro", "Health Studio");
  const owner = await seedUser(t.tenantId);
  sessionCookie = `gt_session=${await withDb((db) => startSession(db, owner.id))}`;
});

/** One request through the API Worker's handler, with `overrides` on its environment. */
async function call(path: string, headers: Record<string, string>, overrides: Record<string, unknown> = {}) {
  const ctx = createExecutionContext();
  const res = await api.fetch(
    new Request(`${BASE}${path}`, { headers: { "CF-Connecting-IP": "192.0.2.40", ...headers } }) as Request<
      unknown,
      IncomingRequestCfProperties
    >,
    { ...env, ...overrides } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

type Check = { status: "up" | "down"; latencyMs: number; error?: string } & Record<string, unknown>;
type Health = {
  status: "ready" | "degraded" | "down";
  checkedAt: string;
  checks: { postgres: Check; clickhouse: Check; queues: Check };
};

describe("GET /api/health", () => {
  it("answers 200 {status: ok} to anyone, with any credential or none, and says nothing else", async () => {
    const variants: Record<string, string>[] = [
      {},
      { "X-API-Key": t.keys.read.key },
      { "X-API-Key": `gta_${"C".repeat(40)}` },
      { Authorization: `Bearer ${t.token}` },
      { Cookie: sessionCookie },
    ];
    for (const headers of variants) {
      const res = await call("/api/health", headers);
      const label = JSON.stringify(Object.keys(headers));
      expect(res.status, label).toBe(200);
      expect(res.headers.get("content-type"), label).toMatch(/^application\/json/);
      expect(res.headers.get("cache-control"), label).toBe("no-store");
      expect(res.headers.getSetCookie(), label).toEqual([]);
      const text = await res.text();
      expect(JSON.parse(text), label).toEqual({ success: true, data: { status: "ok" } });
      for (const secret of [t.tenantId, t.projectId, TEST_OPERATOR_SECRET]) {
        expect(text).not.toContain(secret);
      }
    }
  });

  it("stays 200 with Postgres and ClickHouse down: liveness asks no dependency", async () => {
    const res = await call("/api/health", {}, { DATABASE_URL: CLOSED_DB, CLICKHOUSE_URL: CLOSED_CH });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, data: { status: "ok" } });
  });
});

describe("GET /health on the ingest Worker", () => {
  it("answers 200 {status: ok} without a key, from the deployed bundle", async () => {
    const res = await (env as HostEnv).INGEST.fetch("https://ingest.example.com/health");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await res.json()).toEqual({ success: true, data: { status: "ok" } });
  });

  it("other paths and methods stay what they were: POST /health is 404", async () => {
    const res = await (env as HostEnv).INGEST.fetch("https://ingest.example.com/health", { method: "POST" });
    expect(res.status).toBe(404);
  });
});

describe("GET /api/operator/health", () => {
  it("takes only the operator secret: none, a key, a token, a session or a wrong secret is 401", async () => {
    const variants: Record<string, string>[] = [
      {},
      { "X-API-Key": t.keys.full.key },
      { Authorization: `Bearer ${t.token}` },
      { Cookie: sessionCookie },
      { Authorization: "Bearer not-the-operator-secret-but-long-enough-0000" },
    ];
    for (const headers of variants) {
      const res = await call("/api/operator/health", headers);
      expect(res.status, JSON.stringify(Object.keys(headers))).toBe(401);
      const problem = await problemOf(res);
      expect(problem.detail).toBe("This endpoint requires the operator secret (Authorization: Bearer).");
      expect(problem).not.toHaveProperty("health");
    }
  });

  it("everything up: 200 with each dependency up and timed, the producers bound, dead letters counted", async () => {
    const res = await call("/api/operator/health", OPERATOR);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const { data } = (await res.json()) as { data: Health };
    for (const check of Object.values(data.checks)) {
      expect(check.status).toBe("up");
      // Timed, whatever the time: how fast a loaded machine answers is not what this proves.
      expect(check.latencyMs).toBeGreaterThanOrEqual(0);
      expect(Number.isFinite(check.latencyMs)).toBe(true);
    }
    expect(data.checks.queues.producers).toEqual([
      "telemetry-events",
      "telemetry-notifications",
      "telemetry-exports",
    ]);
    const parked = (data.checks.queues.deadLetters as { parked: number }).parked;
    // Other files' tests may have parked batches in the same bucket: the state follows the count.
    expect(data.status).toBe(parked > 0 ? "degraded" : "ready");
    expect(Date.parse(data.checkedAt)).not.toBeNaN();
  });

  it("a parked dead letter: 200, degraded, counted", async () => {
    const key = `events/${t.projectId}/2026-01-01/health-probe-test.bin`;
    await env.DEAD_LETTERS.put(key, new Uint8Array([1, 2, 3]));
    try {
      const res = await call("/api/operator/health", OPERATOR);
      expect(res.status).toBe(200);
      const { data } = (await res.json()) as { data: Health };
      expect(data.status).toBe("degraded");
      expect((data.checks.queues.deadLetters as { parked: number }).parked).toBeGreaterThanOrEqual(1);
    } finally {
      await env.DEAD_LETTERS.delete(key);
    }
  });

  it.each([
    ["postgres", { DATABASE_URL: CLOSED_DB }],
    ["clickhouse", { CLICKHOUSE_URL: CLOSED_CH }],
  ] as const)("%s down: a retryable 503 naming it, the others still up", async (name, overrides) => {
    const res = await call("/api/operator/health", OPERATOR, overrides);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const problem = (await problemOf(res)) as Awaited<ReturnType<typeof problemOf>> & { health: Health };
    expect(problem.retryable).toBe(true);
    expect(problem.detail).toBe(`Not ready: ${name} down.`);
    expect(problem.health.status).toBe("down");
    const { [name]: down, ...others } = problem.health.checks;
    expect(down).toMatchObject({ status: "down", error: "unreachable" });
    expect(down).not.toHaveProperty("message");
    for (const check of Object.values(others)) {
      expect(check.status).toBe("up");
    }
    // The error is a word: no URL, user or password of the engine leaks into the answer.
    expect(JSON.stringify(problem)).not.toContain("127.0.0.1:1");
  });

  it("both engines down: 503 naming both", async () => {
    const res = await call("/api/operator/health", OPERATOR, {
      DATABASE_URL: CLOSED_DB,
      CLICKHOUSE_URL: CLOSED_CH,
    });
    expect(res.status).toBe(503);
    expect((await problemOf(res)).detail).toBe("Not ready: postgres, clickhouse down.");
  });

  it("a producer not bound (a misconfigured deploy): 503 naming the queues", async () => {
    const res = await call("/api/operator/health", OPERATOR, { EXPORTS_QUEUE: undefined });
    expect(res.status).toBe(503);
    const problem = (await problemOf(res)) as Awaited<ReturnType<typeof problemOf>> & { health: Health };
    expect(problem.detail).toBe("Not ready: queues down.");
    expect(problem.health.checks.queues).toMatchObject({ status: "down", error: "unreachable" });
  });
});
