import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { apiKeys, contentEntries, maps, oauthGrants, thresholdProfiles } from "../../schema/pg/schema.js";
import { startSession } from "../../workers/accounts/sessions.js";
import { type Scope, TOKEN_SCOPES } from "../../workers/shared/scopes.js";
import { Browser, csrfOf, seedUser } from "../support/browser.js";
import { seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import { multipart, png } from "../support/images.js";

/**
 * The security cases every route shares: 401 without or with a bad credential, 403 without the
 * route's scope, and 404 for a project of another tenant. Add each new route here.
 */
type Route = {
  method: string;
  path: (projectId: string) => string;
  scope: Scope | null;
  projectScoped: boolean;
  /**
   * Headers and a valid body for the project: routes naming it by X-Project-Id need the header, and a
   * valid body makes the cross-tenant case reach project authorization rather than body validation.
   */
  init?: (projectId: string) => RequestInit | Promise<RequestInit>;
};

/** Records of the neighbour tenant that its neighbour's credentials try to reach. */
const theirs = { profileId: "", mapId: "", contentId: "" };

const ZERO_UUID = "00000000-0000-4000-8000-000000000000";

const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  headers: { "Content-Type": "application/json", ...headers },
  body: JSON.stringify(body),
});

async function mapUpload(projectId: string): Promise<RequestInit> {
  const fields = { mapId: "m", name: "M", worldMinX: "0", worldMinY: "0", worldMaxX: "1", worldMaxY: "1" };
  const { body, contentType } = multipart([
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    { name: "image", filename: "m.png", bytes: await png(2, 2) },
  ]);
  return { headers: { "Content-Type": contentType, "X-Project-Id": projectId }, body };
}

