import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { selectRows } from "../../workers/api/analytics/select.js";
import { createToken, revokeKey } from "../../workers/api/bootstrap.js";
import worker from "../../workers/api/index.js";
import { openClickHouse } from "../../workers/shared/clickhouse.js";
import { configOf } from "../../workers/shared/config.js";
import { DependencyDown, problemBody, toApiError } from "../../workers/shared/errors.js";
import { seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import type { OkBody } from "../support/schema.js";

let t: Tenant;
let other: Tenant;

beforeAll(async () => {
  t = await seedTenant("pro", "Core Studio");
  other = await seedTenant("studio", "Other Studio");
});

describe("outside /api", () => {
  it("redirects browsers to the sign-in page with 307, carrying the way back", async () => {
    for (const [path, location] of [
      ["/", "/sign-in"],
      ["/dashboard", "/sign-in?returnTo=%2Fdashboard"],
      ["/v1/projects?x=1", "/sign-in?returnTo=%2Fv1%2Fprojects%3Fx%3D1"],
    ] as const) {
      const res = await SELF.fetch(`http://127.0.0.1:8787${path}`, { redirect: "manual" });
      expect(res.status).toBe(307);
      expect(res.headers.get("location")).toBe(location);
    }
    const page = await SELF.fetch("http://127.0.0.1:8787/sign-in");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Sign in");
  });
});

describe("GET /v1/openapi.json", () => {
  it("is an OpenAPI 3.1.0 document, version 1.0, describing the routes", async () => {
    const res = await api("/v1/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      openapi: string;
      info: { version: string };
      paths: Record<string, unknown>;
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/v1/whoami", "/v1/projects", "/v1/projects/{id}/status", "/v1/events"]),
    );
    const ingestDoc = (doc.paths["/v1/events"] as { post: { responses: Record<string, unknown> } }).post;
    expect(Object.keys(ingestDoc.responses)).toEqual(
      expect.arrayContaining(["202", "400", "401", "403", "411", "413", "415", "429", "503"]),
    );
  });
});

describe("GET /v1/whoami", () => {
  it("answers ingest-only keys with projectId and scopes only", async () => {
    const res = await api("/v1/whoami", { key: t.keys.ingest.key });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      success: true,
      data: { projectId: t.projectId, scopes: ["events:write"] },
    });
  });

  it.each([
    ["read", ["analytics:read"]],
    ["readwrite", ["analytics:read", "resources:write"]],
    ["full", ["analytics:read", "resources:write", "data:admin"]],
  ] as const)("answers the %s preset with project, tenant and plan", async (preset, scopes) => {
    const res = await api("/v1/whoami", { key: t.keys[preset].key });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      success: true,
      data: {
        projectId: t.projectId,
        scopes,
        projectName: "Core Studio main",
        tenantId: t.tenantId,
        planId: "pro",
      },
    });
  });

  it("never returns the secret, and accepts only X-API-Key", async () => {
    const res = await api("/v1/whoami", { key: t.keys.full.key });
    expect(await res.text()).not.toContain(t.keys.full.key);
    const bearer = await api("/v1/whoami", { token: t.token });
    expect(bearer.status).toBe(401);
  });

  it("has its own bucket of 60 per hour, separate from the plan quota", async () => {
    const fresh = await seedTenant("free", "Whoami Studio");
    let last: Response | undefined;
    for (let i = 0; i < 60; i++) {
      last = await api("/v1/whoami", { key: fresh.keys.read.key });
      expect(last.status).toBe(200);
    }
    expect(last?.headers.get("X-RateLimit-Limit")).toBe("60");
    expect(last?.headers.get("X-RateLimit-Remaining")).toBe("0");
    const limited = await api("/v1/whoami", { key: fresh.keys.read.key });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("Retry-After"));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect((await problemOf(limited)).retry_after).toBe(retryAfter);
    // The plan quota was not touched by all that.
    const projects = await api("/v1/projects", { key: fresh.keys.read.key });
    expect(projects.status).toBe(200);
    expect(projects.headers.get("X-RateLimit-Limit")).toBe("1000");
    expect(projects.headers.get("X-RateLimit-Remaining")).toBe("999");
  });
});

