import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  alertRules,
  dataExports,
  erasures,
  projects,
  tenants,
  thresholdProfiles,
} from "../../schema/pg/schema.js";
import { run } from "../../scripts/admin/commands.js";
import apiWorker from "../../workers/api/index.js";
import { sha256Hex } from "../../workers/shared/credentials/secrets.js";
import { json } from "../support/alerts.js";
import { auditEntries, onlyAuditEntry } from "../support/audit.js";
import { Browser, seedUser } from "../support/browser.js";
import { eraseAndWait } from "../support/erasures.js";
import { BASE, seedTenant, type Tenant, withDb } from "../support/harness.js";
import { type Auth, api } from "../support/http.js";
import { multipart, png } from "../support/images.js";
import { CLI, cliLogin } from "../support/oauth.js";
import { insertMap, insertProfile } from "../support/records.js";
import type { Ok } from "../support/schema.js";
import { waitFor } from "../support/wait.js";

// One entry per resource action (docs/accounts.md, "Audit log"): who (key, session, token, operator),
// what, the target, the studio and project, IP and user agent, the outcome; a refused request (4xx)
// changes nothing and records nothing.

const IP = "203.0.113.77";
const UA = "audit-resources-test/1.0";

// Each request a clock of its own, a second after the last: entries (stamped with the request's clock)
// sort in the order the requests were sent.
let clock = Date.now() - 600_000;
const tick = () => {
  clock += 1000;
  return clock;
};

/** A JSON request with the client's address and user agent, as Cloudflare hands it to the Worker. */
function call(path: string, auth: Auth, method: string, body?: unknown): Promise<Response> {
  return api(
    path,
    { ...auth, ip: IP, now: tick() },
    {
      method,
      headers: { "content-type": "application/json", "user-agent": UA },
      body: body === undefined ? undefined : JSON.stringify(body),
    },
  );
}

const actions = async (tenantId: string) => (await auditEntries(tenantId)).map((e) => e.action);

/** The fields every entry made by a key of `t` on its main project carries. */
function byKey(t: Tenant, keyId: string) {
  return {
    tenantId: t.tenantId,
    projectId: t.projectId,
    actorType: "api_key",
    actorId: keyId,
    ip: IP,
    userAgent: UA,
    outcome: "success",
    count: 1,
  };
}

/** Runs a request expected to be refused with `status`, and proves it recorded nothing in either studio. */
async function refusedQuietly(
  studios: Tenant[],
  status: number,
  request: () => Promise<Response>,
): Promise<void> {
  const before = await Promise.all(studios.map((s) => auditEntries(s.tenantId)));
  const res = await request();
  expect(res.status, await res.text()).toBe(status);
  const after = await Promise.all(studios.map((s) => auditEntries(s.tenantId)));
  expect(after).toEqual(before);
}

let other: Tenant;

beforeAll(async () => {
  other = await seedTenant("pro", "Audit Resources Neighbour");
});

