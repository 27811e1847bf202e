import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { ReplicaEntry } from "../../durable-objects/key-replica.js";
import { tenants } from "../../schema/pg/schema.js";
import { createToken } from "../../workers/api/bootstrap.js";
import api from "../../workers/api/index.js";
import ingestWorker from "../../workers/ingest/index.js";
import { KEY_PREFIX, newSecret, sha256Hex } from "../../workers/shared/credentials/secrets.js";
import { batchOf } from "../support/batches.js";
import { Browser, seedUser, unescapeHtml } from "../support/browser.js";
import { BASE, seedTenant, type Tenant, withDb } from "../support/harness.js";
import { ingest, problemOf } from "../support/http.js";
import { TEST_OPERATOR_SECRET } from "../support/operator.js";
import { waitFor } from "../support/wait.js";

// The ingest edge through a Postgres outage (docs/accounts.md: "Ingest through a Postgres outage"). Each
// Worker's own handler runs here, in the test's isolate, with DATABASE_URL pointed at a closed port:
// everything else (RateLimiter, KeyReplica, Queues, ClickHouse) is real. SELF and the API Keys page
// run with Postgres up, as the API Worker would be for the changes it writes.

const CLOSED_DB = "postgres://nobody:nothing@127.0.0.1:1/telemetry";

let t: Tenant;
let owner: Browser;

beforeAll(async () => {
  t = await seedTenant("pro", "Outage Studio");
  const o = await seedUser(t.tenantId, "owner");
  owner = new Browser();
  expect((await owner.signIn(o.email, o.password)).status).toBe(303);
});

