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
  /** A valid JSON body, so that the case under test, not validation, decides the answer. */
  body?: (projectId: string) => unknown;
};

const ANY_ID = "00000000-0000-4000-8000-000000000000";

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
  // The project of a query is in its body: the cross-tenant case is in query-isolation.test.ts.
  {
    method: "POST",
    path: () => "/v1/query",
    scope: "data:admin",
    projectScoped: false,
    body: (id) => ({ project_id: id, sql: "SELECT 1" }),
  },
  {
    method: "POST",
    path: (id) => `/v1/projects/${id}/exports`,
    scope: "data:admin",
    projectScoped: true,
    body: () => ({ days: 7, format: "csv" }),
  },
  {
    method: "GET",
    path: (id) => `/v1/projects/${id}/exports/${ANY_ID}`,
    scope: "data:admin",
    projectScoped: true,
  },
  {
    method: "GET",
    path: (id) => `/v1/projects/${id}/exports/${ANY_ID}/download`,
    scope: "data:admin",
    projectScoped: true,
  },
  {
    method: "POST",
    path: (id) => `/v1/projects/${id}/erasures`,
    scope: "data:admin",
    projectScoped: true,
    body: () => ({ playerId: "nobody" }),
  },
  {
    method: "GET",
    path: (id) => `/v1/projects/${id}/erasures/${ANY_ID}`,
    scope: "data:admin",
    projectScoped: true,
  },
];

function init(route: Route, projectId: string): RequestInit {
  if (!route.body) {
    return { method: route.method };
  }
  return {
    method: route.method,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(route.body(projectId)),
  };
}

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
      const res = await api(path, { ...auth, ip: "192.0.2.10" }, init(route, t.projectId));
      expect(res.status).toBe(401);
      expect((await problemOf(res)).error_category).toBe("authentication");
    }
  });
});

describe.each(ROUTES.filter((r) => r.scope !== null))("$method $path: 403", (route) => {
  it("for a key without the route's scope, and for a token where tokens cannot hold it", async () => {
    const tokenMay = (TOKEN_SCOPES as readonly string[]).includes(route.scope as string);
    for (const auth of [{ key: t.keys.ingest.key }, ...(tokenMay ? [] : [{ token: t.token }])]) {
      const res = await api(route.path(t.projectId), auth, init(route, t.projectId));
      expect(res.status).toBe(403);
      expect((await problemOf(res)).detail).toContain(route.scope);
    }
  });
});

describe.each(ROUTES.filter((r) => r.projectScoped))("$method $path: cross-tenant", (route) => {
  it("404 for another tenant's project, with a key and (where tokens may call it) a token", async () => {
    const tokenMay = route.scope === null || (TOKEN_SCOPES as readonly string[]).includes(route.scope);
    for (const auth of [{ key: t.keys.full.key }, ...(tokenMay ? [{ token: t.token }] : [])]) {
      const res = await api(route.path(other.projectId), auth, init(route, other.projectId));
      expect(res.status).toBe(404);
    }
  });
});
