import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  accountLinks,
  apiKeys,
  contentEntries,
  maps,
  memberships,
  oauthGrants,
  sessions,
  thresholdProfiles,
  users,
} from "../../schema/pg/schema.js";
import { createLink } from "../../workers/api/accounts/links.js";
import { newApp } from "../../workers/api/app.js";
import { endSession, sessionUser, startSession } from "../../workers/api/credentials/sessions.js";
import { DOCS_ASSETS } from "../../workers/api/routes/docs/index.js";
import { DASHBOARD_CHUNKS } from "../../workers/api/web/assets/bundle.gen.js";
import { DASHBOARD_PAGES, pageScope, SCRIPT_PATH, STYLE_PATH } from "../../workers/api/web/dashboard.js";
import { SCOPES, type Scope, TOKEN_SCOPES } from "../../workers/shared/credentials/scopes.js";
import { Browser, csrfOf, seedUser } from "../support/browser.js";
import { BASE, seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import { multipart, png } from "../support/images.js";

/**
 * The security cases every operation shares: 401 without or with a bad credential, 403 without the
 * operation's scope, and 404 for a project of another tenant. The table is the served OpenAPI document:
 * method, path, scope (in the security requirement), whether tokens may call it, and how it names its
 * project (`x-project`) all come from there, so a new route is covered by being documented.
 */
type ProjectFrom = "path" | "header" | "body";
type DocOperation = {
  operationId: string;
  security: Array<Record<string, string[]>>;
  "x-project"?: ProjectFrom;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: { format?: string } }>;
  requestBody?: { required?: boolean };
};
type Operation = {
  operationId: string;
  method: string;
  /** The path template as documented, e.g. /v1/projects/{id}/alerts/{alertId}. */
  template: string;
  /** The scope the security requirements name, or null when they name none. */
  scope: Scope | null;
  /** Whether an OAuth token is an accepted scheme. */
  tokens: boolean;
  project: ProjectFrom | undefined;
  doc: DocOperation;
};

const DOCUMENT = (await (await api("/v1/openapi.json", { ip: "192.0.2.13" })).json()) as {
  paths: Record<string, Record<string, DocOperation>>;
};

/** Every scope the operation's security requirements name (the consistency test wants its one, or none). */
const namedScopes = (op: DocOperation) => [
  ...new Set(op.security.flatMap((requirement) => Object.values(requirement).flat())),
];

const OPERATIONS: Operation[] = Object.entries(DOCUMENT.paths).flatMap(([template, ops]) =>
  Object.entries(ops).map(([method, doc]) => ({
    operationId: doc.operationId,
    method: method.toUpperCase(),
    template,
    scope: SCOPES.find((scope) => namedScopes(doc).includes(scope)) ?? null,
    tokens: doc.security.some((requirement) => "BearerAuth" in requirement),
    project: doc["x-project"],
    doc,
  })),
);

/**
 * Documented operations this app does not serve: ingest is the ingest Worker's (its 401 and 403 are
 * in ingest.test.ts), so here it answers as an unknown endpoint would.
 */
const SERVED_ELSEWHERE = new Set(["ingestEvents"]);

/** Records of the neighbour tenant that its neighbour's credentials try to reach. */
const theirs = { profileId: "", mapId: "", contentId: "" };

const ZERO_UUID = "00000000-0000-4000-8000-000000000000";

/**
 * What the document cannot say: a valid request, so that the cross-tenant case would reach the write
 * itself if project authorization were missing (and "changed nothing" would see it). Path parameters
 * besides {id} default to ZERO_UUID when they are UUIDs; X-Project-Id is sent when documented.
 * Several variants make several cases.
 */
type Variant = {
  /** Told apart in the case names. */
  label?: string;
  params?: Record<string, () => string>;
  query?: () => string;
  init?: (projectId: string) => RequestInit | Promise<RequestInit>;
};

const json = (body: unknown): RequestInit => ({
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify(body),
});

async function mapUpload(): Promise<RequestInit> {
  const fields = { mapId: "m", name: "M", worldMinX: "0", worldMinY: "0", worldMaxX: "1", worldMaxY: "1" };
  const { body, contentType } = multipart([
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    { name: "image", filename: "m.png", bytes: await png(2, 2) },
  ]);
  return { headers: { "Content-Type": contentType }, body };
}

