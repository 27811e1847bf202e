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
  /** A body that passes schema validation, so the cross-tenant case reaches the project check. */
  body?: unknown;
};

const ZERO_UUID = "00000000-0000-4000-8000-000000000000";

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
    path: (id) => `/v1/projects/${id}/channels`,
    scope: "analytics:read",
    projectScoped: true,
  },
  {
    method: "POST",
    path: (id) => `/v1/projects/${id}/channels`,
    scope: "resources:write",
    projectScoped: true,
    body: { kind: "slack", name: "n", url: "https://hooks.slack.com/services/x" },
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
    body: {
      name: "n",
      mapId: ZERO_UUID,
      thresholdProfileId: ZERO_UUID,
      metric: "fps",
      thresholdLevel: "warn",
      failPercentage: 10,
      evaluationDays: 7,
      cellSize: 25,
      cooldownMinutes: 60,
    },
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
    body: { name: "n" },
  },
  {
    method: "DELETE",
    path: (id) => `/v1/projects/${id}/alerts/${ZERO_UUID}`,
    scope: "resources:write",
    projectScoped: true,
  },
];

function init(route: Route): RequestInit {
  return route.body === undefined
    ? { method: route.method }
    : {
        method: route.method,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(route.body),
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
      const res = await api(path, { ...auth, ip: "192.0.2.10" }, init(route));
      expect(res.status).toBe(401);
      expect((await problemOf(res)).error_category).toBe("authentication");
    }
  });
});

describe.each(ROUTES.filter((r) => r.scope !== null))("$method $path: 403", (route) => {
  it("for a key without the route's scope", async () => {
    const res = await api(route.path(t.projectId), { key: t.keys.ingest.key }, init(route));
    expect(res.status).toBe(403);
    expect((await problemOf(res)).detail).toContain(route.scope);
  });
});

describe.each(ROUTES.filter((r) => r.projectScoped))("$method $path: cross-tenant", (route) => {
  it("404 for another tenant's project, with a key and (where tokens may call it) a token", async () => {
    const tokenMay = route.scope === null || (TOKEN_SCOPES as readonly string[]).includes(route.scope);
    for (const auth of [{ key: t.keys.full.key }, ...(tokenMay ? [{ token: t.token }] : [])]) {
      const res = await api(route.path(other.projectId), auth, init(route));
      expect(res.status).toBe(404);
    }
  });
});