/** One request through a Worker's own handler with `overrides` on the environment. */
async function call(
  worker: { fetch?: ExportedHandler<Env>["fetch"] },
  overrides: Record<string, unknown>,
  request: Request,
): Promise<Response> {
  const ctx = createExecutionContext();
  const fetchHandler = worker.fetch;
  if (!fetchHandler) {
    throw new Error("no fetch handler");
  }
  const res = await fetchHandler(
    request as Request<unknown, IncomingRequestCfProperties>,
    { ...env, ...overrides } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

function batchRequest(key: string): Request {
  const body = batchOf(3);
  return new Request(`${BASE}/v1/events`, {
    method: "POST",
    body,
    headers: {
      "Content-Type": "application/x-protobuf",
      "Content-Length": String(body.byteLength),
      "X-SDK-Version": "unity-1.4.2",
      "X-API-Key": key,
    },
  });
}

/** POST /v1/events through the ingest Worker's handler, Postgres down unless `overrides` say otherwise. */
function ingestDuringOutage(key: string, overrides: Record<string, unknown> = {}): Promise<Response> {
  return call(ingestWorker, { DATABASE_URL: CLOSED_DB, ...overrides }, batchRequest(key));
}

async function replicaEntry(secret: string): Promise<ReplicaEntry | null> {
  const hash = await sha256Hex(secret);
  return env.KEY_REPLICA.get(env.KEY_REPLICA.idFromName(hash)).get();
}

/** Polls the replica until `check` holds (the ingest Worker writes it after the response). */
function replicaWhen(secret: string, check: (e: ReplicaEntry | null) => boolean) {
  return waitFor(() => replicaEntry(secret), check, {
    timeoutMs: 15_000,
    intervalMs: 50,
    message: "replica entry",
  });
}

const keysPath = (projectId: string) => `/settings/projects/${projectId}/api-keys`;

/** A key made on the API Keys page, as a person makes one: its secret and id. */
async function createOnPage(preset = "ingest"): Promise<{ secret: string; id: string }> {
  expect((await owner.submit(keysPath(t.projectId), { name: "Outage", preset })).status).toBe(303);
  const html = await (await owner.get(keysPath(t.projectId))).text();
  const secret = unescapeHtml(/id="new-key" class="secret" readonly value="([^"]+)"/.exec(html)?.[1] ?? "");
  expect(secret).toMatch(/^gta_/);
  const entry = await replicaEntry(secret);
  return { secret, id: entry?.principal?.keyId ?? "" };
}

async function revokeOnPage(keyId: string): Promise<void> {
  const res = await owner.submit(keysPath(t.projectId), {}, `${keysPath(t.projectId)}/${keyId}/revoke`);
  expect(res.status).toBe(303);
}

async function expectRetryable503(res: Response) {
  expect(res.status).toBe(503);
  expect(res.headers.get("Retry-After")).toBe("5");
  expect(await problemOf(res)).toMatchObject({ retryable: true, dependency: "Postgres" });
}

describe("stale-if-error", () => {
  it("an expired cache entry is served while Postgres is down, with nothing else to fall back on", async () => {
    const fresh = await seedTenant("pro", "Outage Stale");
    // A 1 ms TTL: the entry is expired by the next request, which must then ask Postgres first.
    const ttl = { CREDENTIAL_CACHE_TTL_MS: "1" };
    expect((await call(ingestWorker, ttl, batchRequest(fresh.keys.ingest.key))).status).toBe(202);
    // No replica either: the 202 below can only come from the expired entry.
    const res = await ingestDuringOutage(fresh.keys.ingest.key, { ...ttl, KEY_REPLICA: undefined });
    expect(res.status).toBe(202);
    // Still charged to the project's ingest bucket at its plan's limit.
    expect(res.headers.get("X-RateLimit-Limit")).toBe("36000");
  });

  it("an expired entry whose generation changed is not served: a revocation announced before the outage holds", async () => {
    const fresh = await seedTenant("pro", "Outage Revoked Before");
    const ttl = { CREDENTIAL_CACHE_TTL_MS: "1" };
    expect((await call(ingestWorker, ttl, batchRequest(fresh.keys.ingest.key))).status).toBe(202);
    await withDb((db) => db.update(tenants).set({ planId: "free" }).where(eq(tenants.id, fresh.tenantId)));
    const announced = await SELF.fetch(`${BASE}/api/operator/credential-changes`, {
      method: "POST",
      headers: { Authorization: `Bearer ${TEST_OPERATOR_SECRET}`, "Content-Type": "application/json" },
      body: JSON.stringify({ tenantId: fresh.tenantId }),
    });
    expect(announced.status).toBe(200);
    // The cached principal (plan pro) is stale; the replica has the new plan.
    const res = await ingestDuringOutage(fresh.keys.ingest.key, ttl);
    expect(res.status).toBe(202);
    expect(res.headers.get("X-RateLimit-Limit")).toBe("3600");
  });
});

describe("the key replica", () => {
  it("holds a key created on the API Keys page, which then works through an outage on an isolate that never saw it", async () => {
    const { secret } = await createOnPage();
    const entry = await replicaEntry(secret);
    expect(entry?.principal).toMatchObject({
      projectId: t.projectId,
      tenantId: t.tenantId,
      planId: "pro",
      scopes: ["events:write"],
    });
    expect(Math.abs((entry?.readAt ?? 0) - Date.now())).toBeLessThan(60_000);
    const res = await ingestDuringOutage(secret);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ status: "accepted" });
  });

  it("rotation (a new key, the old one revoked on the page): the new key is accepted and the old refused during an outage", async () => {
    const old = await createOnPage();
    // The old key is cached on this isolate before the rotation, as a busy key would be.
    expect((await call(ingestWorker, {}, batchRequest(old.secret))).status).toBe(202);
    const next = await createOnPage();
    await revokeOnPage(old.id);
    expect((await replicaEntry(old.secret))?.principal).toBeNull();

    expect((await ingestDuringOutage(next.secret)).status).toBe(202);
    // Revoked and announced: the cached entry is stale by generation, and the replica says revoked.
    const refused = await ingestDuringOutage(old.secret);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("Retry-After")).toBeNull();
  });

  it("follows a plan change announced through the operator route", async () => {
    const fresh = await seedTenant("pro", "Outage Plan");
    const announce = () =>
      SELF.fetch(`${BASE}/api/operator/credential-changes`, {
        method: "POST",
        headers: { Authorization: `Bearer ${TEST_OPERATOR_SECRET}`, "Content-Type": "application/json" },
        body: JSON.stringify({ tenantId: fresh.tenantId }),
      });
    expect((await announce()).status).toBe(200);
    // Every key of the tenant, not only the one a request used.
    for (const key of Object.values(fresh.keys)) {
      expect((await replicaEntry(key.key))?.principal?.planId).toBe("pro");
    }
    await withDb((db) => db.update(tenants).set({ planId: "free" }).where(eq(tenants.id, fresh.tenantId)));
    expect((await announce()).status).toBe(200);
    for (const key of Object.values(fresh.keys)) {
      expect((await replicaEntry(key.key))?.principal?.planId).toBe("free");
    }
    const res = await ingestDuringOutage(fresh.keys.ingest.key);
    expect(res.status).toBe(202);
    expect(res.headers.get("X-RateLimit-Limit")).toBe("3600");
  });

  it("is filled by the ingest Worker's own lookups, so keys made before it existed are covered", async () => {
    const fresh = await seedTenant("pro", "Outage Fill");
    expect(await replicaEntry(fresh.keys.ingest.key)).toBeNull();
    // Through the ingest Worker (another isolate), Postgres up.
    expect((await ingest(batchOf(1), fresh.keys.ingest.key)).status).toBe(202);
    const entry = await replicaWhen(fresh.keys.ingest.key, (e) => e?.principal != null);
    expect(entry?.principal?.projectId).toBe(fresh.projectId);
    // This isolate never saw the key.
    expect((await ingestDuringOutage(fresh.keys.ingest.key)).status).toBe(202);
  });

  it("keeps a revocation over an older read, and never stores a guessed key's refusal", async () => {
    const secret = newSecret(KEY_PREFIX);
    const stub = env.KEY_REPLICA.get(env.KEY_REPLICA.idFromName(await sha256Hex(secret)));
    expect(await stub.put({ readAt: 1000, principal: null }, false)).toBe(false);
    expect(await stub.get()).toBeNull();
    const principal = {
      keyId: crypto.randomUUID(),
      projectId: t.projectId,
      projectName: "x",
      tenantId: t.tenantId,
      planId: "pro",
      scopes: ["events:write"],
    };
    expect(await stub.put({ readAt: 2000, principal }, false)).toBe(true);
    expect(await stub.put({ readAt: 3000, principal: null }, true)).toBe(true);
    // A lookup that began before the revocation's own read loses.
    expect(await stub.put({ readAt: 2500, principal }, false)).toBe(false);
    expect(await stub.get()).toEqual({ readAt: 3000, principal: null });
  });
});