const REQUESTS: Record<string, Variant[]> = {
  createThresholdProfile: [{ init: () => json({ name: "intruder" }) }],
  // Studio-scoped (an owner's session only); its session cases are in sso-enforcement.test.ts.
  putSsoEnforcement: [{ init: () => json({ requireSso: false, breakGlassUserId: null }) }],
  updateThresholdProfile: [
    { params: { profileId: () => theirs.profileId }, init: () => json({ name: "intruder" }) },
  ],
  deleteThresholdProfile: [{ params: { profileId: () => theirs.profileId } }],
  getMapImage: [{ params: { mapInternalId: () => theirs.mapId } }],
  // The same route by the neighbour's internal id and by its user map id.
  deleteMap: [
    { label: "internal id", params: { map: () => theirs.mapId } },
    { label: "user map id", params: { map: () => "theirs" } },
  ],
  uploadMap: [{ init: mapUpload }],
  importContent: [
    { init: () => json({ entries: [{ contentType: "t", contentId: "i", displayName: "d" }] }) },
  ],
  deleteContent: [
    { label: "by id", query: () => `id=${theirs.contentId}` },
    { label: "by key", query: () => "contentType=weapon&contentId=theirs" },
  ],
  createChannel: [
    { init: () => json({ kind: "slack", name: "n", url: "https://hooks.slack.com/services/x" }) },
  ],
  updateChannel: [{ init: () => json({ buildRegressions: true }) }],
  pinBuildBaseline: [{ init: () => json({ buildId: "intruder" }) }],
  createAlertRule: [
    {
      init: () =>
        json({
          name: "n",
          mapId: ZERO_UUID,
          thresholdProfileId: ZERO_UUID,
          metric: "fps",
          thresholdLevel: "warn",
          failPercentage: 10,
          evaluationDays: 7,
          cellSize: 25,
          cooldownMinutes: 60,
        }),
    },
  ],
  updateAlertRule: [{ init: () => json({ name: "n" }) }],
  // The project of a query is in its body: the cross-tenant case is in query-isolation.test.ts.
  runQuery: [{ init: (id) => json({ project_id: id, sql: "SELECT 1" }) }],
  createExport: [{ init: () => json({ days: 7, format: "csv" }) }],
  // null: the plan's retention, so a case that passes the gates changes nothing the other cases read.
  updateDataRetention: [{ init: () => json({ retentionDays: null }) }],
  createErasure: [{ init: () => json({ playerId: "nobody" }) }],
  previewErasure: [{ init: () => json({ playerId: "nobody" }) }],
  getHeatmap: [
    { query: () => "mapId=dust" },
    { label: "with z", query: () => "mapId=dust&includeZ=true&eventName=kill" },
  ],
  getHeatmapCell: [
    { query: () => "mapId=dust&x=25&y=-50" },
    {
      label: "3-D, filtered",
      query: () => "mapId=dust&x=0&y=0&z=5&cellSize=5&buildId=b&platform=windows&metric=memory",
    },
  ],
  getFunnels: [{ query: () => "steps=a,b" }],
  getInsights: [{ query: () => "metric=count&groupBy=day" }],
  compareBuilds: [
    { query: () => "baseline=1.0.0&candidate=1.1.0" },
    {
      label: "filtered, fresh",
      query: () => "baseline=1.0.0&candidate=1.1.0&mapId=dust&platform=windows&fresh=1",
    },
  ],
  buildRegressions: [{ query: () => "candidate=1.1.0&baseline=1.0.0&by=gpu_tier&mapId=dust" }],
  // A studio's single sign-on (the path names the studio, not a project; its cross-studio, member and
  // key refusals are in sso.test.ts).
  putSso: [
    {
      init: () =>
        json({
          issuer: "https://idp.example",
          clientId: "c",
          clientSecret: "s",
          domains: ["studio.example"],
        }),
    },
  ],
  // Checking a domain's DNS proof (an owner's session only; its cases are in sso-domains.test.ts).
  verifySsoDomain: [{ params: { domain: () => "studio.example" } }],
};

/** Why an operation cannot be called without an entry in REQUESTS, or null when it can. */
function entryNeeded(op: Operation): string | null {
  if (op.doc.requestBody?.required) {
    return "a required body";
  }
  const param = (op.doc.parameters ?? []).find(
    (p) =>
      p.required && (p.in === "query" || (p.in === "path" && p.name !== "id" && p.schema?.format !== "uuid")),
  );
  return param ? `the required ${param.in} parameter ${param.name}` : null;
}

type Case = Operation & Variant & { name: string };

const CASES: Case[] = OPERATIONS.filter((op) => !SERVED_ELSEWHERE.has(op.operationId)).flatMap((op) =>
  (REQUESTS[op.operationId] ?? [{}]).map((variant) => ({
    ...op,
    ...variant,
    name: `${op.method} ${op.template}${variant.label ? ` (${variant.label})` : ""}`,
  })),
);

async function request(c: Case, projectId: string, auth: Parameters<typeof api>[1], extra: HeadersInit = {}) {
  const path = c.template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const given = c.params?.[name];
    return name === "id" ? projectId : given ? given() : ZERO_UUID;
  });
  const query = c.query?.();
  const init = (await c.init?.(projectId)) ?? {};
  const headers = new Headers(init.headers);
  if (c.project === "header") {
    headers.set("X-Project-Id", projectId);
  }
  for (const [name, value] of new Headers(extra)) {
    headers.set(name, value);
  }
  return api(query ? `${path}?${query}` : path, auth, { ...init, headers, method: c.method });
}

