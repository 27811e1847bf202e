import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AnnounceFailed, type AnnounceTarget, announce } from "../../scripts/admin/announce.js";
import { run } from "../../scripts/admin/commands.js";
import { revokeKey } from "../../workers/api/bootstrap.js";
import { resolveHashed } from "../../workers/api/credentials/gate.js";
import { configOf } from "../../workers/shared/config.js";
import { findKey } from "../../workers/shared/credentials/keys.js";
import { sha256Hex } from "../../workers/shared/credentials/secrets.js";
import { batchOf } from "../support/batches.js";
import { BASE, seedTenant, withDb } from "../support/harness.js";
import { api, ingest, problemOf } from "../support/http.js";
import { TEST_OPERATOR_SECRET } from "../support/operator.js";
import type { OkBody } from "../support/schema.js";

// Changes made by the admin CLI apply from the next request: the CLI commits, then announces through
// the API Worker's operator route (workers/api/credentials/operator.ts), exactly as below.

/** The CLI's announcement, sent to the Worker under test instead of over the network. */
const target: AnnounceTarget = { url: BASE, secret: TEST_OPERATOR_SECRET, fetch: (r) => SELF.fetch(r) };

/** One admin CLI command as scripts/admin.ts runs it: commit, then announce what it changed. */
async function admin(words: string[], values: Record<string, string>) {
  const { result, change } = await withDb((db) => run(db, words, values, []));
  if (change) {
    await announce(target, change);
  }
  return { result, change };
}

function operator(body: unknown, authorization: string | null = `Bearer ${TEST_OPERATOR_SECRET}`) {
  const headers = new Headers({ "Content-Type": "application/json", "CF-Connecting-IP": "192.0.2.40" });
  if (authorization !== null) {
    headers.set("Authorization", authorization);
  }
  return SELF.fetch(`${BASE}/api/operator/credential-changes`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
}

describe("admin CLI changes take effect from the next request", () => {
  it("key revoke: the very next API and ingest requests with the revoked keys are refused", async () => {
    const t = await seedTenant("pro", "Operator Revoke");
    const full = t.keys.full.key;
    const ingestKey = t.keys.ingest.key;
    // Warm both Workers' caches; the full preset carries no events:write, so ingest uses the ingest key.
    expect((await api("/v1/projects", { key: full })).status).toBe(200);
    expect((await api("/v1/whoami", { key: full })).status).toBe(200);
    expect((await ingest(batchOf(1), ingestKey)).status).toBe(202);

    const revoked = await admin(["key", "revoke"], { id: t.keys.full.id });
    expect(revoked.result).toMatchObject({ id: t.keys.full.id });
    expect(revoked.change).toEqual({ tenantId: t.tenantId, projectIds: [t.projectId] });
    await admin(["key", "revoke"], { id: t.keys.ingest.id });

    expect((await api("/v1/projects", { key: full })).status).toBe(401);
    expect((await api("/v1/whoami", { key: full })).status).toBe(401);
    expect((await ingest(batchOf(1), ingestKey)).status).toBe(401);
    // The tenant's other keys are read again and still work.
    expect((await api("/v1/projects", { key: t.keys.read.key })).status).toBe(200);
  });

  it("without the announcement the cached key would still pass: what the announcement fixes", async () => {
    const t = await seedTenant("pro", "Operator Unannounced");
    const key = t.keys.read.key;
    expect((await api("/v1/projects", { key })).status).toBe(200);
    const { change } = await withDb((db) => run(db, ["key", "revoke"], { id: t.keys.read.id }, []));
    expect((await api("/v1/projects", { key })).status).toBe(200);
    await announce(target, change ?? { tenantId: "" });
    expect((await api("/v1/projects", { key })).status).toBe(401);
  });

  it("project create: a token's cached project list shows the new project on the next request", async () => {
    const t = await seedTenant("pro", "Operator Project");
    const list = async () =>
      ((await (await api("/v1/projects", { token: t.token })).json()) as OkBody<"/v1/projects">).data;
    expect(await list()).toHaveLength(2);
    const { result, change } = await admin(["project", "create"], { tenant: t.tenantId, name: "Third" });
    expect(change).toEqual({ tenantId: t.tenantId });
    const created = (result as { id: string }).id;
    expect((await list()).map((p) => p.id)).toContain(created);
    expect((await api(`/v1/projects/${created}/builds?days=7`, { token: t.token })).status).toBe(200);
  });

  it("commands that change nothing cached announce nothing", async () => {
    const t = await seedTenant("pro", "Operator Nothing");
    const { change } = await withDb((db) =>
      run(db, ["token", "create"], { tenant: t.tenantId, scopes: "analytics:read" }, []),
    );
    expect(change).toBeNull();
  });

  it("a new key is announced for its project, so the announcement writes it to the key replica", async () => {
    const t = await seedTenant("pro", "Operator New Key");
    const { result, change } = await admin(["key", "create"], { project: t.projectId, preset: "ingest" });
    expect(change).toEqual({ tenantId: t.tenantId, projectIds: [t.projectId] });
    const secret = (result as { key: string }).key;
    const entry = await env.KEY_REPLICA.get(env.KEY_REPLICA.idFromName(await sha256Hex(secret))).get();
    expect(entry?.principal).toMatchObject({ projectId: t.projectId, tenantId: t.tenantId, planId: "pro" });
  });
});

describe("the operator route", () => {
  it("announces the tenant's plan, whoami and every project's ingest bucket", async () => {
    const t = await seedTenant("pro", "Operator Route");
    const gone = crypto.randomUUID();
    const res = await operator({ tenantId: t.tenantId, projectIds: [gone] });
    expect(res.status).toBe(200);
    // plan + whoami + two projects + the listed (already deleted) one.
    expect(await res.json()).toEqual({ success: true, data: { tenantId: t.tenantId, buckets: 5 } });
  });

  it("refuses anything but the operator secret with 401, and announces nothing then", async () => {
    const t = await seedTenant("pro", "Operator Refused");
    const key = t.keys.read.key;
    expect((await api("/v1/projects", { key })).status).toBe(200);
    await withDb((db) => revokeKey(db, t.keys.read.id));
    for (const authorization of [
      null,
      `Bearer ${TEST_OPERATOR_SECRET}x`,
      `Bearer ${TEST_OPERATOR_SECRET.slice(0, -1)}`,
      TEST_OPERATOR_SECRET,
      `Bearer ${t.token}`,
    ]) {
      const res = await operator({ tenantId: t.tenantId }, authorization);
      expect(res.status, String(authorization)).toBe(401);
      expect((await problemOf(res)).error_category).toBe("authentication");
    }
    // Still cached: none of the refused calls bumped a generation.
    expect((await api("/v1/projects", { key })).status).toBe(200);
  });

  it("answers 400 for a body without a tenant UUID or with bad projectIds", async () => {
    for (const body of [
      null,
      [],
      {},
      { tenantId: "t1" },
      { tenantId: crypto.randomUUID(), projectIds: ["x"] },
    ]) {
      const res = await operator(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await problemOf(res)).error_category).toBe("validation");
    }
  });
});