describe("alert rules", () => {
  it("records created, updated, deactivated and reactivated once each; refusals record nothing", async () => {
    const t = await seedTenant("pro", "Audit Rules");
    const mapId = await insertMap(t.projectId, "arena");
    const profile = await insertProfile(t.projectId, { name: "Fast", fpsWarn: 30, fpsGood: 60 });
    const rw = { key: t.keys.readwrite.key };
    const path = `/v1/projects/${t.projectId}/alerts`;
    const body = {
      name: "Arena fps",
      mapId,
      thresholdProfileId: profile,
      metric: "fps",
      thresholdLevel: "warn",
      failPercentage: 20,
      evaluationDays: 7,
      cellSize: 25,
      cooldownMinutes: 60,
    };

    // Refused: no resources:write, a bad field, another studio's project, an unknown rule.
    await refusedQuietly([t, other], 403, () => call(path, { key: t.keys.read.key }, "POST", body));
    await refusedQuietly([t, other], 400, () => call(path, rw, "POST", { ...body, failPercentage: 500 }));
    await refusedQuietly([t, other], 404, () =>
      call(`/v1/projects/${other.projectId}/alerts`, rw, "POST", body),
    );
    await refusedQuietly([t, other], 404, () => call(`${path}/${crypto.randomUUID()}`, rw, "DELETE"));
    expect(
      await withDb((db) => db.select().from(alertRules).where(eq(alertRules.projectId, t.projectId))),
    ).toEqual([]);

    const rule = await json<Ok<"/v1/projects/{id}/alerts", "post">>(await call(path, rw, "POST", body), 201);
    expect(await onlyAuditEntry(t.tenantId, "alert_rule.created")).toMatchObject({
      ...byKey(t, t.keys.readwrite.id),
      targetType: "alert_rule",
      targetId: rule.id,
      targetLabel: "Arena fps",
      detail: { metric: "fps", thresholdLevel: "warn", mapId },
    });

    await json(
      await call(`${path}/${rule.id}`, rw, "PATCH", { name: "Arena fps (ranked)", cellSize: 50 }),
      200,
    );
    expect(await onlyAuditEntry(t.tenantId, "alert_rule.updated")).toMatchObject({
      ...byKey(t, t.keys.readwrite.id),
      targetId: rule.id,
      targetLabel: "Arena fps (ranked)",
      detail: { fields: "cellSize,name" },
    });

    // Paused by PATCH, resumed by PATCH, paused by DELETE: each its own entry.
    await json(await call(`${path}/${rule.id}`, rw, "PATCH", { isActive: false }), 200);
    await json(await call(`${path}/${rule.id}`, rw, "PATCH", { isActive: true }), 200);
    await refusedQuietly([t, other], 403, () =>
      call(`${path}/${rule.id}`, { key: t.keys.read.key }, "DELETE"),
    );
    await json(await call(`${path}/${rule.id}`, rw, "DELETE"), 200);
    const entries = await auditEntries(t.tenantId);
    expect(entries.map((e) => e.action)).toEqual([
      "alert_rule.created",
      "alert_rule.updated",
      "alert_rule.deactivated",
      "alert_rule.reactivated",
      "alert_rule.deactivated",
    ]);
    expect(entries.every((e) => e.targetId === rule.id && e.projectId === t.projectId)).toBe(true);
    expect(await auditEntries(other.tenantId)).toEqual([]);
  });

  it("names the signed-in owner for a session's change, the operator for an admin-made token's, the client and its user for an OAuth token's", async () => {
    const t = await seedTenant("pro", "Audit Rules Session");
    const owner = await seedUser(t.tenantId, "owner");
    const browser = new Browser(IP);
    expect((await browser.signIn(owner.email, owner.password)).status).toBe(303);

    const res = await browser.fetch(`/api/v1/projects/${t.projectId}/threshold-profiles`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: BASE, "User-Agent": UA },
      body: JSON.stringify({ name: "Owner's profile", fpsWarn: 30 }),
    });
    const created = await json<Ok<"/v1/projects/{id}/threshold-profiles", "post">>(res, 201);
    expect(await onlyAuditEntry(t.tenantId, "threshold_profile.created")).toMatchObject({
      tenantId: t.tenantId,
      projectId: t.projectId,
      actorType: "user",
      actorId: owner.id,
      actorLabel: owner.email,
      actorUserId: owner.id,
      targetId: created.id,
      ip: IP,
      userAgent: UA,
      outcome: "success",
    });

    const byToken = await json<Ok<"/v1/projects/{id}/threshold-profiles", "post">>(
      await call(`/v1/projects/${t.projectId}/threshold-profiles`, { token: t.token }, "POST", {
        name: "CI",
      }),
      201,
    );
    const entries = (await auditEntries(t.tenantId, "threshold_profile.created")).filter(
      (e) => e.targetId === byToken.id,
    );
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actorType: "operator", actorId: null, projectId: t.projectId });
    expect(await auditEntries(t.tenantId, "threshold_profile.created")).toHaveLength(2);

    // The CLI's OAuth token: the client, acting for the person who allowed it.
    const { access_token } = await cliLogin(browser, t.tenantId);
    const channel = await json<Ok<"/v1/projects/{id}/channels", "post">>(
      await call(`/v1/projects/${t.projectId}/channels`, { token: access_token }, "POST", {
        kind: "webhook",
        name: "CLI hook",
        url: "https://example.com/cli",
      }),
      201,
    );
    expect(await onlyAuditEntry(t.tenantId, "channel.created")).toMatchObject({
      actorType: "oauth_client",
      actorId: CLI,
      actorUserId: owner.id,
      targetId: channel.id,
      projectId: t.projectId,
      ip: IP,
      userAgent: UA,
    });
    expect((await onlyAuditEntry(t.tenantId, "channel.created")).actorLabel).toContain(owner.email);
  });
});