describe("the table, read from the OpenAPI document", () => {
  it("has an entry for every operation that needs one, and none for an undocumented operation", () => {
    const documented = new Set(OPERATIONS.map((op) => op.operationId));
    expect(Object.keys(REQUESTS).filter((id) => !documented.has(id))).toEqual([]);
    expect([...SERVED_ELSEWHERE].filter((id) => !documented.has(id))).toEqual([]);
    const missing = OPERATIONS.filter(
      (op) => !SERVED_ELSEWHERE.has(op.operationId) && !REQUESTS[op.operationId],
    )
      .map((op) => [op.operationId, entryNeeded(op)])
      .filter(([, why]) => why !== null);
    expect(missing).toEqual([]);
    expect(CASES.length).toBeGreaterThanOrEqual(43);
  });

  it("declares each operation's policy consistently: tokens only for token scopes, x-project where a project is named", () => {
    for (const op of OPERATIONS) {
      // One scope, the same in each scheme's requirement, and a known one.
      expect(namedScopes(op.doc), op.operationId).toEqual(op.scope === null ? [] : [op.scope]);
      const tokenScope = op.scope !== null && (TOKEN_SCOPES as readonly string[]).includes(op.scope);
      expect(op.tokens, op.operationId).toBe(tokenScope);
      const params = op.doc.parameters ?? [];
      expect(op.project === "path", op.operationId).toBe(
        params.some((p) => p.in === "path" && p.name === "id"),
      );
      expect(op.project === "header", op.operationId).toBe(
        params.some((p) => p.in === "header" && p.name === "x-project-id"),
      );
      if (op.project !== undefined) {
        expect(op.scope, op.operationId).not.toBeNull();
      }
    }
    // Key validation needs no scope; everything else served here names one.
    expect(OPERATIONS.filter((op) => op.scope === null).map((op) => op.operationId)).toEqual(["getWhoami"]);
  });
});

let t: Tenant;
let other: Tenant;
/** A signed-in owner of `t` (cookie header), and the neighbour's grant and key ids. */
let sessionCookie = "";
/** The same owner's session after sign-out, and a plain member's session. */
let endedSessionCookie = "";
let memberSessionCookie = "";
const neighbour = { grantId: "", keyId: "", userId: "", invitationId: "", sessionId: "" };
/** Another member of the owner's studio, for the owner-only pages a member is refused. */
let colleagueId = "";
/** The studio a project belongs to: studio pages name the studio, the table's paths take a project. */
const tenantOf = (projectId: string) => (projectId === other.projectId ? other.tenantId : t.tenantId);
beforeAll(async () => {
  t = await seedTenant("enterprise", "Security Studio");
  other = await seedTenant("enterprise", "Neighbour Studio");
  const mine = await seedUser(t.tenantId);
  const theirUser = await seedUser(other.tenantId);
  sessionCookie = `gt_session=${await withDb((db) => startSession(db, mine.id))}`;
  const member = await seedUser(t.tenantId, "member");
  colleagueId = (await seedUser(t.tenantId, "member")).id;
  memberSessionCookie = `gt_session=${await withDb((db) => startSession(db, member.id))}`;
  const ended = await withDb((db) => startSession(db, mine.id));
  await withDb(async (db) => {
    const user = await sessionUser(db, ended);
    await endSession(db, user?.sessionId ?? "");
  });
  endedSessionCookie = `gt_session=${ended}`;
  await withDb(async (db) => {
    const [grant] = await db
      .insert(oauthGrants)
      .values({
        clientId: "fdc_framedash_cli",
        userId: theirUser.id,
        tenantId: other.tenantId,
        scopes: ["analytics:read"],
      })
      .returning();
    neighbour.grantId = grant?.id ?? "";
    neighbour.keyId = other.keys.read.id;
    neighbour.userId = theirUser.id;
    const theirSession = await sessionUser(db, await startSession(db, theirUser.id));
    neighbour.sessionId = theirSession?.sessionId ?? "";
    const invitation = await createLink(db, {
      purpose: "invitation",
      email: "invited@neighbour.test",
      tenantId: other.tenantId,
      role: "member",
    });
    neighbour.invitationId = invitation.id;
  });
  await withDb(async (db) => {
    const [profile] = await db
      .insert(thresholdProfiles)
      .values({ projectId: other.projectId, name: "Theirs" })
      .returning();
    const [map] = await db
      .insert(maps)
      .values({
        projectId: other.projectId,
        mapId: "theirs",
        name: "Theirs",
        imageKey: `maps/${other.projectId}/theirs`,
        imageContentType: "image/png",
        imageWidth: 2,
        imageHeight: 2,
        worldMinX: 0,
        worldMinY: 0,
        worldMaxX: 1,
        worldMaxY: 1,
      })
      .returning();
    const [entry] = await db
      .insert(contentEntries)
      .values({
        projectId: other.projectId,
        contentType: "weapon",
        contentId: "theirs",
        displayName: "Theirs",
      })
      .returning();
    theirs.contentId = entry?.id ?? "";
    theirs.profileId = profile?.id ?? "";
    theirs.mapId = map?.id ?? "";
  });
});

