import { beforeAll, describe, expect, it } from "vitest";
import { type Scope, TOKEN_SCOPES } from "../../workers/shared/scopes.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";

/**
 * The security cases every route shares: 401 without or with a bad credential, 403 without the
 * route's scope, and 404 for a project of another tenant. Add each new route here.
 */
type Route = {
  method: string;
  path: (projectId: string) => string;
  scope: Scope | null;
  projectScoped: boolean;
};

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
  ...[
    "dashboard",
    "heatmap?mapId=dust",
    "retention",
    "funnels?steps=a,b",
    "insights?metric=count&groupBy=day",
    "builds",
  ].map(
    (endpoint): Route => ({
      method: "GET",
      path: (id) => `/v1/projects/${id}/${endpoint}`,
      scope: "analytics:read",
      projectScoped: true,
    }),
  ),
];

let t: Tenant;
let other: Tenant;
beforeAll(async () => {
  t = await seedTenant("enterprise", "Security Studio");
  other = await seedTenant("enterprise", "Neighbour Studio");
});

describe.each(ROUTES)("$method $path: 401", (route) => {
  it("without credentials and with an unknown key or token", async () => {
    const path = route.path(t.projectId);
    for (const auth of [{}, { key: `gta_${"C".repeat(40)}` }, { token: `gto_${"D".repeat(40)}` }]) {
      const res = await api(path, { ...auth, ip: "192.0.2.10" }, { method: route.method });
      expect(res.status).toBe(401);
      expect((await problemOf(res)).error_category).toBe("authentication");
    }
  });
});

describe.each(ROUTES.filter((r) => r.scope !== null))("$method $path: 403", (route) => {
  it("for a key without the route's scope", async () => {
    const res = await api(route.path(t.projectId), { key: t.keys.ingest.key }, { method: route.method });
    expect(res.status).toBe(403);
    expect((await problemOf(res)).detail).toContain(route.scope);
  });
});

describe.each(ROUTES.filter((r) => r.projectScoped))("$method $path: cross-tenant", (route) => {
  it("404 for another tenant's project, with a key and (where tokens may call it) a token", async () => {
    const tokenMay = route.scope === null || (TOKEN_SCOPES as readonly string[]).includes(route.scope);
    for (const auth of [{ key: t.keys.full.key }, ...(tokenMay ? [{ token: t.token }] : [])]) {
      const res = await api(route.path(other.projectId), auth, { method: route.method });
      expect(res.status).toBe(404);
    }
  });
});