describe("the CLI's announce", () => {
  it("fails with the Worker's reason for a wrong secret, and says an unreachable Worker is unreachable", async () => {
    const change = { tenantId: crypto.randomUUID() };
    await expect(announce({ ...target, secret: "wrong" }, change)).rejects.toThrow(
      new AnnounceFailed(
        `${BASE} answered 401: This endpoint requires the operator secret (Authorization: Bearer).`,
      ),
    );
    const down: AnnounceTarget = {
      ...target,
      fetch: () => Promise.reject(new TypeError("connection refused")),
    };
    await expect(announce(down, change)).rejects.toThrow(
      new AnnounceFailed(`${BASE} unreachable (connection refused)`),
    );
  });

  it("tries again after a Worker's 503 (a restart mid-request), and reports the third", async () => {
    const change = { tenantId: crypto.randomUUID() };
    const seen: number[] = [];
    const restarting = (failures: number): AnnounceTarget => ({
      ...target,
      fetch: async (request) => {
        if (seen.length < failures) {
          seen.push(503);
          return new Response("Your worker restarted mid-request. Please try sending the request again.", {
            status: 503,
          });
        }
        const res = await (target.fetch ?? fetch)(request);
        seen.push(res.status);
        return res;
      },
    });
    await announce(restarting(1), change);
    expect(seen).toEqual([503, 200]);
    seen.length = 0;
    await expect(announce(restarting(3), change)).rejects.toThrow(
      new AnnounceFailed(
        `${BASE} answered 503: Your worker restarted mid-request. Please try sending the request again.`,
      ),
    );
    expect(seen).toEqual([503, 503, 503]);
  });
});

describe("one key lookup for both Workers", () => {
  it("live, revoked, unknown and another project's key: the same principal the API's gate resolves", async () => {
    const t = await seedTenant("pro", "Lookup Studio");
    const config = configOf(env);
    const hashOf = (key: string) => sha256Hex(key);
    const live = await findKey(config, await hashOf(t.keys.readwrite.key));
    expect(live).toEqual({
      kind: "key",
      keyId: t.keys.readwrite.id,
      projectId: t.projectId,
      projectName: "Lookup Studio main",
      tenantId: t.tenantId,
      planId: "pro",
      scopes: ["analytics:read", "resources:write"],
      lastUsedAt: null,
    });
    expect(await resolveHashed(config, `key:${await hashOf(t.keys.readwrite.key)}`)).toEqual(live);

    const sibling = await withDb((db) =>
      run(db, ["key", "create"], { project: t.siblingProjectId, preset: "ingest" }, []),
    );
    const siblingKey = (sibling.result as { key: string }).key;
    expect(await findKey(config, await hashOf(siblingKey))).toMatchObject({
      projectId: t.siblingProjectId,
      projectName: "Lookup Studio sibling",
      scopes: ["events:write"],
    });

    await withDb((db) => revokeKey(db, t.keys.readwrite.id));
    expect(await findKey(config, await hashOf(t.keys.readwrite.key))).toBeNull();
    expect(await findKey(config, await hashOf(`gta_${"Z".repeat(40)}`))).toBeNull();
  });
});
