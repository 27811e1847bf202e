import { SELF } from "cloudflare:test";
import { eq } from "drizzle-orm";
import * as oauth from "oauth4webapi";
import { beforeAll, describe, expect, it } from "vitest";
import { oauthCodes, oauthGrants, oauthRefreshTokens, oauthTokens } from "../../schema/pg/schema.js";
import { addMembership } from "../../workers/api/accounts/users.js";
import { createProject, createTenant } from "../../workers/api/bootstrap.js";
import { sha256Hex } from "../../workers/shared/credentials/secrets.js";
import { Browser, hiddenFields, seedUser } from "../support/browser.js";
import { BASE, seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, ingest, problemOf } from "../support/http.js";
import type { OkBody } from "../support/schema.js";
import { waitFor } from "../support/wait.js";

const CLI = "fdc_framedash_cli";
let t: Tenant;
let user: { id: string; email: string; password: string };
/** A second studio the same user belongs to: the consent page asks which one. */
let second: { tenantId: string; projectId: string };

function b64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

async function pkce() {
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(48)));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  return { verifier, challenge: b64url(digest) };
}

type AuthorizeInput = {
  clientId?: string;
  redirectUri?: string;
  scope?: string;
  state?: string;
  challenge?: string;
  method?: string | null;
};

function authorizePath(p: AuthorizeInput): string {
  const q = new URLSearchParams({
    response_type: "code",
    client_id: p.clientId ?? CLI,
    redirect_uri: p.redirectUri ?? "http://127.0.0.1:53682/callback",
    scope: p.scope ?? "analytics:read resources:write",
    state: p.state ?? "st-123",
    code_challenge: p.challenge ?? "x".repeat(43),
  });
  if (p.method !== null) {
    q.set("code_challenge_method", p.method ?? "S256");
  }
  return `/oauth/authorize?${q}`;
}

/** Posts to the token endpoint as the CLI does: a form body, JSON back, no redirects followed. */
async function tokenRequest(params: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await api(
    "/oauth/token",
    { ip: "198.18.0.1" },
    {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Accept: "application/json",
        ...headers,
      },
      body: new URLSearchParams(params).toString(),
    },
  );
  return { res, body: (await res.json()) as Record<string, unknown> };
}

async function revokeRequest(params: Record<string, string>) {
  return api(
    "/oauth/revoke",
    { ip: "198.18.0.1" },
    {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(params).toString(),
    },
  );
}

/**
 * The browser half of a login: consent page, Allow (with a studio), and the redirect back.
 * Returns the callback URL the browser was sent to.
 */
async function approve(b: Browser, path: string, tenantId?: string, decision = "allow"): Promise<URL> {
  const page = await b.get(path);
  expect(page.status).toBe(200);
  const html = await page.text();
  const fields = hiddenFields(html);
  const res = await b.post("/oauth/authorize", {
    ...fields,
    ...(tenantId ? { tenant: tenantId } : {}),
    decision,
  });
  expect(res.status).toBe(303);
  return new URL(res.headers.get("location") ?? "");
}

/** The whole CLI login: authorize with PKCE, consent, code, token exchange. */
async function login(b: Browser, opts: { tenantId?: string; scope?: string; port?: number } = {}) {
  const { verifier, challenge } = await pkce();
  const redirectUri = `http://127.0.0.1:${opts.port ?? 53682}/callback`;
  const cb = await approve(
    b,
    authorizePath({ challenge, redirectUri, scope: opts.scope }),
    opts.tenantId ?? t.tenantId,
  );
  const code = cb.searchParams.get("code") ?? "";
  const { res, body } = await tokenRequest({
    grant_type: "authorization_code",
    code,
    redirect_uri: redirectUri,
    code_verifier: verifier,
    client_id: CLI,
  });
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body as { access_token: string; refresh_token: string; expires_in: number; scope: string };
}

async function refresh(refreshToken: string) {
  return tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: CLI });
}

let browser: Browser;