describe("keys that cannot be resolved during an outage", () => {
  it("a key neither cached nor replicated is a retryable 503, never a 401", async () => {
    const fresh = await seedTenant("pro", "Outage Unknown");
    await expectRetryable503(await ingestDuringOutage(fresh.keys.ingest.key));
  });

  it("a well-formed key nobody issued is a retryable 503 too: without Postgres it cannot be told apart", async () => {
    await expectRetryable503(await ingestDuringOutage(newSecret(KEY_PREFIX)));
  });

  it("a key whose replica cannot be reached either is a retryable 503", async () => {
    const { secret } = await createOnPage();
    await expectRetryable503(await ingestDuringOutage(secret, { KEY_REPLICA: undefined }));
  });
});

describe("reads during an outage", () => {
  it("an analytics read with a cached key and project list keeps answering from ClickHouse", async () => {
    const fresh = await seedTenant("pro", "Outage Reads");
    const ttl = { CREDENTIAL_CACHE_TTL_MS: "1" };
    const dashboard = () =>
      new Request(`${BASE}/api/v1/projects/${fresh.projectId}/dashboard?days=7`, {
        headers: { "X-API-Key": fresh.keys.read.key },
      });
    expect((await call(api, ttl, dashboard())).status).toBe(200);
    const res = await call(api, { ...ttl, DATABASE_URL: CLOSED_DB }, dashboard());
    expect(res.status).toBe(200);
  });

  it("an access token past its expiry is never served from the cache, Postgres or not", async () => {
    const fresh = await seedTenant("pro", "Outage Token");
    const { token, expiresAt } = await withDb((db) =>
      createToken(db, fresh.tenantId, ["analytics:read"], 60),
    );
    const expiry = new Date(expiresAt).getTime();
    // The request's clock (X-Test-Now) moves past the cache entry's TTL, then past the token's expiry.
    const projects = (now?: number) =>
      new Request(`${BASE}/api/v1/projects`, {
        headers: {
          Authorization: `Bearer ${token}`,
          ...(now === undefined ? {} : { "X-Test-Now": String(now) }),
        },
      });
    expect((await call(api, {}, projects())).status).toBe(200);
    // Cache entry expired, token not: served from the cache while Postgres is down.
    expect((await call(api, { DATABASE_URL: CLOSED_DB }, projects(expiry - 1000))).status).toBe(200);
    await expectRetryable503(await call(api, { DATABASE_URL: CLOSED_DB }, projects(expiry + 1)));
  });

  it("a read that needs Postgres is a retryable 503, not a 500", async () => {
    const fresh = await seedTenant("pro", "Outage Records");
    const ttl = { CREDENTIAL_CACHE_TTL_MS: "1" };
    const alerts = () =>
      new Request(`${BASE}/api/v1/projects/${fresh.projectId}/alerts`, {
        headers: { "X-API-Key": fresh.keys.read.key },
      });
    expect((await call(api, ttl, alerts())).status).toBe(200);
    await expectRetryable503(await call(api, { ...ttl, DATABASE_URL: CLOSED_DB }, alerts()));
  });
});