describe("authentication", () => {
  it("401 for missing, malformed, unknown and revoked keys, as problem+json", async () => {
    const revoked = await seedTenant("pro", "Revoked Studio");
    await withDb((db) => revokeKey(db, revoked.keys.read.id));
    const cases = [{}, { key: "nope" }, { key: `gta_${"A".repeat(40)}` }, { key: revoked.keys.read.key }];
    for (const auth of cases) {
      const res = await api("/v1/projects", { ...auth, ip: "198.51.100.7" });
      expect(res.status).toBe(401);
      const p = await problemOf(res);
      expect(p.error_category).toBe("authentication");
      expect(res.headers.get("X-RateLimit-Limit")).toBe("300");
      expect(res.headers.get("Retry-After")).toBeNull();
    }
  });

  it("401 for an expired token", async () => {
    const { token, expiresAt } = await withDb((db) => createToken(db, t.tenantId, ["analytics:read"], 60));
    const expiry = new Date(expiresAt).getTime();
    expect((await api("/v1/projects", { token, now: expiry - 1 })).status).toBe(200);
    const res = await api("/v1/projects", { token, now: expiry });
    expect(res.status).toBe(401);
  });

  it("X-API-Key takes precedence over a Bearer token", async () => {
    // The token is valid, the key is not: precedence means 401.
    const res = await api("/v1/projects", { key: "gta_invalid", token: t.token });
    expect(res.status).toBe(401);
    const ok = await api("/v1/projects", { key: t.keys.read.key, token: "garbage" });
    expect(ok.status).toBe(200);
  });

  it("limits unauthenticated requests per client IP", async () => {
    const ip = "203.0.113.99";
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`ip:${ip}`));
    await stub.chargeWindow(300, 3600, 299);
    const last = await api("/v1/projects", { ip });
    expect(last.status).toBe(401);
    expect(last.headers.get("X-RateLimit-Remaining")).toBe("0");
    const limited = await api("/v1/projects", { ip });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("Retry-After"))).toBeGreaterThan(0);
  });
});

describe("scopes and project reach", () => {
  it("403 when the key lacks analytics:read", async () => {
    for (const path of ["/v1/projects", `/v1/projects/${t.projectId}/status`]) {
      const res = await api(path, { key: t.keys.ingest.key });
      expect(res.status).toBe(403);
      expect((await problemOf(res)).error_category).toBe("authorization");
    }
  });

  it("a key reaches only its own project; other projects are 404, even of its tenant", async () => {
    for (const id of [t.siblingProjectId, other.projectId, crypto.randomUUID()]) {
      const res = await api(`/v1/projects/${id}/status`, { key: t.keys.full.key });
      expect(res.status).toBe(404);
      expect((await problemOf(res)).error_category).toBe("not_found");
    }
  });

  it("a token reaches every project of its tenant and none of another tenant", async () => {
    for (const id of [t.projectId, t.siblingProjectId]) {
      expect((await api(`/v1/projects/${id}/status`, { token: t.token })).status).toBe(200);
    }
    expect((await api(`/v1/projects/${other.projectId}/status`, { token: t.token })).status).toBe(404);
  });

  it("400 names the parameter for a malformed project id", async () => {
    const res = await api("/v1/projects/not-a-uuid/status", { key: t.keys.read.key });
    expect(res.status).toBe(400);
    expect((await problemOf(res)).detail).toMatch(/^param\.id: /);
  });
});

describe("GET /v1/projects", () => {
  it("lists the whole tenant, and only it, with the documented fields", async () => {
    const res = await api("/v1/projects", { key: t.keys.read.key });
    expect(res.status).toBe(200);
    const body = (await res.json()) as OkBody<"/v1/projects">;
    expect(body.success).toBe(true);
    expect(body.data.map((p) => p.id).sort()).toEqual([t.projectId, t.siblingProjectId].sort());
    for (const p of body.data) {
      expect(Object.keys(p).sort()).toEqual(["createdAt", "id", "name", "tenantId", "updatedAt"]);
      expect(p.tenantId).toBe(t.tenantId);
      expect(new Date(p.createdAt as string).toISOString()).toBe(p.createdAt);
    }
  });
});