beforeAll(async () => {
  t = await seedTenant("pro", "OAuth Studio");
  user = await seedUser(t.tenantId);
  second = await withDb(async (db) => {
    const { id: tenantId } = await createTenant(db, "OAuth Second Studio", "free");
    const { id: projectId } = await createProject(db, tenantId, "Second game");
    await addMembership(db, { tenantId, email: user.email, role: "member" });
    return { tenantId, projectId };
  });
  browser = new Browser();
  expect((await browser.signIn(user.email, user.password)).status).toBe(303);
});

describe("/.well-known/oauth-authorization-server", () => {
  it("describes the endpoints the CLI uses, S256 only, public clients, the two token scopes", async () => {
    const res = await new Browser().get("/.well-known/oauth-authorization-server");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      issuer: BASE,
      authorization_endpoint: `${BASE}/oauth/authorize`,
      token_endpoint: `${BASE}/api/oauth/token`,
      revocation_endpoint: `${BASE}/api/oauth/revoke`,
      scopes_supported: ["analytics:read", "resources:write"],
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      revocation_endpoint_auth_methods_supported: ["none"],
      authorization_response_iss_parameter_supported: true,
    });
  });
});

describe("the CLI's login, refresh and logout", () => {
  it("signs in first, then asks consent naming the client, the scopes and the studio", async () => {
    const b = new Browser();
    const { challenge } = await pkce();
    const path = authorizePath({ challenge });
    const first = await b.get(path);
    expect(first.status).toBe(307);
    expect(first.headers.get("location")).toBe(`/sign-in?returnTo=${encodeURIComponent(path)}`);
    const signedIn = await b.signIn(user.email, user.password, path);
    expect(signedIn.headers.get("location")).toBe(path);
    const consent = await b.get(path);
    const html = await consent.text();
    expect(html).toContain("Allow Framedash CLI?");
    expect(html).toContain("(analytics:read)");
    expect(html).toContain("(resources:write)");
    expect(html).toContain('<button type="submit" name="decision" value="allow">Allow</button>');
    expect(html).toContain('<button type="submit" name="decision" value="deny">Deny</button>');
    // Two studios: a choice, naming both.
    expect(html).toContain("<legend>Studio</legend>");
    expect(html).toContain("OAuth Studio");
    expect(html).toContain("OAuth Second Studio");
    expect(html).toContain("http://127.0.0.1:53682/callback");
    expect(consent.headers.get("x-frame-options")).toBe("DENY");
  });

  it("Allow redirects to the loopback URI with code, state and iss; the code buys a token pair", async () => {
    const { verifier, challenge } = await pkce();
    const redirectUri = "http://127.0.0.1:61001/callback";
    const cb = await approve(browser, authorizePath({ challenge, redirectUri, state: "s-abc" }), t.tenantId);
    expect(`${cb.origin}${cb.pathname}`).toBe(redirectUri);
    expect(cb.searchParams.get("state")).toBe("s-abc");
    expect(cb.searchParams.get("iss")).toBe(BASE);
    const code = cb.searchParams.get("code") ?? "";
    expect(code).toMatch(/^gtc_/);
    const { res, body } = await tokenRequest({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: CLI,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(body).toEqual({
      access_token: expect.stringMatching(/^gto_[A-Za-z0-9_-]{40}$/),
      token_type: "Bearer",
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^gtr_[A-Za-z0-9_-]{40}$/),
      scope: "analytics:read resources:write",
    });
    // Stored hashed, about an hour, for the chosen studio; the code is spent.
    const access = body.access_token as string;
    const [row] = await withDb(async (db) =>
      db
        .select()
        .from(oauthTokens)
        .where(eq(oauthTokens.tokenHash, await sha256Hex(access))),
    );
    expect(row?.tenantId).toBe(t.tenantId);
    const ttl = (row?.expiresAt.getTime() ?? 0) - (row?.createdAt.getTime() ?? 0);
    expect(ttl).toBe(3600_000);
    const [codeRow] = await withDb(async (db) =>
      db
        .select()
        .from(oauthCodes)
        .where(eq(oauthCodes.codeHash, await sha256Hex(code))),
    );
    expect(codeRow?.usedAt).toBeInstanceOf(Date);
    // The token reaches the studio's projects, and only that studio's.
    const projects = await api("/v1/projects", { token: access });
    expect(projects.status).toBe(200);
    const ids = ((await projects.json()) as OkBody<"/v1/projects">).data.map((p) => p.id).sort();
    expect(ids).toEqual([t.projectId, t.siblingProjectId].sort());
    expect((await api(`/v1/projects/${second.projectId}/status`, { token: access })).status).toBe(404);
  });

  it("the studio chosen on the consent page is the one the token reaches", async () => {
    const tokens = await login(browser, { tenantId: second.tenantId, scope: "analytics:read" });
    expect(tokens.scope).toBe("analytics:read");
    const res = await api("/v1/projects", { token: tokens.access_token });
    const data = ((await res.json()) as OkBody<"/v1/projects">).data;
    expect(data.map((p) => p.id)).toEqual([second.projectId]);
    // analytics:read only: a change needs resources:write.
    const del = await api(
      `/v1/projects/${second.projectId}/alerts/00000000-0000-4000-8000-000000000000`,
      {
        token: tokens.access_token,
      },
      { method: "DELETE" },
    );
    expect(del.status).toBe(403);
  });

  it("refresh rotates: a new pair, the old refresh token spent", async () => {
    const first = await login(browser);
    const { res, body } = await refresh(first.refresh_token);
    expect(res.status).toBe(200);
    expect(body.access_token).not.toBe(first.access_token);
    expect(body.refresh_token).not.toBe(first.refresh_token);
    expect(body.expires_in).toBe(3600);
    expect(body.scope).toBe("analytics:read resources:write");
    expect((await api("/v1/projects", { token: body.access_token as string })).status).toBe(200);
    const [old] = await withDb(async (db) =>
      db
        .select()
        .from(oauthRefreshTokens)
        .where(eq(oauthRefreshTokens.tokenHash, await sha256Hex(first.refresh_token))),
    );
    expect(old?.usedAt).toBeInstanceOf(Date);
  });

  it("reusing a rotated refresh token revokes the whole grant", async () => {
    const first = await login(browser);
    const second = (await refresh(first.refresh_token)).body as {
      access_token: string;
      refresh_token: string;
    };
    const reuse = await refresh(first.refresh_token);
    expect(reuse.res.status).toBe(400);
    expect(reuse.body.error).toBe("invalid_grant");
    expect(reuse.body.error_description).toContain("already used");
    // Everything issued under the grant is dead at once: the latest access and refresh tokens too.
    expect((await api("/v1/projects", { token: second.access_token })).status).toBe(401);
    expect((await api("/v1/projects", { token: first.access_token })).status).toBe(401);
    const next = await refresh(second.refresh_token);
    expect(next.body.error).toBe("invalid_grant");
  });

  it("revoke (as the CLI's logout sends it) ends the grant: tokens refused, refresh refused", async () => {
    const tokens = await login(browser);
    const res = await revokeRequest({ token: tokens.refresh_token, client_id: CLI });
    expect(res.status).toBe(200);
    expect((await api("/v1/projects", { token: tokens.access_token })).status).toBe(401);
    expect((await refresh(tokens.refresh_token)).body.error).toBe("invalid_grant");
    // Unknown and already revoked tokens are answered 200 too (RFC 7009 section 2.2).
    expect((await revokeRequest({ token: tokens.refresh_token, client_id: CLI })).status).toBe(200);
    expect((await revokeRequest({ token: "gtr_nonsense", client_id: CLI })).status).toBe(200);
  });

  it("revoking an access token ends that token only", async () => {
    const tokens = await login(browser);
    expect((await revokeRequest({ token: tokens.access_token, client_id: CLI })).status).toBe(200);
    expect((await api("/v1/projects", { token: tokens.access_token })).status).toBe(401);
    expect((await refresh(tokens.refresh_token)).res.status).toBe(200);
  });

  it("expiry: an expired access token is 401; an expired code or refresh token is invalid_grant", async () => {
    const tokens = await login(browser);
    await withDb(async (db) =>
      db
        .update(oauthTokens)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(oauthTokens.tokenHash, await sha256Hex(tokens.access_token))),
    );
    expect((await api("/v1/projects", { token: tokens.access_token })).status).toBe(401);
    await withDb(async (db) =>
      db
        .update(oauthRefreshTokens)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(oauthRefreshTokens.tokenHash, await sha256Hex(tokens.refresh_token))),
    );
    const r = await refresh(tokens.refresh_token);
    expect(r.body).toEqual({ error: "invalid_grant", error_description: "The refresh token has expired." });

    const { verifier, challenge } = await pkce();
    const redirectUri = "http://127.0.0.1:61002/callback";
    const code =
      (await approve(browser, authorizePath({ challenge, redirectUri }), t.tenantId)).searchParams.get(
        "code",
      ) ?? "";
    await withDb(async (db) =>
      db
        .update(oauthCodes)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(oauthCodes.codeHash, await sha256Hex(code))),
    );
    const x = await tokenRequest({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: CLI,
    });
    expect(x.body).toEqual({
      error: "invalid_grant",
      error_description: "The authorization code has expired.",
    });
  });

  it("using a token records its grant's last use, in the background", async () => {
    const tokens = await login(browser);
    const [tok] = await withDb(async (db) =>
      db
        .select({ grantId: oauthTokens.grantId })
        .from(oauthTokens)
        .where(eq(oauthTokens.tokenHash, await sha256Hex(tokens.access_token))),
    );
    const grantId = tok?.grantId ?? "";
    const stale = new Date(Date.now() - 3600_000);
    await withDb((db) =>
      db.update(oauthGrants).set({ lastUsedAt: stale }).where(eq(oauthGrants.id, grantId)),
    );
    expect((await api("/v1/projects", { token: tokens.access_token })).status).toBe(200);
    await waitFor(
      async () => {
        const [g] = await withDb((db) => db.select().from(oauthGrants).where(eq(oauthGrants.id, grantId)));
        return g?.lastUsedAt?.getTime() ?? 0;
      },
      (lastUsed) => lastUsed > stale.getTime(),
      { timeoutMs: 15_000, message: "grant lastUsedAt updated" },
    );
  });

  it("Connected apps lists the grant; revoking it there ends its tokens at once", async () => {
    const tokens = await login(browser, { port: 61100 });
    const page = await browser.get("/settings/connected-apps");
    const html = await page.text();
    expect(html).toContain("<td>Framedash CLI</td>");
    expect(html).toContain("<td>analytics:read, resources:write</td>");
    const grants = await withDb((db) => db.select().from(oauthGrants).where(eq(oauthGrants.userId, user.id)));
    const [grant] = await withDb(async (db) =>
      db
        .select({ grantId: oauthTokens.grantId })
        .from(oauthTokens)
        .where(eq(oauthTokens.tokenHash, await sha256Hex(tokens.access_token))),
    );
    expect(grants.map((g) => g.id)).toContain(grant?.grantId);
    expect(html).toContain(`/settings/connected-apps/${grant?.grantId}/revoke`);
    const res = await browser.submit(
      "/settings/connected-apps",
      {},
      `/settings/connected-apps/${grant?.grantId}/revoke`,
    );
    expect(res.status).toBe(303);
    expect((await api("/v1/projects", { token: tokens.access_token })).status).toBe(401);
    expect((await refresh(tokens.refresh_token)).body.error).toBe("invalid_grant");
    expect(await (await browser.get("/settings/connected-apps")).text()).not.toContain(
      `/settings/connected-apps/${grant?.grantId}/revoke`,
    );
  });
});

