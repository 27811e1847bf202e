import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { oauthTokens, projects, tenants } from "../../schema/pg/schema.js";
import { revokeKey } from "../../workers/api/bootstrap.js";
import { announceChange } from "../../workers/shared/credentials/cache.js";
import { batchOf } from "../support/batches.js";
import { seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, ingest } from "../support/http.js";
import type { OkBody } from "../support/schema.js";

// The cache's bounds (docs/accounts.md: "Credentials without Postgres"): a change made through the Workers is
// announced and takes effect on the next request on every path; a change made behind the Workers' back
// (here: plain SQL, as the admin CLI does) is not seen until the entry's TTL runs out, which is what
// proves the answers before the announcement came from the cache and not from Postgres.

let t: Tenant;

beforeEach(async () => {
  t = await seedTenant("pro", `Cache ${crypto.randomUUID().slice(0, 8)}`);
});

async function names(auth: { key?: string; token?: string }): Promise<string[]> {
  const res = await api("/v1/projects", auth);
  expect(res.status).toBe(200);
  return ((await res.json()) as OkBody<"/v1/projects">).data.map((p) => p.name);
}

describe("revocation", () => {
  it("a revoked API key is refused on the next request once announced: plan bucket, whoami and ingest", async () => {
    const key = t.keys.full.key;
    // Warm every path's cache; the full preset carries no events:write, so ingest uses the ingest key.
    expect((await api("/v1/projects", { key })).status).toBe(200);
    expect((await api("/v1/whoami", { key })).status).toBe(200);
    expect((await ingest(batchOf(1), t.keys.ingest.key)).status).toBe(202);
    expect((await api("/v1/projects", { key: t.keys.read.key })).status).toBe(200);

    await withDb(async (db) => {
      await revokeKey(db, t.keys.full.id);
      await revokeKey(db, t.keys.ingest.id);
    });
    // Not announced yet: the cached principals still pass (this is the TTL bound of out-of-band changes).
    expect((await api("/v1/projects", { key })).status).toBe(200);
    expect((await api("/v1/whoami", { key })).status).toBe(200);
    expect((await ingest(batchOf(1), t.keys.ingest.key)).status).toBe(202);

    await announceChange(env, { tenantId: t.tenantId, projectIds: [t.projectId] });
    expect((await api("/v1/projects", { key })).status).toBe(401);
    expect((await api("/v1/whoami", { key })).status).toBe(401);
    const refused = await ingest(batchOf(1), t.keys.ingest.key);
    expect(refused.status).toBe(401);
    // Charged to the client's address as any bad key is, not to the project's ingest bucket.
    expect(refused.headers.get("X-RateLimit-Limit")).toBe("300");
    // Another key of the same tenant, cached before the announcement, is read again and still works.
    expect((await api("/v1/projects", { key: t.keys.read.key })).status).toBe(200);
  });

  it("a revoked access token is refused on the next request once announced", async () => {
    expect((await api("/v1/projects", { token: t.token })).status).toBe(200);
    await withDb((db) =>
      db.update(oauthTokens).set({ revokedAt: new Date() }).where(eq(oauthTokens.tenantId, t.tenantId)),
    );
    expect((await api("/v1/projects", { token: t.token })).status).toBe(200);
    await announceChange(env, { tenantId: t.tenantId });
    expect((await api("/v1/projects", { token: t.token })).status).toBe(401);
  });

  it("an announcement for another tenant leaves a cached principal alone", async () => {
    const key = t.keys.read.key;
    expect((await api("/v1/projects", { key })).status).toBe(200);
    await withDb((db) => revokeKey(db, t.keys.read.id));
    const other = await seedTenant("pro", "Cache Bystander");
    await announceChange(env, { tenantId: other.tenantId, projectIds: [other.projectId] });
    expect((await api("/v1/projects", { key })).status).toBe(200);
  });
});