describe.each(CASES)("$name: 401", (c) => {
  it("without credentials and with an unknown key or token", async () => {
    for (const auth of [{}, { key: `gta_${"C".repeat(40)}` }, { token: `gto_${"D".repeat(40)}` }]) {
      const res = await request(c, t.projectId, { ...auth, ip: "192.0.2.10" });
      expect(res.status).toBe(401);
      expect((await problemOf(res)).error_category).toBe("authentication");
    }
  });
});

describe.each(CASES.filter((c) => c.scope !== null))("$name: 403", (c) => {
  it("for a key without the operation's scope, and for a token where tokens cannot hold it", async () => {
    for (const auth of [{ key: t.keys.ingest.key }, ...(c.tokens ? [] : [{ token: t.token }])]) {
      const res = await request(c, t.projectId, auth);
      expect(res.status).toBe(403);
      expect((await problemOf(res)).detail).toBe(`This operation requires the scope ${c.scope}.`);
    }
  });
});

describe.each(CASES.filter((c) => c.project === "path" || c.project === "header"))(
  "$name: cross-tenant",
  (c) => {
    it("404 for another tenant's project, with a key and (where tokens may call it) a token", async () => {
      for (const auth of [{ key: t.keys.full.key }, ...(c.tokens ? [{ token: t.token }] : [])]) {
        const res = await request(c, other.projectId, auth);
        expect(res.status).toBe(404);
        expect((await problemOf(res)).detail).toBe("Project not found.");
      }
    });
  },
);

describe("cross-tenant writes", () => {
  it("an entry or map of the neighbour, named through one's own project, is 404", async () => {
    for (const path of [
      `/v1/content?id=${theirs.contentId}`,
      "/v1/content?contentType=weapon&contentId=theirs",
      `/v1/projects/${t.projectId}/maps/${theirs.mapId}`,
      `/v1/projects/${t.projectId}/maps/theirs`,
    ]) {
      const res = await api(
        path,
        { key: t.keys.full.key },
        { method: "DELETE", headers: { "X-Project-Id": t.projectId } },
      );
      expect(res.status, path).toBe(404);
    }
  });

  it("changed nothing of the neighbour's", async () => {
    await withDb(async (db) => {
      const profiles = await db
        .select()
        .from(thresholdProfiles)
        .where(eq(thresholdProfiles.projectId, other.projectId));
      expect(profiles.map((p) => [p.id, p.name])).toEqual([[theirs.profileId, "Theirs"]]);
      const theirMaps = await db.select().from(maps).where(eq(maps.projectId, other.projectId));
      expect(theirMaps.map((m) => [m.id, m.mapId, m.name])).toEqual([[theirs.mapId, "theirs", "Theirs"]]);
      const content = await db
        .select()
        .from(contentEntries)
        .where(eq(contentEntries.projectId, other.projectId));
      expect(content.map((e) => [e.id, e.contentType, e.contentId])).toEqual([
        [theirs.contentId, "weapon", "theirs"],
      ]);
    });
  });
});

/**
 * The dashboard's pages call /api/v1 with the session cookie (docs/dashboard.md): a signed-in person is
 * their membership of a studio, so another studio's project is 404 as for its neighbour's token; a
 * session that has ended is no credential; and a change made with a session must come from our origin.
 */
const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const sameOrigin = { Origin: BASE, "Sec-Fetch-Site": "same-origin" };

describe.each(CASES.filter((c) => c.project !== undefined))("$name: a session, cross-tenant", (c) => {
  it("404 for a project of a studio the user does not belong to", async () => {
    const res = await request(
      c,
      other.projectId,
      { ip: "192.0.2.11" },
      { Cookie: sessionCookie, ...sameOrigin },
    );
    expect(res.status).toBe(404);
    expect((await problemOf(res)).detail).toBe("Project not found.");
  });
});

describe.each(CASES)("$name: an ended session", (c) => {
  it("is no credential: 401 with a revoked or unknown session cookie", async () => {
    for (const cookie of [endedSessionCookie, `gt_session=gts_${"E".repeat(43)}`]) {
      const res = await request(c, t.projectId, { ip: "192.0.2.12" }, { Cookie: cookie, ...sameOrigin });
      expect(res.status).toBe(401);
      expect((await problemOf(res)).error_category).toBe("authentication");
    }
  });
});

describe.each(CASES.filter((c) => UNSAFE.has(c.method)))("$name: a session, cross-origin", (c) => {
  it("403 when Origin is another site's or missing, or Sec-Fetch-Site is not same-origin", async () => {
    const cases: Record<string, string>[] = [
      { Origin: "https://attacker.example", "Sec-Fetch-Site": "cross-site" },
      { Origin: "https://attacker.example" },
      {},
      { Origin: BASE, "Sec-Fetch-Site": "same-site" },
    ];
    for (const headers of cases) {
      const res = await request(c, t.projectId, { ip: "192.0.2.14" }, { Cookie: sessionCookie, ...headers });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect((await problemOf(res)).detail).toBe(
        "A browser session may change data only from this site's own pages (Origin must be this origin).",
      );
    }
  });
});