describe("threshold profiles", () => {
  it("records created, updated (the fields sent) and deleted; an empty patch and refusals record nothing", async () => {
    const t = await seedTenant("pro", "Audit Profiles");
    const rw = { key: t.keys.readwrite.key };
    const path = `/v1/projects/${t.projectId}/threshold-profiles`;
    await refusedQuietly([t, other], 403, () => call(path, { key: t.keys.read.key }, "POST", { name: "P" }));
    await refusedQuietly([t, other], 400, () => call(path, rw, "POST", { name: "P", fpsWarn: "fast" }));
    await refusedQuietly([t, other], 404, () =>
      call(`/v1/projects/${other.projectId}/threshold-profiles`, rw, "POST", { name: "P" }),
    );

    const p = await json<Ok<"/v1/projects/{id}/threshold-profiles", "post">>(
      await call(path, rw, "POST", { name: "Console", fpsWarn: 30 }),
      201,
    );
    expect(await onlyAuditEntry(t.tenantId, "threshold_profile.created")).toMatchObject({
      ...byKey(t, t.keys.readwrite.id),
      targetType: "threshold_profile",
      targetId: p.id,
      targetLabel: "Console",
    });
    await json(await call(`${path}/${p.id}`, rw, "PATCH", {}), 200);
    await refusedQuietly([t, other], 400, () => call(`${path}/${p.id}`, rw, "PATCH", { fpsGood: -1 }));
    await refusedQuietly([t, other], 404, () =>
      call(`${path}/${crypto.randomUUID()}`, rw, "PATCH", { fpsGood: 60 }),
    );
    await json(await call(`${path}/${p.id}`, rw, "PATCH", { fpsGood: 60, name: "Console 60" }), 200);
    expect(await onlyAuditEntry(t.tenantId, "threshold_profile.updated")).toMatchObject({
      ...byKey(t, t.keys.readwrite.id),
      targetId: p.id,
      targetLabel: "Console 60",
      detail: { fields: "fpsGood,name" },
    });
    await refusedQuietly([t, other], 403, () => call(`${path}/${p.id}`, { key: t.keys.read.key }, "DELETE"));
    await json(await call(`${path}/${p.id}`, rw, "DELETE"), 200);
    expect(await onlyAuditEntry(t.tenantId, "threshold_profile.deleted")).toMatchObject({
      ...byKey(t, t.keys.readwrite.id),
      targetId: p.id,
      targetLabel: "Console 60",
    });
    expect(await actions(t.tenantId)).toEqual([
      "threshold_profile.created",
      "threshold_profile.updated",
      "threshold_profile.deleted",
    ]);
    expect(
      await withDb((db) =>
        db.select().from(thresholdProfiles).where(eq(thresholdProfiles.projectId, t.projectId)),
      ),
    ).toEqual([]);
  });
});