const ROUTES: Route[] = [
  { method: "GET", path: () => "/v1/whoami", scope: null, projectScoped: false },
  { method: "GET", path: () => "/v1/projects", scope: "analytics:read", projectScoped: false },
  { method: "GET", path: (id) => `/v1/projects/${id}/status`, scope: "analytics:read", projectScoped: true },
  {
    method: "GET",
    path: (id) => `/v1/projects/${id}/dead-letters`,
    scope: "data:admin",
    projectScoped: true,
  },
  {
    method: "POST",
    path: (id) => `/v1/projects/${id}/dead-letters/replay`,
    scope: "data:admin",
    projectScoped: true,
  },
  {
    method: "GET",
    path: (id) => `/v1/projects/${id}/threshold-profiles`,
    scope: "analytics:read",
    projectScoped: true,
  },
  {
    method: "POST",
    path: (id) => `/v1/projects/${id}/threshold-profiles`,
    scope: "resources:write",
    projectScoped: true,
    init: () => json({ name: "intruder" }),
  },
  {
    method: "PATCH",
    path: (id) => `/v1/projects/${id}/threshold-profiles/${theirs.profileId}`,
    scope: "resources:write",
    projectScoped: true,
    init: () => json({ name: "intruder" }),
  },
  {
    method: "DELETE",
    path: (id) => `/v1/projects/${id}/threshold-profiles/${theirs.profileId}`,
    scope: "resources:write",
    projectScoped: true,
  },
  { method: "GET", path: (id) => `/v1/projects/${id}/maps`, scope: "analytics:read", projectScoped: true },
  {
    method: "GET",
    path: (id) => `/v1/projects/${id}/maps/${theirs.mapId}/image`,
    scope: "analytics:read",
    projectScoped: true,
  },
  {
    method: "DELETE",
    path: (id) => `/v1/projects/${id}/maps/${theirs.mapId}`,
    scope: "resources:write",
    projectScoped: true,
  },
  // The same route by the neighbour's user map id.
  {
    method: "DELETE",
    path: (id) => `/v1/projects/${id}/maps/theirs`,
    scope: "resources:write",
    projectScoped: true,
  },
  {
    method: "POST",
    path: () => "/v1/maps/upload",
    scope: "resources:write",
    projectScoped: true,
    init: mapUpload,
  },
  { method: "GET", path: (id) => `/v1/projects/${id}/content`, scope: "analytics:read", projectScoped: true },
  {
    method: "GET",
    path: () => "/v1/content",
    scope: "analytics:read",
    projectScoped: true,
    init: (id) => ({ headers: { "X-Project-Id": id } }),
  },
  {
    method: "POST",
    path: () => "/v1/content",
    scope: "resources:write",
    projectScoped: true,
    init: (id) =>
      json({ entries: [{ contentType: "t", contentId: "i", displayName: "d" }] }, { "X-Project-Id": id }),
  },
  {
    method: "DELETE",
    path: () => `/v1/content?id=${theirs.contentId}`,
    scope: "resources:write",
    projectScoped: true,
    init: (id) => ({ headers: { "X-Project-Id": id } }),
  },
  {
    method: "DELETE",
    path: () => "/v1/content?contentType=weapon&contentId=theirs",
    scope: "resources:write",
    projectScoped: true,
    init: (id) => ({ headers: { "X-Project-Id": id } }),
  },
  {
    method: "GET",
    path: (id) => `/v1/projects/${id}/channels`,
    scope: "analytics:read",
    projectScoped: true,
  },
  {
    method: "POST",
    path: (id) => `/v1/projects/${id}/channels`,
    scope: "resources:write",
    projectScoped: true,
    init: () => json({ kind: "slack", name: "n", url: "https://hooks.slack.com/services/x" }),
  },
  {
    method: "DELETE",
    path: (id) => `/v1/projects/${id}/channels/${ZERO_UUID}`,
    scope: "resources:write",
    projectScoped: true,
  },
  { method: "GET", path: (id) => `/v1/projects/${id}/alerts`, scope: "analytics:read", projectScoped: true },
  {
    method: "POST",
    path: (id) => `/v1/projects/${id}/alerts`,
    scope: "resources:write",
    projectScoped: true,
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
  {
    method: "GET",
    path: (id) => `/v1/projects/${id}/alerts/history`,
    scope: "analytics:read",
    projectScoped: true,
  },
  {
    method: "GET",
    path: (id) => `/v1/projects/${id}/alerts/${ZERO_UUID}`,
    scope: "analytics:read",
    projectScoped: true,
  },
  {
    method: "PATCH",
    path: (id) => `/v1/projects/${id}/alerts/${ZERO_UUID}`,
    scope: "resources:write",
    projectScoped: true,
    init: () => json({ name: "n" }),
  },
  {
    method: "DELETE",
    path: (id) => `/v1/projects/${id}/alerts/${ZERO_UUID}`,
    scope: "resources:write",
    projectScoped: true,
  },
  // The project of a query is in its body: the cross-tenant case is in query-isolation.test.ts.
  {
    method: "POST",
    path: () => "/v1/query",
    scope: "data:admin",
    projectScoped: false,
    init: (id) => json({ project_id: id, sql: "SELECT 1" }),
  },
  {
    method: "POST",
    path: (id) => `/v1/projects/${id}/exports`,
    scope: "data:admin",
    projectScoped: true,
    init: () => json({ days: 7, format: "csv" }),
  },
  {
    method: "GET",
    path: (id) => `/v1/projects/${id}/exports/${ZERO_UUID}`,
    scope: "data:admin",
    projectScoped: true,
  },
  {
    method: "GET",
    path: (id) => `/v1/projects/${id}/exports/${ZERO_UUID}/download`,
    scope: "data:admin",
    projectScoped: true,
  },
  {
    method: "POST",
    path: (id) => `/v1/projects/${id}/erasures`,
    scope: "data:admin",
    projectScoped: true,
    init: () => json({ playerId: "nobody" }),
  },
  {
    method: "GET",
    path: (id) => `/v1/projects/${id}/erasures/${ZERO_UUID}`,
    scope: "data:admin",
    projectScoped: true,
  },
  ...[
    "dashboard",
    "heatmap?mapId=dust",
    "heatmap?mapId=dust&includeZ=true&eventName=kill",
    "retention",
    "funnels?steps=a,b",
    "insights?metric=count&groupBy=day",
    "builds",
    "builds/compare?baseline=1.0.0&candidate=1.1.0",
    "builds/compare?baseline=1.0.0&candidate=1.1.0&mapId=dust&platform=windows&fresh=1",
  ].map(
    (endpoint): Route => ({
      method: "GET",
      path: (id) => `/v1/projects/${id}/${endpoint}`,
      scope: "analytics:read",
      projectScoped: true,
    }),
  ),
];

async function request(route: Route, projectId: string, auth: Parameters<typeof api>[1]) {
  const init = (await route.init?.(projectId)) ?? {};
  return api(route.path(projectId), auth, { ...init, method: route.method });
}

let t: Tenant;
let other: Tenant;
/** A signed-in owner of `t` (cookie header), and the neighbour's grant and key ids. */
let sessionCookie = "";
const neighbour = { grantId: "", keyId: "" };
beforeAll(async () => {
  t = await seedTenant("enterprise", "Security Studio");
  other = await seedTenant("enterprise", "Neighbour Studio");
  const mine = await seedUser(t.tenantId);
  const theirUser = await seedUser(other.tenantId);
  sessionCookie = `gt_session=${await withDb((db) => startSession(db, mine.id))}`;
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

describe.each(ROUTES)("$method $path: 401", (route) => {
  it("without credentials and with an unknown key or token", async () => {
    for (const auth of [{}, { key: `gta_${"C".repeat(40)}` }, { token: `gto_${"D".repeat(40)}` }]) {
      const res = await request(route, t.projectId, { ...auth, ip: "192.0.2.10" });
      expect(res.status).toBe(401);
      expect((await problemOf(res)).error_category).toBe("authentication");
    }
  });
});

describe.each(ROUTES.filter((r) => r.scope !== null))("$method $path: 403", (route) => {
  it("for a key without the route's scope, and for a token where tokens cannot hold it", async () => {
    const tokenMay = (TOKEN_SCOPES as readonly string[]).includes(route.scope as string);
    for (const auth of [{ key: t.keys.ingest.key }, ...(tokenMay ? [] : [{ token: t.token }])]) {
      const res = await request(route, t.projectId, auth);
      expect(res.status).toBe(403);
      expect((await problemOf(res)).detail).toContain(route.scope);
    }
  });
});

describe.each(ROUTES.filter((r) => r.projectScoped))("$method $path: cross-tenant", (route) => {
  it("404 for another tenant's project, with a key and (where tokens may call it) a token", async () => {
    const tokenMay = route.scope === null || (TOKEN_SCOPES as readonly string[]).includes(route.scope);
    for (const auth of [{ key: t.keys.full.key }, ...(tokenMay ? [{ token: t.token }] : [])]) {
      const res = await request(route, other.projectId, auth);
      expect(res.status).toBe(404);
    }
  });
});

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

describe.each(ROUTES)("$method $path: a session cookie", (route) => {
  it("is not a credential: 401 with only the cookie of a signed-in owner", async () => {
    const init = (await route.init?.(t.projectId)) ?? {};
    const headers = new Headers(init.headers);
    headers.set("Cookie", sessionCookie);
    const res = await api(
      route.path(t.projectId),
      { ip: "192.0.2.11" },
      { ...init, headers, method: route.method },
    );
    expect(res.status).toBe(401);
  });
});

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
  { method: "POST", path: (id) => `/settings/projects/${id}/api-keys`, crossTenant: true },
  {
    method: "POST",
    path: (id) => `/settings/projects/${id}/api-keys/${neighbour.keyId}/revoke`,
    crossTenant: true,
  },
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
    });
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