describe("a session's reads", () => {
  it("answer as a key of the project does, within the user's studio", async () => {
    const paths = [
      `/v1/projects/${t.projectId}/status`,
      `/v1/projects/${t.projectId}/dashboard?days=7`,
      `/v1/projects/${t.projectId}/threshold-profiles`,
    ];
    for (const path of paths) {
      const bySession = await api(path, { ip: "192.0.2.15" }, { headers: { Cookie: sessionCookie } });
      const byKey = await api(path, { key: t.keys.full.key });
      expect(bySession.status, path).toBe(200);
      const a = (await bySession.json()) as { data: unknown };
      const b = (await byKey.json()) as { data: unknown };
      expect(stripTimes(a.data), path).toEqual(stripTimes(b.data));
    }
  });

  it("a member's session holds no data:admin: the Exports, Player erasure and Dead letters pages' reads are 403", async () => {
    for (const path of ["exports", "erasures", "dead-letters"]) {
      const res = await api(
        `/v1/projects/${t.projectId}/${path}`,
        { ip: "192.0.2.16" },
        { headers: { Cookie: memberSessionCookie } },
      );
      expect(res.status, path).toBe(403);
      expect((await problemOf(res)).detail).toBe("This operation requires the scope data:admin.");
    }
  });

  it("a member's session holds no data:admin: the SQL query is 403", async () => {
    const res = await api(
      "/v1/query",
      { ip: "192.0.2.16" },
      {
        method: "POST",
        headers: { Cookie: memberSessionCookie, ...sameOrigin, "Content-Type": "application/json" },
        body: JSON.stringify({ project_id: t.projectId, sql: "SELECT 1" }),
      },
    );
    expect(res.status).toBe(403);
    expect((await problemOf(res)).detail).toBe("This operation requires the scope data:admin.");
  });
  it("the audit log is owners' only: a member's session is 403 on the API and the page", async () => {
    const res = await api(
      "/v1/audit-log",
      { ip: "192.0.2.17" },
      { headers: { Cookie: memberSessionCookie } },
    );
    expect(res.status).toBe(403);
    expect((await problemOf(res)).detail).toBe("This operation requires the scope data:admin.");
    const b = new Browser();
    b.cookies.set("gt_session", memberSessionCookie.slice("gt_session=".length));
    expect((await b.get(`/settings/studios/${t.tenantId}/audit-log`)).status).toBe(403);
    const owner = await api("/v1/audit-log", { ip: "192.0.2.17" }, { headers: { Cookie: sessionCookie } });
    expect(owner.status).toBe(200);
  });
});

/** fetchedAt is when each answer was computed: everything else must match. */
function stripTimes(data: unknown): unknown {
  return JSON.parse(JSON.stringify(data), (k, v) => (k === "fetchedAt" ? 0 : v));
}

/**
 * Pages outside /api. Signed out they 307 to sign-in (an API key or token is no session); signed in,
 * a form without its CSRF token is 403; another studio's project or another user's grant is 404.
 */
type PageRoute = { method: "GET" | "POST"; path: (projectId: string) => string; crossTenant: boolean };

const PAGES: PageRoute[] = [
  { method: "GET", path: () => "/", crossTenant: false },
  { method: "GET", path: () => "/settings/connected-apps", crossTenant: false },
  {
    method: "POST",
    path: () => `/settings/connected-apps/${neighbour.grantId}/revoke`,
    crossTenant: true,
  },
  { method: "GET", path: (id) => `/settings/projects/${id}/api-keys`, crossTenant: true },
  { method: "GET", path: (id) => `/projects/${id}`, crossTenant: true },
  ...DASHBOARD_PAGES.map(
    (p): PageRoute => ({
      method: "GET",
      path: (id) => `/projects/${id}/${p.id}`,
      crossTenant: true,
    }),
  ),
  { method: "POST", path: (id) => `/settings/projects/${id}/api-keys`, crossTenant: true },
  {
    method: "POST",
    path: (id) => `/settings/projects/${id}/api-keys/${neighbour.keyId}/revoke`,
    crossTenant: true,
  },
  { method: "GET", path: () => "/settings/account", crossTenant: false },
  ...["name", "password", "delete"].map(
    (action): PageRoute => ({
      method: "POST",
      path: () => `/settings/account/${action}`,
      crossTenant: false,
    }),
  ),
  { method: "GET", path: (id) => `/settings/studios/${tenantOf(id)}/members`, crossTenant: true },
  { method: "GET", path: (id) => `/settings/studios/${tenantOf(id)}/audit-log`, crossTenant: true },
  { method: "GET", path: (id) => `/settings/studios/${tenantOf(id)}/sso`, crossTenant: true },
  ...["", "/test", "/remove", "/verify"].map(
    (action): PageRoute => ({
      method: "POST",
      path: (id) => `/settings/studios/${tenantOf(id)}/sso${action}`,
      crossTenant: true,
    }),
  ),
  { method: "GET", path: (id) => `/settings/studios/${tenantOf(id)}/retention`, crossTenant: true },
  { method: "POST", path: (id) => `/settings/studios/${tenantOf(id)}/retention`, crossTenant: true },
  { method: "POST", path: (id) => `/settings/studios/${tenantOf(id)}/invitations`, crossTenant: true },
  ...["resend", "revoke"].map(
    (action): PageRoute => ({
      method: "POST",
      path: (id) => `/settings/studios/${tenantOf(id)}/invitations/${neighbour.invitationId}/${action}`,
      crossTenant: true,
    }),
  ),
  ...["role", "remove", "sessions/end"].map(
    (action): PageRoute => ({
      method: "POST",
      path: (id) => `/settings/studios/${tenantOf(id)}/members/${neighbour.userId}/${action}`,
      crossTenant: true,
    }),
  ),
  {
    method: "GET",
    path: (id) => `/settings/studios/${tenantOf(id)}/members/${neighbour.userId}/remove`,
    crossTenant: true,
  },
  // Another person's session is not one's own to end (404, it lives on); the path takes no studio.
  {
    method: "POST",
    path: () => `/settings/account/sessions/${neighbour.sessionId}/end`,
    crossTenant: true,
  },
  { method: "POST", path: () => "/settings/account/sessions/end-others", crossTenant: false },
  { method: "POST", path: (id) => `/settings/studios/${tenantOf(id)}/sso/enforcement`, crossTenant: true },
];

