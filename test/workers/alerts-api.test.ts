import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { AlertStatus } from "../../schema/pg/columns.js";
import { alertEvaluationEvents, alertRules, thresholdProfiles } from "../../schema/pg/schema.js";
import { applyProfileDeletion } from "../../workers/api/alerts/profile-deletion.js";
import { hookUrl, json, send } from "../support/alerts.js";
import { seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import { insertMap, insertProfile } from "../support/records.js";
import type { Ok, Schemas } from "../support/schema.js";

type Rule = Schemas["AlertRule"];
type ListItem = Ok<"/v1/projects/{id}/alerts">[number];
type Channel = Schemas["NotificationChannel"];
type HistoryEvent = Ok<"/v1/projects/{id}/alerts/history">[number];

let t: Tenant;
let w: { key: string };
let mapId: string;
let fast: string; // fps thresholds
let strict: string; // fps and frame time thresholds
let memoryOnly: string;
let foreignMap: string;
let foreignProfile: string;
let foreignChannel: string;

const alertsPath = () => `/v1/projects/${t.projectId}/alerts`;

function ruleBody(over: Record<string, unknown> = {}) {
  return {
    name: "Arena fps",
    mapId,
    thresholdProfileId: fast,
    metric: "fps",
    thresholdLevel: "warn",
    failPercentage: 20,
    evaluationDays: 7,
    cellSize: 25,
    cooldownMinutes: 60,
    ...over,
  };
}

async function createRule(over: Record<string, unknown> = {}, tenant = t): Promise<Rule> {
  const res = await send(
    `/v1/projects/${tenant.projectId}/alerts`,
    { key: tenant.keys.readwrite.key },
    "POST",
    {
      ...ruleBody(),
      ...over,
    },
  );
  return json<Rule>(res, 201);
}

async function listRules(tenant = t): Promise<ListItem[]> {
  return json<ListItem[]>(
    await api(`/v1/projects/${tenant.projectId}/alerts`, { key: tenant.keys.read.key }),
    200,
  );
}

beforeAll(async () => {
  t = await seedTenant("pro", "Alerts API Studio");
  w = t.keys.readwrite;
  mapId = await insertMap(t.projectId, "arena", { name: "Arena" });
  fast = await insertProfile(t.projectId, { name: "Fast PCs", fpsWarn: 30, fpsGood: 60 });
  strict = await insertProfile(t.projectId, { name: "Strict", fpsWarn: 45, fpsGood: 60, frameTimeWarn: 22 });
  memoryOnly = await insertProfile(t.projectId, { name: "Memory", memoryWarn: 4096 });
  foreignMap = await insertMap(t.siblingProjectId, "arena", { name: "Sibling arena" });
  foreignProfile = await insertProfile(t.siblingProjectId, { name: "Sibling", fpsWarn: 30 });
  foreignChannel = (
    await json<Channel>(
      await send(`/v1/projects/${t.siblingProjectId}/channels`, { token: t.token }, "POST", {
        kind: "slack",
        name: "sibling",
        url: "https://hooks.slack.com/services/T0/B0/sibling",
      }),
      201,
    )
  ).id;
});

describe("notification channels", () => {
  it("creates a webhook with a signing secret shown once, and a slack channel with a redacted URL", async () => {
    const path = `/v1/projects/${t.projectId}/channels`;
    const hook = await json<Ok<"/v1/projects/{id}/channels", "post">>(
      await send(path, w, "POST", { kind: "webhook", name: "Ops hook", url: hookUrl("/hook/api") }),
      201,
    );
    expect(hook.signingSecret).toMatch(/^whsec_[A-Za-z0-9_-]{40}$/);
    expect(hook.url).toBe(hookUrl("/hook/api"));
    const slack = await json<Ok<"/v1/projects/{id}/channels", "post">>(
      await send(path, w, "POST", {
        kind: "slack",
        name: "QA room",
        url: "https://hooks.slack.com/services/T1/B2/secretpart",
      }),
      201,
    );
    expect(slack.signingSecret).toBeNull();

    const listed = await json<Channel[]>(await api(path, { key: t.keys.read.key }), 200);
    expect(listed.map((c) => c.id)).toEqual([slack.id, hook.id]);
    expect(listed.every((c) => !("signingSecret" in c))).toBe(true);
    expect(listed[0]?.url).toBe("https://hooks.slack.com/…");
    expect(JSON.stringify(listed)).not.toContain("secretpart");

    const gone = await send(`${path}/${slack.id}`, w, "DELETE");
    expect(await json(gone, 200)).toEqual({ id: slack.id, deleted: true });
    expect((await send(`${path}/${slack.id}`, w, "DELETE")).status).toBe(404);
    // Another project's channel is not reachable through this project.
    expect((await send(`${path}/${foreignChannel}`, w, "DELETE")).status).toBe(404);
  });

  it.each([
    [{ kind: "webhook", name: "x", url: "http://example.com/hook" }, "json.url", "https"],
    [{ kind: "webhook", name: "x", url: "ftp://127.0.0.1/hook" }, "json.url", "https"],
    [{ kind: "slack", name: "x", url: "not a url" }, "json.url", "absolute URL"],
    [{ kind: "webhook", name: "x", url: "https://user:pw@example.com/" }, "json.url", "credentials"],
    [{ kind: "email", name: "x", url: "https://example.com/" }, "json.kind", ""],
    [{ kind: "webhook", name: "", url: "https://example.com/" }, "json.name", ""],
    [{ kind: "webhook", name: "nul\u0000", url: "https://example.com/" }, "json.name", "U+0000"],
    [{ kind: "webhook", name: "x", url: "https://example.com/\u0000" }, "json.url", "U+0000"],
  ])("refuses %o naming %s", async (body, field, rule) => {
    const before = await json<Channel[]>(await api(`/v1/projects/${t.projectId}/channels`, w), 200);
    const res = await send(`/v1/projects/${t.projectId}/channels`, w, "POST", body);
    expect(res.status).toBe(400);
    const problem = await problemOf(res);
    expect(problem.field).toBe(field);
    expect(problem.detail).toContain(rule);
    const after = await json<Channel[]>(await api(`/v1/projects/${t.projectId}/channels`, w), 200);
    expect(after).toHaveLength(before.length);
  });
});

describe("alert rules: create, read, list", () => {
  it("creates an active rule with a bundle and channels, and lists it with joined names", async () => {
    const hook = await json<Channel>(
      await send(`/v1/projects/${t.projectId}/channels`, w, "POST", {
        kind: "webhook",
        name: "rules hook",
        url: hookUrl("/hook/rules"),
      }),
      201,
    );
    const rule = await createRule({
      name: "Bundle rule",
      thresholdProfileId: undefined,
      thresholdProfileIds: [strict, fast],
      channelIds: [hook.id],
      cellSize: 10,
      failPercentage: 12.5,
    });
    expect(rule).toMatchObject({
      mapId,
      thresholdProfileId: strict,
      thresholdProfileIds: [strict, fast],
      name: "Bundle rule",
      metric: "fps",
      thresholdLevel: "warn",
      failPercentage: 12.5,
      evaluationDays: 7,
      cellSize: 10,
      cooldownMinutes: 60,
      isActive: true,
      channelIds: [hook.id],
    });
    expect(Object.keys(rule).sort()).toEqual(
      [
        "id",
        "projectId",
        "mapId",
        "thresholdProfileId",
        "thresholdProfileIds",
        "name",
        "metric",
        "thresholdLevel",
        "failPercentage",
        "evaluationDays",
        "cellSize",
        "cooldownMinutes",
        "isActive",
        "createdAt",
        "updatedAt",
        "channelIds",
        "lastEvaluatedAt",
        "lastResult",
        "lastEvaluations",
      ].sort(),
    );
    // Not evaluated yet. (A cron run of another test file may evaluate it from now on, so the reads below
    // compare the rest.)
    expect(rule).toMatchObject({ lastEvaluatedAt: null, lastResult: null, lastEvaluations: [] });
    const {
      lastEvaluatedAt: _a,
      lastResult: _r,
      lastEvaluations: _e,
      ...configured
    } = rule as Rule & {
      lastEvaluatedAt: unknown;
      lastResult: unknown;
      lastEvaluations: unknown;
    };
    const got = await json<Rule>(await api(`${alertsPath()}/${rule.id}`, { token: t.token }), 200);
    expect(got).toMatchObject(configured);
    expect(Object.keys(got).sort()).toEqual(Object.keys(rule).sort());

    const item = (await listRules()).find((r) => r.id === rule.id);
    expect(item).toMatchObject({
      ...configured,
      mapName: "Arena",
      thresholdProfileNames: ["Strict", "Fast PCs"],
    });

    // The latest status joins the newest event of the bundle's profiles: triggered while any is.
    // Deactivated first, so a cron run of another test file cannot record newer events for it.
    await json(await send(`${alertsPath()}/${rule.id}`, w, "DELETE"), 200);
    await withDb((db) =>
      db
        .insert(alertEvaluationEvents)
        .values([
          event(rule.id, strict, "Strict", "triggered"),
          event(rule.id, fast, "Fast PCs", "resolved"),
        ]),
    );
    const after = (await listRules()).find((r) => r.id === rule.id);
    expect(after?.lastStatus).toBe("triggered");
    expect(after?.lastStatusAt).not.toBeNull();
  });

  it("treats thresholdProfileId alone as a bundle of one and answers 404 for unknown rules", async () => {
    const rule = await createRule({ name: "Single" });
    expect(rule.thresholdProfileIds).toEqual([fast]);
    expect(rule.channelIds).toEqual([]);
    expect((await api(`${alertsPath()}/${crypto.randomUUID()}`, { key: t.keys.read.key })).status).toBe(404);
    expect((await api(`${alertsPath()}/not-a-uuid`, { key: t.keys.read.key })).status).toBe(400);
    // /alerts/history is its own route, not a rule id.
    expect(
      Array.isArray(await json(await api(`${alertsPath()}/history`, { key: t.keys.read.key }), 200)),
    ).toBe(true);
  });
});

function event(
  ruleId: string,
  profileId: string,
  profileName: string,
  status: AlertStatus,
  createdAt = new Date(),
): typeof alertEvaluationEvents.$inferInsert {
  return {
    projectId: t.projectId,
    alertRuleId: ruleId,
    evaluatedProfileId: profileId,
    thresholdProfileId: profileId,
    thresholdProfileName: profileName,
    ruleName: "rule",
    metric: "fps",
    status,
    failCount: 1,
    totalCount: 4,
    failPercentage: 25,
    notified: false,
    createdAt,
  };
}

describe("alert rules: validation answers 400 naming the field, and changes nothing", () => {
  const cases: Array<[string, () => Record<string, unknown>, string, string]> = [
    ["failPercentage 0", () => ({ failPercentage: 0 }), "json.failPercentage", ""],
    ["failPercentage over 100", () => ({ failPercentage: 100.5 }), "json.failPercentage", ""],
    ["evaluationDays 0", () => ({ evaluationDays: 0 }), "json.evaluationDays", ""],
    ["evaluationDays 31", () => ({ evaluationDays: 31 }), "json.evaluationDays", ""],
    ["evaluationDays 1.5", () => ({ evaluationDays: 1.5 }), "json.evaluationDays", ""],
    ["cellSize 7", () => ({ cellSize: 7 }), "json.cellSize", "5, 10, 25, 50"],
    ["cooldownMinutes -1", () => ({ cooldownMinutes: -1 }), "json.cooldownMinutes", ""],
    ["cooldownMinutes 10081", () => ({ cooldownMinutes: 10_081 }), "json.cooldownMinutes", ""],
    ["unknown metric", () => ({ metric: "latency" }), "json.metric", ""],
    ["unknown level", () => ({ thresholdLevel: "bad" }), "json.thresholdLevel", ""],
    ["no profile", () => ({ thresholdProfileId: undefined }), "json.thresholdProfileId", "required"],
    [
      "disagreeing primary",
      () => ({ thresholdProfileIds: [strict, fast] }),
      "json.thresholdProfileId",
      "first element",
    ],
    [
      "duplicate profiles",
      () => ({ thresholdProfileId: undefined, thresholdProfileIds: [fast, fast] }),
      "json.thresholdProfileIds",
      "twice",
    ],
    [
      "eleven profiles",
      () => ({
        thresholdProfileId: undefined,
        thresholdProfileIds: Array.from({ length: 11 }, () => crypto.randomUUID()),
      }),
      "json.thresholdProfileIds",
      "",
    ],
    [
      "empty bundle",
      () => ({ thresholdProfileId: undefined, thresholdProfileIds: [] }),
      "json.thresholdProfileIds",
      "",
    ],
    ["map of another project", () => ({ mapId: foreignMap }), "mapId", "no such map"],
    [
      "profile of another project",
      () => ({ thresholdProfileId: undefined, thresholdProfileIds: [fast, foreignProfile] }),
      "thresholdProfileIds.1",
      "no such threshold profile",
    ],
    [
      "profile without the metric's threshold",
      () => ({ thresholdProfileId: memoryOnly }),
      "thresholdProfileIds.0",
      "fpsWarn",
    ],
    [
      "profile without the level's threshold",
      () => ({ metric: "frame_time", thresholdLevel: "good", thresholdProfileId: strict }),
      "thresholdProfileIds.0",
      "frameTimeGood",
    ],
    [
      "budget share on a profile without its share",
      () => ({ metric: "budget_share", thresholdProfileId: memoryOnly }),
      "thresholdProfileIds.0",
      "budgetShareWarn",
    ],
    ["unknown metric", () => ({ metric: "budget" }), "json.metric", ""],
    ["channel of another project", () => ({ channelIds: [foreignChannel] }), "channelIds.0", "no such"],
    ["missing name", () => ({ name: undefined }), "json.name", ""],
    ["name with U+0000", () => ({ name: "bad\u0000name" }), "json.name", "U+0000"],
    ["name of 201 characters", () => ({ name: "é".repeat(201) }), "json.name", "200 characters"],
  ];

  it.each(cases)("%s", async (_label, over, field, rule) => {
    const before = await listRules();
    const res = await send(alertsPath(), w, "POST", { ...ruleBody(), ...over() });
    expect(res.status).toBe(400);
    const problem = await problemOf(res);
    expect(problem.field).toBe(field);
    expect(problem.detail).toContain(rule);
    expect(await listRules()).toHaveLength(before.length);
  });
});

describe("alert rules: update, deactivate, reactivate", () => {
  it("updates only the fields sent and validates the resulting rule", async () => {
    const rule = await createRule({
      name: "Patch me",
      thresholdProfileIds: [fast, strict],
      thresholdProfileId: fast,
    });
    const renamed = await json<Rule>(
      await send(`${alertsPath()}/${rule.id}`, w, "PATCH", { name: "Patched", failPercentage: 35 }),
      200,
    );
    expect(renamed).toEqual({ ...rule, name: "Patched", failPercentage: 35, updatedAt: renamed.updatedAt });
    expect(renamed.updatedAt >= rule.updatedAt).toBe(true);

    // Switching to frame time: the bundle's first profile lacks frameTimeWarn.
    const bad = await send(`${alertsPath()}/${rule.id}`, w, "PATCH", { metric: "frame_time" });
    expect(bad.status).toBe(400);
    expect((await problemOf(bad)).field).toBe("thresholdProfileIds.0");
    // ... fine with a bundle that has it, sent in the same request.
    const switched = await json<Rule>(
      await send(`${alertsPath()}/${rule.id}`, w, "PATCH", {
        metric: "frame_time",
        thresholdProfileId: strict,
      }),
      200,
    );
    expect(switched).toMatchObject({
      metric: "frame_time",
      thresholdProfileId: strict,
      thresholdProfileIds: [strict],
    });

    for (const body of [
      { cellSize: 30 },
      { mapId: foreignMap },
      { isActive: "yes" },
      { channelIds: [foreignChannel] },
    ]) {
      const res = await send(`${alertsPath()}/${rule.id}`, w, "PATCH", body);
      expect(res.status).toBe(400);
    }
    const unchanged = await json<Rule>(await api(`${alertsPath()}/${rule.id}`, w), 200);
    expect(unchanged).toEqual(switched);
    expect((await send(`${alertsPath()}/${crypto.randomUUID()}`, w, "PATCH", { name: "x" })).status).toBe(
      404,
    );
  });

  it("DELETE deactivates and keeps the record; PATCH isActive: true reactivates", async () => {
    const rule = await createRule({ name: "On and off" });
    const off = await send(`${alertsPath()}/${rule.id}`, w, "DELETE");
    expect(await json(off, 200)).toEqual({ id: rule.id, isActive: false });
    expect((await json<Rule>(await api(`${alertsPath()}/${rule.id}`, w), 200)).isActive).toBe(false);
    expect((await listRules()).find((r) => r.id === rule.id)?.isActive).toBe(false);
    const on = await json<Rule>(
      await send(`${alertsPath()}/${rule.id}`, w, "PATCH", { isActive: true }),
      200,
    );
    expect(on.isActive).toBe(true);
    expect((await send(`${alertsPath()}/${crypto.randomUUID()}`, w, "DELETE")).status).toBe(404);
  });
});

describe("plan quotas", () => {
  it("free plan: 403 feature not available", async () => {
    const free = await seedTenant("free", "Free Studio");
    const freeMap = await insertMap(free.projectId, "arena");
    const freeProfile = await insertProfile(free.projectId, { name: "p", fpsWarn: 30 });
    const res = await send(
      `/v1/projects/${free.projectId}/alerts`,
      { key: free.keys.readwrite.key },
      "POST",
      {
        ...ruleBody(),
        mapId: freeMap,
        thresholdProfileId: freeProfile,
      },
    );
    expect(res.status).toBe(403);
    expect((await problemOf(res)).detail).toContain("not available");
    expect(await listRules(free)).toEqual([]);
  });

  it("pro plan (10): 403 on create and on reactivation at the maximum, counted across the tenant, race-safe", async () => {
    const pro = await seedTenant("pro", "Quota Studio");
    const maps = [await insertMap(pro.projectId, "arena"), await insertMap(pro.siblingProjectId, "arena")];
    const profiles = [
      await insertProfile(pro.projectId, { name: "p", fpsWarn: 30 }),
      await insertProfile(pro.siblingProjectId, { name: "p", fpsWarn: 30 }),
    ];
    const create = (i: number) =>
      send(
        `/v1/projects/${[pro.projectId, pro.siblingProjectId][i % 2]}/alerts`,
        { token: pro.token },
        "POST",
        {
          ...ruleBody({ name: `rule ${i}` }),
          mapId: maps[i % 2],
          thresholdProfileId: profiles[i % 2],
        },
      );
    const first: Rule[] = [];
    for (let i = 0; i < 8; i++) {
      first.push(await json<Rule>(await create(i), 201));
    }
    // Four creations race for the last two places: exactly two win.
    const raced = await Promise.all([8, 9, 10, 11].map(create));
    expect(raced.map((r) => r.status).sort()).toEqual([201, 201, 403, 403]);
    const over = await create(12);
    expect(over.status).toBe(403);
    expect((await problemOf(over)).detail).toContain("at most 10 active alert rules");

    const victim = first[0] as Rule;
    await json(
      await send(`/v1/projects/${pro.projectId}/alerts/${victim.id}`, { token: pro.token }, "DELETE"),
      200,
    );
    const replacement = await json<Rule>(await create(14), 201);
    const again = await send(
      `/v1/projects/${pro.projectId}/alerts/${victim.id}`,
      { token: pro.token },
      "PATCH",
      {
        isActive: true,
      },
    );
    expect(again.status).toBe(403);
    expect(
      (
        await json<Rule>(
          await api(`/v1/projects/${pro.projectId}/alerts/${victim.id}`, { token: pro.token }),
          200,
        )
      ).isActive,
    ).toBe(false);
    // Other changes to an inactive rule are not quota-bound; freeing a place allows the reactivation.
    await json(
      await send(`/v1/projects/${pro.projectId}/alerts/${victim.id}`, { token: pro.token }, "PATCH", {
        name: "renamed",
      }),
      200,
    );
    const replacementPath = `/v1/projects/${[pro.projectId, pro.siblingProjectId][14 % 2]}/alerts/${replacement.id}`;
    await json(await send(replacementPath, { token: pro.token }, "DELETE"), 200);
    const back = await send(
      `/v1/projects/${pro.projectId}/alerts/${victim.id}`,
      { token: pro.token },
      "PATCH",
      {
        isActive: true,
      },
    );
    expect((await json<Rule>(back, 200)).isActive).toBe(true);
    // Leave nothing active for the evaluation runs of other files.
    await withDb((db) =>
      db.update(alertRules).set({ isActive: false }).where(eq(alertRules.projectId, pro.projectId)),
    );
    await withDb((db) =>
      db.update(alertRules).set({ isActive: false }).where(eq(alertRules.projectId, pro.siblingProjectId)),
    );
  });
});

describe("threshold profile deletion", () => {
  it("keeps events of the profile (unattributed), removes it from bundles, promotes, deactivates", async () => {
    const doomed = await insertProfile(t.projectId, { name: "Doomed", fpsWarn: 20 });
    const survivor = await insertProfile(t.projectId, { name: "Survivor", fpsWarn: 25 });
    const both = await createRule({
      name: "Both",
      thresholdProfileId: undefined,
      thresholdProfileIds: [doomed, survivor],
    });
    const alone = await createRule({ name: "Alone", thresholdProfileId: doomed });
    const [e1, e2, e3] = await withDb((db) =>
      db
        .insert(alertEvaluationEvents)
        .values([
          event(both.id, doomed, "Doomed", "triggered", new Date(Date.now() - 3000)),
          event(both.id, survivor, "Survivor", "resolved", new Date(Date.now() - 2000)),
          event(alone.id, doomed, "Doomed", "triggered", new Date(Date.now() - 1000)),
        ])
        .returning({ id: alertEvaluationEvents.id }),
    );

    // Through the profile route, whose transaction applies the consequences for rules and history.
    const gone = await send(`/v1/projects/${t.projectId}/threshold-profiles/${doomed}`, w, "DELETE");
    expect(await json<Ok<"/v1/projects/{id}/threshold-profiles/{profileId}", "delete">>(gone, 200)).toEqual({
      id: doomed,
    });

    const rules = await listRules();
    expect(rules.find((r) => r.id === both.id)).toMatchObject({
      thresholdProfileId: survivor,
      thresholdProfileIds: [survivor],
      thresholdProfileNames: ["Survivor"],
      isActive: true,
    });
    expect(rules.find((r) => r.id === alone.id)).toMatchObject({
      thresholdProfileId: null,
      thresholdProfileIds: [],
      isActive: false,
    });

    const history = await json<HistoryEvent[]>(await api(`${alertsPath()}/history?limit=100`, w), 200);
    const byId = new Map(history.map((h) => [h.id, h]));
    for (const id of [e1?.id, e3?.id]) {
      expect(byId.get(id as string)).toMatchObject({
        thresholdProfileId: null,
        thresholdProfileName: null,
        thresholdProfileDeleted: true,
        status: "triggered",
      });
    }
    expect(byId.get(e2?.id as string)).toMatchObject({
      thresholdProfileId: survivor,
      thresholdProfileName: "Survivor",
      thresholdProfileDeleted: false,
    });

    // Reactivating a rule without profiles asks for a bundle; with one it works.
    const res = await send(`${alertsPath()}/${alone.id}`, w, "PATCH", { isActive: true });
    expect(res.status).toBe(400);
    expect((await problemOf(res)).field).toBe("thresholdProfileIds");
    const back = await send(`${alertsPath()}/${alone.id}`, w, "PATCH", {
      isActive: true,
      thresholdProfileId: survivor,
    });
    expect((await json<Rule>(back, 200)).thresholdProfileIds).toEqual([survivor]);
  });
});

describe("history paging", () => {
  it("validates limit and offset", async () => {
    for (const q of ["limit=0", "limit=101", "offset=-1", "limit=abc"]) {
      const res = await api(`${alertsPath()}/history?${q}`, w);
      expect(res.status).toBe(400);
      expect((await problemOf(res)).field).toMatch(/^query\.(limit|offset)$/);
    }
  });
});

describe("OpenAPI document", () => {
  it("describes every alerting route with its methods", async () => {
    const doc = (await (await api("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const methods = (path: string) => Object.keys(doc.paths[path] ?? {}).sort();
    expect(methods("/v1/projects/{id}/channels")).toEqual(["get", "post"]);
    expect(methods("/v1/projects/{id}/channels/{channelId}")).toEqual(["delete", "patch"]);
    expect(methods("/v1/projects/{id}/alerts")).toEqual(["get", "post"]);
    expect(methods("/v1/projects/{id}/alerts/{alertId}")).toEqual(["delete", "get", "patch"]);
    expect(methods("/v1/projects/{id}/alerts/history")).toEqual(["get"]);
    expect(Object.keys(doc.paths["/v1/projects/{id}/alerts"]?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(["201", "400", "401", "403", "404", "429"]),
    );
  });
});

describe("applyProfileDeletion", () => {
  it("reports the rules it touched and the ones it deactivated", async () => {
    const a = await insertProfile(t.projectId, { name: "A", fpsWarn: 20 });
    const b = await insertProfile(t.projectId, { name: "B", fpsWarn: 20 });
    const pair = await createRule({
      name: "Pair",
      thresholdProfileId: undefined,
      thresholdProfileIds: [a, b],
    });
    const single = await createRule({ name: "Single", thresholdProfileId: a });
    const effects = await withDb((db) =>
      db.transaction(async (tx) => {
        const result = await applyProfileDeletion(tx, t.projectId, a);
        await tx.delete(thresholdProfiles).where(eq(thresholdProfiles.id, a));
        return result;
      }),
    );
    expect(effects.affectedRuleIds.sort()).toEqual([pair.id, single.id].sort());
    expect(effects.deactivatedRuleIds).toEqual([single.id]);
    await send(`${alertsPath()}/${pair.id}`, w, "DELETE");
  });
});

describe("map watched by a rule", () => {
  it("cannot be deleted (409) and stays, with its rule", async () => {
    const watched = await insertMap(t.projectId, "watched-arena");
    const profile = await insertProfile(t.projectId, { name: "Watch", fpsWarn: 20 });
    const rule = await createRule({ name: "Watcher", mapId: watched, thresholdProfileId: profile });
    const res = await send(`/v1/projects/${t.projectId}/maps/${watched}`, w, "DELETE");
    expect(res.status).toBe(409);
    expect((await problemOf(res)).error_category).toBe("conflict");
    const rules = await listRules();
    expect(rules.find((r) => r.id === rule.id)?.mapId).toBe(watched);
    await send(`${alertsPath()}/${rule.id}`, w, "DELETE");
  });
});