describe("plan change", () => {
  it("the new plan's limits apply from the next request once announced, API and ingest", async () => {
    const key = t.keys.read.key;
    expect((await api("/v1/projects", { key })).headers.get("X-RateLimit-Limit")).toBe("10000");
    expect((await ingest(batchOf(1), t.keys.ingest.key)).headers.get("X-RateLimit-Limit")).toBe("36000");

    await withDb((db) => db.update(tenants).set({ planId: "free" }).where(eq(tenants.id, t.tenantId)));
    expect((await api("/v1/projects", { key })).headers.get("X-RateLimit-Limit")).toBe("10000");

    await announceChange(env, { tenantId: t.tenantId, projectIds: [t.projectId, t.siblingProjectId] });
    const after = await api("/v1/projects", { key });
    expect(after.headers.get("X-RateLimit-Limit")).toBe("1000");
    // The count carried on: three requests so far in this tenant's window.
    expect(after.headers.get("X-RateLimit-Remaining")).toBe("997");
    const ingested = await ingest(batchOf(1), t.keys.ingest.key);
    expect(ingested.status).toBe(202);
    expect(ingested.headers.get("X-RateLimit-Limit")).toBe("3600");
    expect(ingested.headers.get("X-RateLimit-Remaining")).toBe("3598");
    const who = (await (await api("/v1/whoami", { key: t.keys.full.key })).json()) as {
      data: { planId: string };
    };
    expect(who.data.planId).toBe("free");
  });
});

describe("project changes", () => {
  it("a deleted project disappears from the list and answers 404 once announced", async () => {
    const token = t.token;
    expect(await names({ token })).toHaveLength(2);
    expect((await api(`/v1/projects/${t.siblingProjectId}/builds?days=7`, { token })).status).toBe(200);

    await withDb((db) => db.delete(projects).where(eq(projects.id, t.siblingProjectId)));
    // Cached until announced (or the TTL runs out).
    expect(await names({ token })).toHaveLength(2);

    await announceChange(env, { tenantId: t.tenantId, projectIds: [t.siblingProjectId] });
    expect(await names({ token })).toEqual([expect.stringContaining("main")]);
    expect((await api(`/v1/projects/${t.siblingProjectId}/builds?days=7`, { token })).status).toBe(404);
  });

  it("a renamed project shows its new name once announced", async () => {
    const key = t.keys.read.key;
    const before = await names({ key });
    await withDb((db) => db.update(projects).set({ name: "Renamed" }).where(eq(projects.id, t.projectId)));
    expect(await names({ key })).toEqual(before);
    await announceChange(env, { tenantId: t.tenantId });
    expect(await names({ key })).toContain("Renamed");
  });
});

describe("limits stay exact on a warm cache", () => {
  it("a concurrent burst past the quota: exactly the remaining requests pass, the rest are 429", async () => {
    const fresh = await seedTenant("free", "Cache Burst");
    const key = fresh.keys.read.key;
    expect((await api("/v1/projects", { key })).status).toBe(200);
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`tenant:${fresh.tenantId}`));
    await stub.chargeWindow(1000, 3600, 994); // 995 used: 5 left
    const answers = await Promise.all(Array.from({ length: 12 }, () => api("/v1/projects", { key })));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
    const remaining = answers
      .filter((r) => r.status === 200)
      .map((r) => r.headers.get("X-RateLimit-Remaining"));
    expect(remaining.sort()).toEqual(["0", "1", "2", "3", "4"]);
    for (const r of answers.filter((a) => a.status === 429)) {
      expect(Number(r.headers.get("Retry-After"))).toBeGreaterThan(0);
      expect(r.headers.get("X-RateLimit-Remaining")).toBe("0");
    }
  });

  it("a stale cached key is not charged: the request after an announced revocation counts only per IP", async () => {
    const key = t.keys.read.key;
    const first = await api("/v1/projects", { key });
    expect(first.headers.get("X-RateLimit-Remaining")).toBe("9999");
    await withDb((db) => revokeKey(db, t.keys.read.id));
    await announceChange(env, { tenantId: t.tenantId });
    expect((await api("/v1/projects", { key, ip: "203.0.113.77" })).status).toBe(401);
    const next = await api("/v1/projects", { key: t.keys.readwrite.key });
    expect(next.headers.get("X-RateLimit-Remaining")).toBe("9998");
  });
});