/** Pages only an owner may use: a member of the same studio is refused (403), nothing changed. */
const OWNER_ONLY: Array<{ method: "GET" | "POST"; path: () => string }> = [
  { method: "GET", path: () => `/settings/studios/${t.tenantId}/members/${colleagueId}/remove` },
  { method: "POST", path: () => `/settings/studios/${t.tenantId}/members/${colleagueId}/remove` },
  { method: "POST", path: () => `/settings/studios/${t.tenantId}/members/${colleagueId}/role` },
  { method: "POST", path: () => `/settings/studios/${t.tenantId}/members/${colleagueId}/sessions/end` },
  { method: "GET", path: () => `/settings/studios/${t.tenantId}/sso` },
  { method: "POST", path: () => `/settings/studios/${t.tenantId}/sso` },
  { method: "POST", path: () => `/settings/studios/${t.tenantId}/sso/test` },
  { method: "POST", path: () => `/settings/studios/${t.tenantId}/sso/remove` },
  { method: "POST", path: () => `/settings/studios/${t.tenantId}/sso/verify` },
  { method: "POST", path: () => `/settings/studios/${t.tenantId}/sso/enforcement` },
  { method: "POST", path: () => `/settings/studios/${t.tenantId}/retention` },
];

async function page(route: PageRoute, projectId: string, b: Browser, fields: Record<string, string> = {}) {
  return route.method === "GET" ? b.get(route.path(projectId)) : b.post(route.path(projectId), fields);
}

async function signedInBrowser(): Promise<Browser> {
  const b = new Browser();
  b.cookies.set("gt_session", sessionCookie.slice("gt_session=".length));
  return b;
}

describe.each(PAGES)("page $method $path", (route) => {
  it("signed out: 307 to the sign-in page with the way back, also when an API key or token is sent", async () => {
    const variants: Record<string, string>[] = [
      {},
      { "X-API-Key": t.keys.full.key },
      { Authorization: `Bearer ${t.token}` },
    ];
    for (const headers of variants) {
      const b = new Browser();
      const res = await b.fetch(route.path(t.projectId), {
        method: route.method,
        headers: { ...headers, "Content-Type": "application/x-www-form-urlencoded" },
        body: route.method === "POST" ? "preset=read" : undefined,
      });
      expect(res.status).toBe(307);
      expect(res.headers.get("location")).toMatch(/^\/sign-in(\?returnTo=%2F.*)?$/);
    }
  });
});

describe.each(PAGES.filter((r) => r.method === "POST"))("page $method $path: CSRF", (route) => {
  it("signed in, without the form's CSRF token: 403", async () => {
    const res = await page(route, t.projectId, await signedInBrowser(), { preset: "read" });
    expect(res.status).toBe(403);
  });
});

describe.each(PAGES.filter((r) => r.crossTenant))("page $method $path: cross-tenant", (route) => {
  it("signed in, another studio's record: 404, nothing changed", async () => {
    const b = await signedInBrowser();
    const csrf = csrfOf(await (await b.get("/")).text());
    const res = await page(route, other.projectId, b, { csrf, preset: "read" });
    expect(res.status).toBe(404);
    await withDb(async (db) => {
      const [grant] = await db.select().from(oauthGrants).where(eq(oauthGrants.id, neighbour.grantId));
      expect(grant?.revokedAt).toBeNull();
      const keys = await db.select().from(apiKeys).where(eq(apiKeys.projectId, other.projectId));
      expect(keys.filter((k) => k.revokedAt === null).length).toBe(4);
      const members = await db.select().from(memberships).where(eq(memberships.tenantId, other.tenantId));
      expect(members.map((m) => [m.userId, m.role])).toEqual([[neighbour.userId, "owner"]]);
      const links = await db.select().from(accountLinks).where(eq(accountLinks.tenantId, other.tenantId));
      expect(links.map((l) => [l.id, l.revokedAt])).toEqual([[neighbour.invitationId, null]]);
      const [session] = await db.select().from(sessions).where(eq(sessions.id, neighbour.sessionId));
      expect(session?.revokedAt).toBeNull();
    });
  });
});