describe("refusals", () => {
  async function codeFor(redirectUri = "http://127.0.0.1:61003/callback") {
    const { verifier, challenge } = await pkce();
    const cb = await approve(browser, authorizePath({ challenge, redirectUri }), t.tenantId);
    return { code: cb.searchParams.get("code") ?? "", verifier, redirectUri };
  }

  it("a wrong code_verifier", async () => {
    const { code, redirectUri } = await codeFor();
    const other = await pkce();
    const { res, body } = await tokenRequest({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: other.verifier,
      client_id: CLI,
    });
    expect(res.status).toBe(400);
    expect(body).toEqual({
      error: "invalid_grant",
      error_description: "code_verifier does not match the code_challenge.",
    });
  });

  it("a reused code, which also revokes the tokens the first use bought", async () => {
    const { code, verifier, redirectUri } = await codeFor();
    const params = {
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: CLI,
    };
    const first = await tokenRequest(params);
    expect(first.res.status).toBe(200);
    const again = await tokenRequest(params);
    expect(again.res.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");
    expect((await api("/v1/projects", { token: first.body.access_token as string })).status).toBe(401);
  });

  it("another redirect_uri at the exchange (another port, or another host)", async () => {
    const { code, verifier } = await codeFor("http://127.0.0.1:61004/callback");
    for (const redirectUri of ["http://127.0.0.1:61005/callback", "http://localhost:61004/callback"]) {
      const { res, body } = await tokenRequest({
        grant_type: "authorization_code",
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
        client_id: CLI,
      });
      expect(res.status).toBe(400);
      expect(body.error).toBe("invalid_grant");
      expect(body.error_description).toMatch(/redirect_uri/);
    }
  });

  it("an unknown client: an error page at authorize (never a redirect), invalid_client at the token endpoint", async () => {
    const res = await browser.get(authorizePath({ clientId: "fdc_nobody" }));
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(await res.text()).toContain("unknown client_id");
    const { code, verifier, redirectUri } = await codeFor();
    const x = await tokenRequest({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: "fdc_nobody",
    });
    expect(x.res.status).toBe(401);
    expect(x.body).toEqual({ error: "invalid_client", error_description: "Unknown client_id." });
    expect((await revokeRequest({ token: "gtr_x", client_id: "fdc_nobody" })).status).toBe(401);
  });

  it("a redirect_uri that is not registered: an error page, never a redirect", async () => {
    for (const redirectUri of [
      "https://evil.example/callback",
      "http://127.0.0.1:53682/other",
      "http://localhost:53682/callback",
      "http://127.0.0.1:53682/callback#frag",
    ]) {
      const res = await browser.get(authorizePath({ redirectUri }));
      expect(res.status, redirectUri).toBe(400);
      expect(res.headers.get("location")).toBeNull();
    }
  });

  it("scopes beyond analytics:read and resources:write (data:admin, events:write): invalid_scope back to the client", async () => {
    for (const scope of ["analytics:read data:admin", "events:write", "profile"]) {
      const res = await browser.get(authorizePath({ scope, state: "st-scope" }));
      expect(res.status).toBe(303);
      const cb = new URL(res.headers.get("location") ?? "");
      expect(cb.searchParams.get("error")).toBe("invalid_scope");
      expect(cb.searchParams.get("state")).toBe("st-scope");
      expect(cb.searchParams.get("code")).toBeNull();
    }
  });

  it("PKCE is required and S256 only: plain or none refused with invalid_request", async () => {
    for (const input of [{ method: "plain" }, { method: null }, { challenge: "" }, { challenge: "short" }]) {
      const res = await browser.get(authorizePath(input));
      expect(res.status).toBe(303);
      const cb = new URL(res.headers.get("location") ?? "");
      expect(cb.searchParams.get("error")).toBe("invalid_request");
      expect(cb.searchParams.get("state")).toBe("st-123");
    }
  });

  it("Deny answers access_denied with the state", async () => {
    const { challenge } = await pkce();
    const cb = await approve(browser, authorizePath({ challenge, state: "st-deny" }), t.tenantId, "deny");
    expect(cb.searchParams.get("error")).toBe("access_denied");
    expect(cb.searchParams.get("state")).toBe("st-deny");
    expect(cb.searchParams.get("code")).toBeNull();
  });

  it("the consent answer needs the page's CSRF token and a studio of the user", async () => {
    const { challenge } = await pkce();
    const page = await browser.get(authorizePath({ challenge }));
    const fields = hiddenFields(await page.text());
    const noCsrf = await browser.post("/oauth/authorize", {
      ...fields,
      csrf: "",
      tenant: t.tenantId,
      decision: "allow",
    });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.headers.get("location")).toBeNull();
    const foreign = await browser.post("/oauth/authorize", {
      ...fields,
      tenant: (await seedTenant("free", "Stranger")).tenantId,
      decision: "allow",
    });
    expect(foreign.status).toBe(400);
    expect(foreign.headers.get("location")).toBeNull();
  });

  it("a token is refused by ingest, which takes API keys only", async () => {
    const tokens = await login(browser);
    const res = await ingest(new Uint8Array([10, 0]), null, {
      headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    expect(res.status).toBe(401);
  });

  it("the token endpoint: unsupported grant types, other media types, repeated parameters", async () => {
    const g = await tokenRequest({ grant_type: "password", client_id: CLI });
    expect(g.res.status).toBe(400);
    expect(g.body.error).toBe("unsupported_grant_type");
    const json = await api(
      "/oauth/token",
      {},
      {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ grant_type: "refresh_token", client_id: CLI }),
      },
    );
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: string }).error).toBe("invalid_request");
    const dup = await api(
      "/oauth/token",
      {},
      {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: `grant_type=refresh_token&client_id=${CLI}&refresh_token=a&refresh_token=b`,
      },
    );
    expect(((await dup.json()) as { error: string }).error).toBe("invalid_request");
    // No redirect from here, ever: the CLI sends the form with redirect: "manual".
    const missing = await tokenRequest({ grant_type: "authorization_code", client_id: CLI });
    expect(missing.res.status).toBe(400);
    expect(missing.body).toEqual({
      error: "invalid_request",
      error_description: "Missing code, redirect_uri, code_verifier.",
    });
  });
});