describe("notification channels", () => {
  it("records created and deleted with the kind, never the URL or the signing secret", async () => {
    const t = await seedTenant("pro", "Audit Channels");
    const rw = { key: t.keys.readwrite.key };
    const path = `/v1/projects/${t.projectId}/channels`;
    const url = "https://hooks.slack.com/services/T0/B0/secret-part";
    await refusedQuietly([t, other], 403, () =>
      call(path, { key: t.keys.read.key }, "POST", { kind: "slack", name: "Ops", url }),
    );
    await refusedQuietly([t, other], 400, () => call(path, rw, "POST", { kind: "pager", name: "Ops", url }));

    const slack = await json<Ok<"/v1/projects/{id}/channels", "post">>(
      await call(path, rw, "POST", { kind: "slack", name: "Ops", url }),
      201,
    );
    const hook = await json<Ok<"/v1/projects/{id}/channels", "post">>(
      await call(path, rw, "POST", { kind: "webhook", name: "Hook", url: "https://example.com/hook" }),
      201,
    );
    const created = await auditEntries(t.tenantId, "channel.created");
    expect(created.map((e) => [e.targetId, e.targetLabel, e.detail])).toEqual([
      [slack.id, "Ops", { kind: "slack" }],
      [hook.id, "Hook", { kind: "webhook" }],
    ]);
    expect(created[0]).toMatchObject(byKey(t, t.keys.readwrite.id));

    await refusedQuietly([t, other], 404, () => call(`${path}/${crypto.randomUUID()}`, rw, "DELETE"));
    await json(await call(`${path}/${slack.id}`, rw, "DELETE"), 200);
    expect(await onlyAuditEntry(t.tenantId, "channel.deleted")).toMatchObject({
      ...byKey(t, t.keys.readwrite.id),
      targetType: "channel",
      targetId: slack.id,
      targetLabel: "Ops",
      detail: { kind: "slack" },
    });
    const everything = JSON.stringify(await auditEntries(t.tenantId));
    expect(everything).not.toContain("secret-part");
    expect(everything).not.toContain(hook.signingSecret);
  });
});

describe("maps", () => {
  it("records a map created, replaced and deleted; a refused upload or delete records nothing", async () => {
    const t = await seedTenant("pro", "Audit Maps");
    const image = await png(64, 64);
    const upload = (name: string, auth: Auth = { key: t.keys.readwrite.key }) => {
      const fields = {
        mapId: "dust",
        name,
        worldMinX: "0",
        worldMinY: "0",
        worldMaxX: "100",
        worldMaxY: "100",
      };
      const { body, contentType } = multipart([
        ...Object.entries(fields).map(([n, value]) => ({ name: n, value })),
        { name: "image", filename: "map.png", bytes: image },
      ]);
      return api(
        "/v1/maps/upload",
        { ...auth, ip: IP, now: tick() },
        {
          method: "POST",
          headers: { "Content-Type": contentType, "X-Project-Id": t.projectId, "User-Agent": UA },
          body,
        },
      );
    };
    await refusedQuietly([t, other], 403, () => upload("Dust", { key: t.keys.read.key }));
    const first = (await (await upload("Dust")).json()) as { id: string; action: string };
    expect(first.action).toBe("created");
    expect((await (await upload("Dust II")).json()) as { action: string }).toMatchObject({
      action: "updated",
    });
    const path = `/v1/projects/${t.projectId}/maps`;
    await refusedQuietly([t, other], 403, () => call(`${path}/dust`, { key: t.keys.read.key }, "DELETE"));
    await refusedQuietly([t, other], 404, () =>
      call(`${path}/nowhere`, { key: t.keys.readwrite.key }, "DELETE"),
    );
    await json(await call(`${path}/dust`, { key: t.keys.readwrite.key }, "DELETE"), 200);
    const entries = await auditEntries(t.tenantId);
    expect(entries.map((e) => [e.action, e.targetId, e.targetLabel, e.detail])).toEqual([
      ["map.created", first.id, "Dust", { mapId: "dust" }],
      ["map.updated", first.id, "Dust II", { mapId: "dust" }],
      ["map.deleted", first.id, "Dust II", { mapId: "dust" }],
    ]);
    for (const e of entries) {
      expect(e).toMatchObject({ ...byKey(t, t.keys.readwrite.id), targetType: "map" });
    }
  });
});