describe("rate-limit headers", () => {
  it("are on every response, success and error alike, and count down", async () => {
    const fresh = await seedTenant("free", "Headers Studio");
    const a = await api("/v1/projects", { key: fresh.keys.read.key });
    const b = await api(`/v1/projects/${crypto.randomUUID()}/status`, { key: fresh.keys.read.key });
    expect(a.status).toBe(200);
    expect(b.status).toBe(404);
    expect(a.headers.get("X-RateLimit-Limit")).toBe("1000");
    expect(a.headers.get("X-RateLimit-Remaining")).toBe("999");
    expect(b.headers.get("X-RateLimit-Remaining")).toBe("998");
    const reset = Number(b.headers.get("X-RateLimit-Reset"));
    const now = Date.now() / 1000;
    expect(reset).toBeGreaterThan(now + 3590);
    expect(reset).toBeLessThanOrEqual(now + 3601);
    expect(a.headers.get("Retry-After")).toBeNull();
  });

  it("429 with Retry-After once the plan's hourly quota is used", async () => {
    const fresh = await seedTenant("free", "Quota Studio");
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`tenant:${fresh.tenantId}`));
    await stub.chargeWindow(1000, 3600, 999);
    const last = await api("/v1/projects", { key: fresh.keys.read.key });
    expect(last.status).toBe(200);
    expect(last.headers.get("X-RateLimit-Remaining")).toBe("0");
    const limited = await api("/v1/projects", { key: fresh.keys.read.key });
    expect(limited.status).toBe(429);
    const p = await problemOf(limited);
    expect(p.error_category).toBe("rate_limit");
    expect(p.retryable).toBe(true);
    expect(Number(limited.headers.get("Retry-After"))).toBe(p.retry_after);
    expect(limited.headers.get("X-RateLimit-Remaining")).toBe("0");
    // Another tenant is unaffected.
    expect((await api("/v1/projects", { key: t.keys.read.key })).status).toBe(200);
  });
});

describe("the request's clock", () => {
  const at = Date.UTC(2026, 0, 15, 12, 0, 0);
  const dashboard = (headers: Record<string, string>) =>
    new Request(`http://127.0.0.1:8787/api/v1/projects/${t.projectId}/dashboard?days=7`, {
      headers: { "X-API-Key": t.keys.read.key, ...headers },
    });

  it("X-Test-Now sets it under the test config's local knob testClock", async () => {
    expect(JSON.parse(String(Reflect.get(env, "LOCAL_KNOBS")))).toEqual({ testClock: true });
    const res = await SELF.fetch(dashboard({ "X-Test-Now": String(at) }));
    expect(res.status).toBe(200);
    const data = ((await res.json()) as OkBody<"/v1/projects/{id}/status">).data;
    expect(data.kpis.fetchedAt).toBe(at);
    const bad = await SELF.fetch(dashboard({ "X-Test-Now": "yesterday" }));
    expect(bad.status).toBe(400);
    expect((await problemOf(bad)).detail).toContain("X-Test-Now");
  });

  it("ignores X-Test-Now without the binding, as in production", async () => {
    const production = { ...env, LOCAL_KNOBS: undefined } as Env;
    for (const header of [String(at), "yesterday"]) {
      const ctx = createExecutionContext();
      const before = Date.now();
      const request = dashboard({ "X-Test-Now": header }) as Request<unknown, IncomingRequestCfProperties>;
      const res = await worker.fetch(request, production, ctx);
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(200);
      const { fetchedAt } = ((await res.json()) as OkBody<"/v1/projects/{id}/status">).data.kpis;
      expect(fetchedAt).toBeGreaterThanOrEqual(before);
      expect(fetchedAt).toBeLessThanOrEqual(Date.now());
    }
  });
});

describe("a read ClickHouse does not answer in time", () => {
  it("is a retryable 503 naming ClickHouse, not a bare 500", async () => {
    // The client's clock is moved past its timeout (60 s) while the statement is in flight: its timer
    // fires before any answer can arrive, which real I/O cannot do within a synchronous advance.
    const ch = openClickHouse(configOf(env), 60_000);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let err: unknown;
    try {
      const pending = selectRows(ch, "SELECT 1 AS x", {}, { x: "unknown" }).then(
        () => null,
        (e: unknown) => e,
      );
      await vi.advanceTimersByTimeAsync(61_000);
      err = await pending;
    } finally {
      vi.useRealTimers();
    }
    expect(err).toBeInstanceOf(DependencyDown);
    const problem = problemBody(toApiError(err).code, toApiError(err).message);
    expect(problem).toMatchObject({ status: 503, retryable: true });
    expect(toApiError(err).extras).toMatchObject({ retryAfter: 5, extensions: { dependency: "ClickHouse" } });
    // The same client's statements within the timeout still answer.
    expect(await selectRows(ch, "SELECT 41 + 1 AS x", {}, { x: "unknown" })).toEqual([{ x: 42 }]);
  });
});