/**
 * The same server driven by a strict, spec-following client (oauth4webapi): it discovers the endpoints
 * from the RFC 8414 metadata, checks the issuer, the `iss` of every authorization response (RFC 9207),
 * the state, the token responses' shapes, and refuses anything off-spec. The flow is the CLI's
 * (crane-valley/framedash-cli): loopback redirect on a port of its choosing, PKCE S256, rotating
 * refresh, revocation of the refresh token at logout.
 */
describe("a strict client (oauth4webapi)", () => {
  const client: oauth.Client = { client_id: CLI };
  const clientAuth = oauth.None();
  let as: oauth.AuthorizationServer;

  /** The tests' way to the Worker: SELF, one client address, and (for expiry) the request's clock. */
  function options(now?: number) {
    return {
      [oauth.allowInsecureRequests]: true,
      [oauth.customFetch]: (url: string, init: RequestInit) => {
        const headers = new Headers(init.headers);
        headers.set("CF-Connecting-IP", "198.18.0.40");
        if (now !== undefined) {
          headers.set("X-Test-Now", String(now));
        }
        return SELF.fetch(url, { ...init, headers, redirect: "manual" });
      },
    };
  }

  /** The authorization request the CLI builds, from the discovered endpoint. */
  function authorizeUrl(p: {
    challenge?: string | null;
    method?: string | null;
    redirectUri: string;
    state: string;
  }) {
    const url = new URL(as.authorization_endpoint ?? "");
    url.searchParams.set("response_type", "code");
    url.searchParams.set("client_id", CLI);
    url.searchParams.set("redirect_uri", p.redirectUri);
    url.searchParams.set("scope", "analytics:read resources:write");
    url.searchParams.set("state", p.state);
    if (p.challenge !== null && p.challenge !== undefined) {
      url.searchParams.set("code_challenge", p.challenge);
    }
    if (p.method !== null) {
      url.searchParams.set("code_challenge_method", p.method ?? "S256");
    }
    return `${url.pathname}${url.search}`;
  }

  /** Consent in the browser, then the callback as the CLI's loopback server receives it, validated. */
  async function authorize(port = 53682) {
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const state = oauth.generateRandomState();
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const callback = await approve(browser, authorizeUrl({ challenge, redirectUri, state }), t.tenantId);
    const params = oauth.validateAuthResponse(as, client, callback, state);
    return { params, verifier, redirectUri };
  }

  async function exchange(
    a: Awaited<ReturnType<typeof authorize>>,
    now?: number,
    redirectUri = a.redirectUri,
  ) {
    const res = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      a.params,
      redirectUri,
      a.verifier,
      options(now),
    );
    return oauth.processAuthorizationCodeResponse(as, client, res);
  }

  async function refreshGrant(refreshToken: string) {
    const res = await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshToken, options());
    return oauth.processRefreshTokenResponse(as, client, res);
  }

  /** A protected resource read with the token in the Authorization header, as the library sends it. */
  async function projects(accessToken: string) {
    return oauth.protectedResourceRequest(
      accessToken,
      "GET",
      new URL(`${BASE}/api/v1/projects`),
      undefined,
      undefined,
      options(),
    );
  }

  /** The OAuth error a refused token request throws, by its fields. */
  async function refusal(p: Promise<unknown>) {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(oauth.ResponseBodyError);
    const { status, error, error_description } = err as oauth.ResponseBodyError;
    return { status, error, error_description };
  }

  beforeAll(async () => {
    const issuer = new URL(BASE);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { ...options(), algorithm: "oauth2" }),
    );
  });

  it("discovers the server from its metadata: the issuer is the origin, PKCE S256, public clients", () => {
    expect(as.issuer).toBe(BASE);
    expect(as.token_endpoint).toBe(`${BASE}/api/oauth/token`);
    expect(as.revocation_endpoint).toBe(`${BASE}/api/oauth/revoke`);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
  });

  it("the CLI's login: loopback redirect, PKCE S256, iss and state checked, a Bearer pair that reads", async () => {
    const a = await authorize(49152);
    expect(a.params.get("iss")).toBe(BASE);
    const tokens = await exchange(a);
    expect(tokens.token_type).toBe("bearer");
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe("analytics:read resources:write");
    expect(tokens.refresh_token).toMatch(/^gtr_/);
    const res = await projects(tokens.access_token);
    expect(res.status).toBe(200);
  });

  it("refresh rotates, and revoking the refresh token (logout) ends the grant", async () => {
    const first = await exchange(await authorize());
    const second = await refreshGrant(first.refresh_token ?? "");
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect((await projects(second.access_token)).status).toBe(200);
    const revoked = await oauth.revocationRequest(
      as,
      client,
      clientAuth,
      second.refresh_token ?? "",
      options(),
    );
    await oauth.processRevocationResponse(revoked);
    expect((await projects(second.access_token)).status).toBe(401);
    expect(await refusal(refreshGrant(second.refresh_token ?? ""))).toMatchObject({
      status: 400,
      error: "invalid_grant",
    });
  });

  it("a rotated refresh token used again: refused, and the whole grant revoked (RFC 9700 4.14.2)", async () => {
    const first = await exchange(await authorize());
    const second = await refreshGrant(first.refresh_token ?? "");
    expect(await refusal(refreshGrant(first.refresh_token ?? ""))).toMatchObject({
      status: 400,
      error: "invalid_grant",
    });
    // The newest pair, which the thief or the client holds, is dead too.
    expect((await projects(second.access_token)).status).toBe(401);
    expect((await refusal(refreshGrant(second.refresh_token ?? ""))).error).toBe("invalid_grant");
  });

  it("a code used twice: refused, and the tokens its first use bought revoked (RFC 6749 4.1.2)", async () => {
    const a = await authorize();
    const tokens = await exchange(a);
    expect((await projects(tokens.access_token)).status).toBe(200);
    expect(await refusal(exchange(a))).toMatchObject({ status: 400, error: "invalid_grant" });
    expect((await projects(tokens.access_token)).status).toBe(401);
    expect((await refusal(refreshGrant(tokens.refresh_token ?? ""))).error).toBe("invalid_grant");
  });

  it("an expired code (past its 60 s on the request's clock): invalid_grant", async () => {
    const a = await authorize();
    expect(await refusal(exchange(a, Date.now() + 61_000))).toEqual({
      status: 400,
      error: "invalid_grant",
      error_description: "The authorization code has expired.",
    });
  });

  it("a redirect_uri at the exchange that is not exactly the authorized one: invalid_grant", async () => {
    for (const other of [
      "http://127.0.0.1:53683/callback",
      "http://localhost:53682/callback",
      "http://127.0.0.1:53682/callback/",
      "http://127.0.0.1:53682/callback?x=1",
      "https://127.0.0.1:53682/callback",
    ]) {
      const a = await authorize();
      const refused = await refusal(exchange(a, undefined, other));
      expect(refused, other).toEqual({
        status: 400,
        error: "invalid_grant",
        error_description: "redirect_uri does not match the authorization request.",
      });
    }
  });

  it("PKCE missing or plain at authorize: invalid_request back to the client, with iss and state", async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    for (const input of [
      { challenge: null, method: null },
      { challenge: verifier, method: "plain" },
      { challenge: await oauth.calculatePKCECodeChallenge(verifier), method: null },
    ]) {
      const state = oauth.generateRandomState();
      const res = await browser.get(
        authorizeUrl({ ...input, redirectUri: "http://127.0.0.1:53682/callback", state }),
      );
      expect(res.status).toBe(303);
      const callback = new URL(res.headers.get("location") ?? "");
      let thrown: unknown = null;
      try {
        oauth.validateAuthResponse(as, client, callback, state);
      } catch (err) {
        thrown = err;
      }
      expect(thrown, JSON.stringify(input)).toBeInstanceOf(oauth.AuthorizationResponseError);
      expect((thrown as oauth.AuthorizationResponseError).error).toBe("invalid_request");
    }
  });

  it("PKCE missing at the exchange (the library's nopkce): invalid_request, and the code still unused", async () => {
    const a = await authorize();
    const res = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      a.params,
      a.redirectUri,
      oauth.nopkce,
      options(),
    );
    expect(await refusal(oauth.processAuthorizationCodeResponse(as, client, res))).toEqual({
      status: 400,
      error: "invalid_request",
      error_description: "Missing code_verifier.",
    });
    // Refused before the code was looked at: the CLI's proper request still works.
    expect((await exchange(a)).access_token).toMatch(/^gto_/);
  });

  it("a token in the query string is refused, also beside a valid header; credentials in the token endpoint's URL too", async () => {
    const tokens = await exchange(await authorize());
    const inQuery = await api(`/v1/projects?access_token=${tokens.access_token}`, { ip: "198.18.0.41" });
    expect(inQuery.status).toBe(400);
    expect((await problemOf(inQuery)).field).toBe("access_token");
    const both = await api(`/v1/projects?access_token=${tokens.access_token}`, {
      token: tokens.access_token,
    });
    expect(both.status).toBe(400);
    // The header alone still works: the refusal revoked nothing.
    expect((await projects(tokens.access_token)).status).toBe(200);
    const res = await api(
      `/oauth/token?refresh_token=${tokens.refresh_token}`,
      { ip: "198.18.0.41" },
      {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", client_id: CLI }).toString(),
      },
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: "invalid_request",
      error_description: "refresh_token must be sent in the form body, never in the URL.",
    });
  });
});