describe.each(OWNER_ONLY)("page $method $path: a member", (route) => {
  it("signed in as a member of the studio: 403, nothing changed", async () => {
    const b = new Browser();
    b.cookies.set("gt_session", memberSessionCookie.slice("gt_session=".length));
    const csrf = csrfOf(await (await b.get("/")).text());
    const res =
      route.method === "GET"
        ? await b.get(route.path())
        : await b.post(route.path(), { csrf, role: "owner" });
    expect(res.status).toBe(403);
    await withDb(async (db) => {
      const [m] = await db.select().from(memberships).where(eq(memberships.userId, colleagueId));
      expect(m?.role).toBe("member");
    });
    expect((await b.get("/")).status).toBe(200);
  });
});

/**
 * Pages that need a scope (SQL, Exports, Player erasure, Dead letters: data:admin, as their endpoints
 * do): a member's session,
 * which holds no data:admin, gets a 403 page and no link to it; an owner's opens it.
 */
describe.each(DASHBOARD_PAGES.filter((p) => pageScope(p.id) !== undefined))(
  "page GET /projects/:id/$id: without its scope",
  (p) => {
    it("a member's session: 403 naming the scope, and the navigation leaves the page out", async () => {
      const member = new Browser();
      member.cookies.set("gt_session", memberSessionCookie.slice("gt_session=".length));
      const res = await member.get(`/projects/${t.projectId}/${p.id}`);
      expect(res.status).toBe(403);
      expect(await res.text()).toContain(`needs the ${pageScope(p.id)} scope`);
      const overview = await (await member.get(`/projects/${t.projectId}/overview`)).text();
      expect(overview).toContain(`/projects/${t.projectId}/overview"`);
      expect(overview).not.toContain(`/projects/${t.projectId}/${p.id}"`);
      const owner = await signedInBrowser();
      expect((await owner.get(`/projects/${t.projectId}/${p.id}`)).status).toBe(200);
      expect(await (await owner.get(`/projects/${t.projectId}/overview`)).text()).toContain(
        `/projects/${t.projectId}/${p.id}"`,
      );
    });
  },
);

/**
 * Public routes: code, icons and descriptions, no data. Anyone may read them, signed in or not, with or
 * without a key; they set no cookie and are never sniffed as another type.
 */
const PUBLIC = [
  "/favicon.svg",
  "/favicon.ico",
  SCRIPT_PATH,
  // The entry's chunks (lazily loaded pages: SQL with its editor, Exports, Player erasure, Dead letters).
  ...Object.keys(DASHBOARD_CHUNKS).map((chunk) => `/assets/${chunk}`),
  STYLE_PATH,
  "/.well-known/oauth-authorization-server",
  "/api/docs",
  // Liveness: public by design, it reads no credential and names nothing (health.test.ts).
  "/api/health",
  ...Object.values(DOCS_ASSETS).map((path) => `/api${path}`),
];

/** Forms a visitor uses before (or instead of) signing in: sign-up, its verification, reset, invitations. */
const PUBLIC_FORMS = [
  "/sign-up",
  "/sign-up/verify",
  "/password-reset",
  "/password-reset/confirm",
  "/invitations/accept",
];