describe("player erasure", () => {
  it("records the request and its completion, with the player's hash and never the player id", async () => {
    const t = await seedTenant("pro", "Audit Erasure");
    const path = `/v1/projects/${t.projectId}/erasures`;
    const playerId = "player-to-forget-42";
    // No data:admin (a read-write key, a member's session), another studio: refused and not recorded.
    await refusedQuietly([t, other], 403, () =>
      call(path, { key: t.keys.readwrite.key }, "POST", { playerId }),
    );
    await refusedQuietly([t, other], 404, () =>
      call(`/v1/projects/${other.projectId}/erasures`, { key: t.keys.full.key }, "POST", { playerId }),
    );
    await refusedQuietly([t, other], 400, () =>
      call(path, { key: t.keys.full.key }, "POST", { playerId: "" }),
    );
    const member = await seedUser(t.tenantId, "member");
    const browser = new Browser(IP);
    expect((await browser.signIn(member.email, member.password)).status).toBe(303);
    const before = await auditEntries(t.tenantId);
    const denied = await browser.fetch(`/api${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: BASE },
      body: JSON.stringify({ playerId }),
    });
    expect(denied.status).toBe(403);
    expect(await auditEntries(t.tenantId)).toEqual(before);
    expect(
      await withDb((db) => db.select().from(erasures).where(eq(erasures.projectId, t.projectId))),
    ).toEqual([]);

    const erasure = await eraseAndWait(t.projectId, { key: t.keys.full.key, ip: IP, now: tick() }, playerId, {
      "user-agent": UA,
    });
    expect(erasure.status).toBe("completed");
    const hash = await sha256Hex(playerId);
    const requested = await onlyAuditEntry(t.tenantId, "erasure.requested");
    const completed = await onlyAuditEntry(t.tenantId, "erasure.completed");
    for (const e of [requested, completed]) {
      expect(e).toMatchObject({
        ...byKey(t, t.keys.full.id),
        targetType: "erasure",
        targetId: erasure.id,
        targetLabel: null,
      });
      expect(e.detail.playerIdSha256).toBe(hash);
    }
    expect(completed.detail.rowsRemoved).toBe(erasure.rowsRemoved);
    // The queue's consumer records the completion, for whoever asked, once done.
    expect(completed.at.getTime()).toBeGreaterThanOrEqual(requested.at.getTime());
    expect(JSON.stringify(await auditEntries(t.tenantId))).not.toContain(playerId);
  });

  it("records an erasure that could not be queued (the queue down) as requested, then failed", async () => {
    const t = await seedTenant("pro", "Audit Erasure Down");
    const ctx = createExecutionContext();
    const fetchHandler = apiWorker.fetch;
    if (!fetchHandler) {
      throw new Error("no fetch handler");
    }
    const res = await fetchHandler(
      new Request(`${BASE}/api/v1/projects/${t.projectId}/erasures`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "X-API-Key": t.keys.full.key,
          "CF-Connecting-IP": IP,
          "User-Agent": UA,
        },
        body: JSON.stringify({ playerId: "someone" }),
      }) as Request<unknown, IncomingRequestCfProperties>,
      // A queue that refuses every message, as a down Queues service does.
      {
        ...env,
        ERASURES_QUEUE: { send: () => Promise.reject(new Error("queue unavailable")) } as unknown as Queue,
      },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(503);
    const [row] = await withDb((db) => db.select().from(erasures).where(eq(erasures.projectId, t.projectId)));
    expect(row?.status).toBe("failed");
    // One request, one clock: both entries carry the same time.
    expect((await actions(t.tenantId)).sort()).toEqual(["erasure.failed", "erasure.requested"]);
    expect(await onlyAuditEntry(t.tenantId, "erasure.failed")).toMatchObject({
      ...byKey(t, t.keys.full.id),
      targetId: row?.id,
      outcome: "failure",
    });
  });
});

describe("data export", () => {
  it("records the request and each download, with who took the file and its size", async () => {
    const t = await seedTenant("pro", "Audit Export");
    const path = `/v1/projects/${t.projectId}/exports`;
    const body = { format: "ndjson", days: 1 };
    await refusedQuietly([t, other], 403, () => call(path, { key: t.keys.readwrite.key }, "POST", body));
    await refusedQuietly([t, other], 400, () =>
      call(path, { key: t.keys.full.key }, "POST", { format: "xls" }),
    );
    expect(
      await withDb((db) => db.select().from(dataExports).where(eq(dataExports.projectId, t.projectId))),
    ).toEqual([]);

    const queued = await json<Ok<"/v1/projects/{id}/exports", "post">>(
      await call(path, { key: t.keys.full.key }, "POST", body),
      202,
    );
    const requested = await onlyAuditEntry(t.tenantId, "export.requested");
    expect(requested).toMatchObject({
      ...byKey(t, t.keys.full.id),
      targetType: "export",
      targetId: queued.id,
      detail: { format: "ndjson", eventName: null },
    });
    expect(typeof requested.detail.from).toBe("string");

    const done = await waitFor(
      async () =>
        json<Ok<"/v1/projects/{id}/exports/{exportId}">>(
          await call(`${path}/${queued.id}`, { key: t.keys.full.key }, "GET"),
          200,
        ),
      (e) => e.status === "completed" || e.status === "failed",
      { timeoutMs: 30_000, intervalMs: 250, message: "export finished" },
    );
    expect(done.status).toBe("completed");
    const download = `${path}/${queued.id}/download`;
    await refusedQuietly([t, other], 403, () => call(download, { key: t.keys.readwrite.key }, "GET"));
    await refusedQuietly([t, other], 404, () =>
      call(
        `/v1/projects/${t.projectId}/exports/${crypto.randomUUID()}/download`,
        { key: t.keys.full.key },
        "GET",
      ),
    );
    const file = await call(download, { key: t.keys.full.key }, "GET");
    expect(file.status).toBe(200);
    await file.arrayBuffer();
    expect(await onlyAuditEntry(t.tenantId, "export.downloaded")).toMatchObject({
      ...byKey(t, t.keys.full.id),
      targetId: queued.id,
      detail: { format: "ndjson", sizeBytes: done.sizeBytes },
    });
    expect(await actions(t.tenantId)).toEqual(["export.requested", "export.downloaded"]);
  });
});

describe("the operator's admin CLI", () => {
  it("records a studio created with its plan and a project created, as the operator", async () => {
    const tenant = (
      await withDb((db) => run(db, ["tenant", "create"], { name: "CLI Studio", plan: "studio" }, []))
    ).result as { id: string };
    expect(await onlyAuditEntry(tenant.id, "tenant.created")).toMatchObject({
      tenantId: tenant.id,
      projectId: null,
      actorType: "operator",
      actorId: null,
      targetType: "tenant",
      targetId: tenant.id,
      targetLabel: "CLI Studio",
      detail: { plan: "studio" },
      outcome: "success",
    });
    const project = (
      await withDb((db) => run(db, ["project", "create"], { tenant: tenant.id, name: "CLI Game" }, []))
    ).result as { id: string };
    expect(await onlyAuditEntry(tenant.id, "project.created")).toMatchObject({
      tenantId: tenant.id,
      projectId: project.id,
      actorType: "operator",
      targetType: "project",
      targetId: project.id,
      targetLabel: "CLI Game",
    });
    expect(await actions(tenant.id)).toEqual(["tenant.created", "project.created"]);
  });

  it("a project the database refuses (no such studio) leaves neither project nor entry", async () => {
    const missing = crypto.randomUUID();
    await expect(
      withDb((db) => run(db, ["project", "create"], { tenant: missing, name: "Orphan" }, [])),
    ).rejects.toThrow();
    expect(await withDb((db) => db.select().from(projects).where(eq(projects.name, "Orphan")))).toEqual([]);
    expect(await withDb((db) => db.select().from(tenants).where(eq(tenants.id, missing)))).toEqual([]);
    expect(await auditEntries(missing)).toEqual([]);
  });
});