describe.each(PUBLIC_FORMS)("public form POST %s: CSRF", (path) => {
  it("without the form's token (or from another origin): 403, the link (if any) still live, nothing sent", async () => {
    const email = `csrf-${crypto.randomUUID().slice(0, 8)}@security.test`;
    const purpose = path.startsWith("/sign-up/")
      ? "signup"
      : path.startsWith("/password-reset/")
        ? "reset"
        : "invitation";
    const { id, token } = await withDb((db) =>
      createLink(db, {
        purpose,
        email,
        tenantId: purpose === "invitation" ? t.tenantId : undefined,
        role: purpose === "invitation" ? "member" : undefined,
        userId: purpose === "reset" ? neighbour.userId : undefined,
        passwordHash: purpose === "signup" ? "$scrypt$ln=15,r=8,p=3$AAAA$AAAA" : undefined,
      }),
    );
    const fields = { email, token, password: "a-long-password", studio: "" };
    const b = new Browser();
    const page = await b.get(`${path}?token=${token}`);
    expect(page.status).toBe(200);
    const csrf = csrfOf(await page.text());
    for (const res of [
      await b.post(path, fields),
      await b.post(path, { ...fields, csrf }, { Origin: "https://evil.example" }),
      await b.post(path, { ...fields, csrf }, { "Sec-Fetch-Site": "cross-site" }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.headers.getSetCookie().some((c) => c.startsWith("gt_session="))).toBe(false);
    }
    await withDb(async (db) => {
      const [link] = await db.select().from(accountLinks).where(eq(accountLinks.id, id));
      expect(link?.usedAt).toBeNull();
      expect(await db.select().from(users).where(eq(users.email, email))).toEqual([]);
    });
  });
});

/**
 * Routes outside the Web API's document with their own tests: the document itself
 * (openapi-coverage.test.ts), sign-in, consent, the OAuth endpoints, the operator's announcements
 * (below and operator-announce.test.ts).
 */
const OWN_TESTS = [
  "GET /api/v1/openapi.json",
  // Opened from a mail or before sign-in (accounts-team.test.ts; their CSRF below).
  ...PUBLIC_FORMS.flatMap((path) => [`GET ${path}`, `POST ${path}`]),
  "GET /sign-in",
  "POST /sign-in",
  "POST /sign-out",
  // The providers' redirect back (sso.test.ts: the flow, its refusals and their audit entries).
  "GET /sso/callback",
  "GET /oauth/authorize",
  "POST /oauth/authorize",
  "POST /api/oauth/token",
  "POST /api/oauth/revoke",
  "POST /api/operator/credential-changes",
  // The dense-number backfill, operator secret only (actor-numbers.test.ts).
  "POST /api/operator/number-backfills",
  // The readiness view, operator secret only (health.test.ts).
  "GET /api/operator/health",
];

describe.each(PUBLIC)("public GET %s", (path) => {
  it("answers 200 to anyone, sets no cookie, is not sniffed", async () => {
    const variants: Record<string, string>[] = [
      {},
      { Cookie: sessionCookie },
      { "X-API-Key": t.keys.read.key },
    ];
    for (const headers of variants) {
      const res = await new Browser().fetch(path, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(res.headers.getSetCookie(), JSON.stringify(headers)).toEqual([]);
      expect(res.headers.get("x-content-type-options"), JSON.stringify(headers)).toBe("nosniff");
    }
  });
});

describe("the tables of pages and public routes", () => {
  it("name every route the app serves outside the Web API's document", () => {
    const listed = [
      ...PAGES.map((r) => `${r.method} ${r.path(t.projectId)}`),
      ...PUBLIC.map((path) => `GET ${path}`),
      ...OWN_TESTS,
    ];
    const documented = new Set(
      Object.keys(DOCUMENT.paths).map((p) => `/api${p.replace(/\{(\w+)\}/g, ":$1")}`),
    );
    const routes = new Set(
      newApp()
        .routes.filter((r) => r.method !== "ALL" && !documented.has(r.path))
        .map((r) => `${r.method} ${r.path}`),
    );
    const unlisted = [...routes].filter((route) => {
      // A parameter, with or without its pattern (Hono's `:chunk{chunk-…js}`), matches one segment.
      const pattern = new RegExp(`^${route.replace(/:\w+(\{[^}]*\})?/g, "[^/]+")}$`);
      return !listed.some((l) => pattern.test(l));
    });
    expect(unlisted).toEqual([]);
    expect(routes.size).toBeGreaterThan(20);
  });
});

describe.each(["/oauth/token", "/oauth/revoke"])("POST /api%s", (path) => {
  it("takes no API credentials or session: an unknown client is 401 invalid_client, never a redirect", async () => {
    const variants: Record<string, string>[] = [
      {},
      { "X-API-Key": t.keys.full.key },
      { Authorization: `Bearer ${t.token}` },
      { Cookie: sessionCookie },
    ];
    for (const headers of variants) {
      const res = await api(
        path,
        { ip: "192.0.2.12" },
        {
          method: "POST",
          headers: { ...headers, "Content-Type": "application/x-www-form-urlencoded" },
          body: "grant_type=refresh_token&refresh_token=gtr_x&token=gtr_x",
        },
      );
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "invalid_client", error_description: "Unknown client_id." });
    }
  });
});

describe.each([
  ["/operator/credential-changes", () => ({ tenantId: t.tenantId })],
  ["/operator/number-backfills", () => ({ projectIds: [t.projectId] })],
])("POST /api%s", (path, bodyOf) => {
  it("takes only the operator secret: no credentials, an API key, a token, a session or a wrong secret is 401", async () => {
    const variants: Record<string, string>[] = [
      {},
      { "X-API-Key": t.keys.full.key },
      { Authorization: `Bearer ${t.token}` },
      { Cookie: sessionCookie, ...sameOrigin },
      { Authorization: "Bearer not-the-operator-secret-but-long-enough-0000" },
    ];
    for (const headers of variants) {
      const res = await api(
        path,
        { ip: "192.0.2.17" },
        {
          method: "POST",
          headers: { ...headers, "Content-Type": "application/json" },
          body: JSON.stringify(bodyOf()),
        },
      );
      expect(res.status, JSON.stringify(Object.keys(headers))).toBe(401);
      expect((await problemOf(res)).detail).toBe(
        "This endpoint requires the operator secret (Authorization: Bearer).",
      );
    }
  });
});
