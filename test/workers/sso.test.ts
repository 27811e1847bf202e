import { and, eq } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import {
  memberships,
  sessions,
  ssoConnections,
  ssoDomainProofs,
  ssoDomains,
  ssoFlows,
  ssoIdentities,
  users,
} from "../../schema/pg/schema.js";
import { SSO_SESSION_TTL_SECONDS, startSession } from "../../workers/api/credentials/sessions.js";
import { openSecret } from "../../workers/api/sso/secret.js";
import { auditEntries, onlyAuditEntry } from "../support/audit.js";
import { Browser, seedUser } from "../support/browser.js";
import { BASE, seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import { idpControl } from "../support/oidc-idp-control.js";
import type { OkBody } from "../support/schema.js";
import { proveDomain } from "../support/sso-flow.js";
import { TEST_SSO_SECRET_KEY } from "../support/sso-key.js";

// Single sign-on (docs/accounts.md, "Single sign-on"): the configuration API and page, and the whole
// flow against the global setup's real OpenID provider (oidc-provider on loopback), driven over its
// control plane: configure, test sign-in, first sign-in (just-in-time member), sign-in again, an email
// changed at the provider, the session as a password session's, and the audit entries of each step.

const CALLBACK = `${BASE}/sso/callback`;
const provider = () => idpControl(inject("idpUrl"));
const settingsPath = (tenantId: string) => `/settings/studios/${tenantId}/sso`;
const apiPath = (tenantId: string) => `/v1/studios/${tenantId}/sso`;
const sameOrigin = { Origin: BASE, "Sec-Fetch-Site": "same-origin" };

type Studio = {
  t: Tenant;
  owner: { id: string; email: string; password: string };
  cookie: string;
  domain: string;
  clientId: string;
  clientSecret: string;
};

async function studio(name: string): Promise<Studio> {
  const t = await seedTenant("pro", name);
  const owner = await seedUser(t.tenantId, "owner");
  const cookie = `gt_session=${await withDb((db) => startSession(db, owner.id))}`;
  const tag = crypto.randomUUID().slice(0, 8);
  const clientId = `sso-test-${tag}`;
  const clientSecret = `secret-${crypto.randomUUID()}`;
  await provider().addClient({ clientId, clientSecret, redirectUris: [CALLBACK] });
  return { t, owner, cookie, domain: `${tag}.example-studio.test`, clientId, clientSecret };
}

/** The Web API with the owner's (or another) browser session. */
function withSession(cookie: string, path: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  headers.set("Cookie", cookie);
  for (const [k, v] of Object.entries(sameOrigin)) {
    headers.set(k, v);
  }
  return api(path, { ip: "192.0.2.40" }, { ...init, headers });
}

const putJson = (body: unknown): RequestInit => ({
  method: "PUT",
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify(body),
});

/** The owner's browser, signed in with their password. */
async function ownerBrowser(s: Studio): Promise<Browser> {
  const b = new Browser();
  expect((await b.signIn(s.owner.email, s.owner.password)).status).toBe(303);
  return b;
}

/** Follows an authorization URL through the provider's login as `email`; the callback it sends back. */
async function atProvider(authorizationUrl: string, email: string): Promise<string> {
  expect(authorizationUrl.startsWith(`${inject("idpUrl")}/`)).toBe(true);
  const result = await provider().authorize(authorizationUrl, email);
  if (!("callback" in result)) {
    throw new Error(`the provider stopped on its own page (${result.status})`);
  }
  expect(result.callback.startsWith(`${CALLBACK}?`)).toBe(true);
  return result.callback;
}

/** Configures the studio through the page and proves it with a test sign-in as `admin`. */
async function configure(s: Studio, b: Browser, admin: string): Promise<Response> {
  const submitted = await b.submit(settingsPath(s.t.tenantId), {
    issuer: inject("idpUrl"),
    clientId: s.clientId,
    clientSecret: s.clientSecret,
    domains: s.domain,
    defaultRole: "member",
  });
  expect(submitted.status, await submitted.clone().text()).toBe(303);
  return b.get(await atProvider(submitted.headers.get("location") ?? "", admin));
}

/** A whole sign-in through the provider in a fresh browser, from the sign-in page. */
async function signInWithSso(email: string): Promise<{ b: Browser; res: Response; authorize: URL }> {
  const b = new Browser();
  const started = await b.submit("/sign-in", { email, password: "", returnTo: "/" }, "/sign-in");
  expect(started.status).toBe(303);
  const authorize = new URL(started.headers.get("location") ?? "");
  const res = await b.get(await atProvider(authorize.href, email));
  return { b, res, authorize };
}

describe("the configuration API", () => {
  it("an owner's session submits a configuration: pending until tested, the secret sealed and never returned", async () => {
    const s = await studio("SSO API Studio");
    const empty = await withSession(s.cookie, apiPath(s.t.tenantId));
    expect(empty.status).toBe(200);
    expect(((await empty.json()) as OkBody<"/v1/studios/{tenantId}/sso">).data).toEqual({
      callbackUrl: CALLBACK,
      domainProofs: [],
      active: null,
      pending: null,
    });

    const body = {
      issuer: inject("idpUrl"),
      clientId: s.clientId,
      clientSecret: s.clientSecret,
      domains: [s.domain.toUpperCase()],
    };
    const put = await withSession(s.cookie, apiPath(s.t.tenantId), putJson(body));
    const text = await put.text();
    expect(put.status, text).toBe(202);
    expect(text).not.toContain(s.clientSecret);
    const answer = JSON.parse(text) as {
      data: {
        pending: Record<string, unknown>;
        testUrl: string;
        domainProofs: { domain: string; record: { name: string; value: string }; verified: boolean }[];
      };
    };
    expect(answer.data.testUrl).toBe(`${BASE}${settingsPath(s.t.tenantId)}`);
    // The DNS record that will prove the domain (sso-domains.test.ts), not verified yet.
    expect(answer.data.domainProofs).toEqual([
      expect.objectContaining({
        domain: s.domain,
        record: expect.objectContaining({
          type: "TXT",
          name: `_gt-sso.${s.domain}`,
          value: expect.stringMatching(/^gt-sso-verification=[0-9a-f]{32}$/),
        }),
        verified: false,
      }),
    ]);
    expect(answer.data.pending).toMatchObject({
      issuer: inject("idpUrl"),
      clientId: s.clientId,
      clientSecretSet: true,
      domains: [s.domain],
      defaultRole: "member",
      requireSso: false,
      testedAt: null,
    });

    await withDb(async (db) => {
      const rows = await db.select().from(ssoConnections).where(eq(ssoConnections.tenantId, s.t.tenantId));
      expect(rows.map((r) => r.state)).toEqual(["pending"]);
      const sealed = rows[0]?.clientSecret ?? "";
      expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
      expect(sealed).not.toContain(s.clientSecret);
      expect(await openSecret(TEST_SSO_SECRET_KEY, s.t.tenantId, sealed)).toBe(s.clientSecret);
      // Sealed for this studio: it does not open as another's.
      await expect(openSecret(TEST_SSO_SECRET_KEY, crypto.randomUUID(), sealed)).rejects.toThrow();
      // Pending claims no domain: sign-in still goes by password.
      expect(await db.select().from(ssoDomains).where(eq(ssoDomains.tenantId, s.t.tenantId))).toEqual([]);
    });
    const submitted = await onlyAuditEntry(s.t.tenantId, "sso.submitted");
    expect(submitted.actorId).toBe(s.owner.id);
    expect(submitted.detail).toMatchObject({ clientId: s.clientId, domains: s.domain, secretChanged: true });
    expect(JSON.stringify(submitted)).not.toContain(s.clientSecret);

    const read = (await (await withSession(s.cookie, apiPath(s.t.tenantId))).json()) as {
      data: { active: unknown; pending: { clientId: string } };
    };
    expect(read.data.active).toBeNull();
    expect(read.data.pending.clientId).toBe(s.clientId);

    // Without a new secret, the stored one is kept.
    const again = await withSession(
      s.cookie,
      apiPath(s.t.tenantId),
      putJson({ ...body, clientSecret: undefined, defaultRole: "owner" }),
    );
    expect(again.status).toBe(202);
    await withDb(async (db) => {
      const [row] = await db.select().from(ssoConnections).where(eq(ssoConnections.tenantId, s.t.tenantId));
      expect(row?.defaultRole).toBe("owner");
      expect(await openSecret(TEST_SSO_SECRET_KEY, s.t.tenantId, row?.clientSecret ?? "")).toBe(
        s.clientSecret,
      );
    });

    const removed = await withSession(s.cookie, apiPath(s.t.tenantId), { method: "DELETE" });
    expect(removed.status).toBe(200);
    expect(((await removed.json()) as OkBody<"/v1/studios/{tenantId}/sso", "delete">).data).toEqual({
      removed: true,
    });
    await withDb(async (db) => {
      expect(await db.select().from(ssoConnections).where(eq(ssoConnections.tenantId, s.t.tenantId))).toEqual(
        [],
      );
    });
    expect((await onlyAuditEntry(s.t.tenantId, "sso.removed")).detail).toMatchObject({ state: "pending" });
  });

  it("bad input is a 400 naming the field and the rule, and changes nothing", async () => {
    const s = await studio("SSO Bad Input Studio");
    const good = {
      issuer: inject("idpUrl"),
      clientId: s.clientId,
      clientSecret: s.clientSecret,
      domains: [s.domain],
    };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ issuer: "not a url" }, "issuer"],
      [{ issuer: "http://idp.example.com" }, "issuer"],
      [{ issuer: `${inject("idpUrl")}/?x=1` }, "issuer"],
      [{ issuer: `${inject("idpUrl")}/nowhere` }, "issuer"],
      [{ clientId: "has space" }, "clientId"],
      [{ clientSecret: undefined }, "clientSecret"],
      [{ domains: ["gmail.com"] }, "domains"],
      [{ domains: ["not_a_domain"] }, "domains"],
      [{ domains: [] }, "json.domains"],
      [{ defaultRole: "admin" }, "json.defaultRole"],
    ];
    for (const [change, field] of cases) {
      const res = await withSession(s.cookie, apiPath(s.t.tenantId), putJson({ ...good, ...change }));
      expect(res.status, JSON.stringify(change)).toBe(400);
      const problem = await problemOf(res);
      expect(problem.field, JSON.stringify(change)).toBe(field);
      expect(problem.detail).toMatch(new RegExp(`^${field.replace(".", "\\.")}: .+`));
    }
    await withDb(async (db) => {
      expect(await db.select().from(ssoConnections).where(eq(ssoConnections.tenantId, s.t.tenantId))).toEqual(
        [],
      );
    });
    expect(await auditEntries(s.t.tenantId, "sso.submitted")).toEqual([]);
  });

  it("owners' sessions only: a Full key, a member, another studio are refused, nothing changed", async () => {
    const s = await studio("SSO Access Studio");
    const other = await studio("SSO Other Studio");
    const member = await seedUser(s.t.tenantId, "member");
    const memberCookie = `gt_session=${await withDb((db) => startSession(db, member.id))}`;
    const body = { issuer: inject("idpUrl"), clientId: s.clientId, clientSecret: "x", domains: [s.domain] };

    const byKey = await api(apiPath(s.t.tenantId), { key: s.t.keys.full.key }, putJson(body));
    expect(byKey.status).toBe(403);
    expect((await problemOf(byKey)).detail).toMatch(/browser session, not with an API key or token/);
    const byMember = await withSession(memberCookie, apiPath(s.t.tenantId), putJson(body));
    expect(byMember.status).toBe(403);
    const cross = await withSession(s.cookie, apiPath(other.t.tenantId), putJson(body));
    expect(cross.status).toBe(404);
    expect((await withSession(s.cookie, apiPath(other.t.tenantId))).status).toBe(404);
    expect((await withSession(s.cookie, apiPath(other.t.tenantId), { method: "DELETE" })).status).toBe(404);
    await withDb(async (db) => {
      for (const tenantId of [s.t.tenantId, other.t.tenantId]) {
        expect(await db.select().from(ssoConnections).where(eq(ssoConnections.tenantId, tenantId))).toEqual(
          [],
        );
      }
    });

    // The page: a member is 403, another studio 404.
    const mb = new Browser();
    mb.cookies.set("gt_session", memberCookie.slice("gt_session=".length));
    expect((await mb.get(settingsPath(s.t.tenantId))).status).toBe(403);
    const ob = new Browser();
    ob.cookies.set("gt_session", s.cookie.slice("gt_session=".length));
    expect((await ob.get(settingsPath(other.t.tenantId))).status).toBe(404);
  });
});

describe("sign-in through the studio's provider", () => {
  it("configure and test, first sign-in makes a member, later ones sign them in, an email change keeps the user", async () => {
    const s = await studio("SSO Flow Studio");
    const idp = provider();
    const admin = `it-admin@${s.domain}`;
    await idp.addAccount({ email: admin });
    const owner = await ownerBrowser(s);

    // The page shows the callback URL to register.
    const page = await owner.get(settingsPath(s.t.tenantId));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`<code id="callback-url">${CALLBACK}</code>`);

    // Test sign-in and save.
    const tested = await configure(s, owner, admin);
    expect(tested.status).toBe(303);
    expect(tested.headers.get("location")).toBe(`${settingsPath(s.t.tenantId)}?test=passed`);
    const active = await withDb(async (db) => {
      const rows = await db.select().from(ssoConnections).where(eq(ssoConnections.tenantId, s.t.tenantId));
      expect(rows.map((r) => [r.state, r.testedAs])).toEqual([["active", admin]]);
      const domains = await db.select().from(ssoDomains).where(eq(ssoDomains.tenantId, s.t.tenantId));
      expect(domains.map((d) => d.domain)).toEqual([s.domain]);
      // The test signed nobody in and made no account.
      expect(await db.select().from(users).where(eq(users.email, admin))).toEqual([]);
      return rows[0];
    });
    expect((await onlyAuditEntry(s.t.tenantId, "sso.configured")).detail).toMatchObject({
      issuer: inject("idpUrl"),
      testedAs: admin,
    });
    const passed = await owner.get(`${settingsPath(s.t.tenantId)}?test=passed`);
    expect(await passed.text()).toContain("Test sign-in succeeded");

    // Saved, but the domain is not proven yet: it sends nobody to the provider.
    const unrouted = await new Browser().submit(
      "/sign-in",
      { email: `early@${s.domain}`, password: "", returnTo: "/" },
      "/sign-in",
    );
    expect(unrouted.headers.get("location") ?? "").not.toContain(inject("idpUrl"));
    expect(await owner.get(settingsPath(s.t.tenantId)).then((r) => r.text())).toContain("Not verified:");
    await proveDomain(owner, s.t.tenantId, s.domain);

    // A domain is one studio's: another studio cannot claim one it proved.
    const rival = await studio("SSO Rival Studio");
    const claim = await withSession(
      rival.cookie,
      apiPath(rival.t.tenantId),
      putJson({ issuer: inject("idpUrl"), clientId: rival.clientId, clientSecret: "s", domains: [s.domain] }),
    );
    expect(claim.status).toBe(409);
    expect((await problemOf(claim)).field).toBe("domains");

    // First sign-in: PKCE, state, nonce on the way out; a new user and member on the way back.
    const person = `dana@${s.domain}`;
    const sub = await idp.addAccount({ email: person, sub: `sub-${crypto.randomUUID()}` });
    const first = await signInWithSso(person);
    expect(first.authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(first.authorize.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.authorize.searchParams.get("state")).toMatch(/^ssos_/);
    expect(first.authorize.searchParams.get("nonce")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.authorize.searchParams.get("redirect_uri")).toBe(CALLBACK);
    expect(first.authorize.searchParams.get("login_hint")).toBe(person);
    expect(first.res.status).toBe(303);
    expect(first.res.headers.get("location")).toBe("/");
    const session = first.b.cookies.get("gt_session") ?? "";
    expect(session).toMatch(/^gts_/);
    const userId = await withDb(async (db) => {
      const [user] = await db.select().from(users).where(eq(users.email, person));
      expect(user?.passwordHash).toBe("");
      const [m] = await db
        .select()
        .from(memberships)
        .where(and(eq(memberships.userId, user?.id ?? ""), eq(memberships.tenantId, s.t.tenantId)));
      expect(m?.role).toBe("member");
      const links = await db
        .select()
        .from(ssoIdentities)
        .where(eq(ssoIdentities.userId, user?.id ?? ""));
      expect(links.map((l) => [l.issuer, l.subject, l.email])).toEqual([[inject("idpUrl"), sub, person]]);
      const rows = await db
        .select()
        .from(sessions)
        .where(eq(sessions.userId, user?.id ?? ""));
      expect(rows.length).toBe(1);
      expect(rows[0]?.ssoTenantId).toBe(s.t.tenantId);
      const ttl = (rows[0]?.expiresAt.getTime() ?? 0) - (rows[0]?.createdAt.getTime() ?? 0);
      expect(ttl).toBe(SSO_SESSION_TTL_SECONDS * 1000);
      // The flow's record keeps hashes only, and is spent.
      const flows = await db.select().from(ssoFlows).where(eq(ssoFlows.email, person));
      expect(flows.length).toBe(1);
      expect(flows[0]?.stateHash).toMatch(/^[0-9a-f]{64}$/);
      expect(flows[0]?.usedAt).not.toBeNull();
      return user?.id ?? "";
    });
    const provisioned = await onlyAuditEntry(s.t.tenantId, "member.provisioned");
    expect(provisioned.targetId).toBe(userId);
    expect(provisioned.detail).toMatchObject({ via: "sso", role: "member", newAccount: true });
    const signedIn = (await auditEntries(s.t.tenantId, "user.signed_in")).filter((e) => e.actorId === userId);
    expect(signedIn.map((e) => e.detail.method)).toEqual(["sso"]);

    // The session is a password session's: pages, the Web API, the sessions list, sign-out.
    const home = await first.b.get("/");
    expect(home.status).toBe(200);
    expect(await home.text()).toContain("SSO Flow Studio");
    const projects = await api(
      "/v1/projects",
      { ip: first.b.ip },
      { headers: { Cookie: `gt_session=${session}` } },
    );
    expect(projects.status).toBe(200);
    const account = await (await first.b.get("/settings/account")).text();
    expect(account).toContain("<strong>(this browser)</strong>");
    expect((await first.b.submit("/", {}, "/sign-out")).status).toBe(303);
    expect((await first.b.get("/")).status).toBe(307);
    // No password: an empty one goes to the provider, any other is refused.
    const empty = await new Browser().signIn(person, "");
    expect(empty.status).toBe(303);
    expect(empty.headers.get("location")?.startsWith(`${inject("idpUrl")}/`)).toBe(true);
    expect((await new Browser().signIn(person, "anything-at-all")).status).toBe(401);

    // The wrong password is a password failure; no SSO sign-in was refused.
    const failures = await auditEntries(s.t.tenantId, "user.sign_in_failed");
    expect(failures.map((e) => [e.detail.method ?? "password", e.detail.reason])).toEqual([
      ["password", "password"],
    ]);

    // Later sign-ins sign the same user in; an email changed at the provider keeps the user.
    const second = await signInWithSso(person);
    expect(second.res.status).toBe(303);
    const moved = `dana.k@${s.domain}`;
    await idp.addAccount({ email: moved, sub });
    const third = await signInWithSso(moved);
    expect(third.res.status).toBe(303);
    await withDb(async (db) => {
      expect(await db.select().from(users).where(eq(users.email, moved))).toEqual([]);
      const links = await db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, userId));
      expect(links.map((l) => l.email)).toEqual([moved]);
      const rows = await db.select().from(memberships).where(eq(memberships.userId, userId));
      expect(rows.length).toBe(1);
    });
    expect(await auditEntries(s.t.tenantId, "member.provisioned")).toHaveLength(1);
    const signIns = (await auditEntries(s.t.tenantId, "user.signed_in")).filter((e) => e.actorId === userId);
    expect(signIns).toHaveLength(3);
    expect(active?.testedAt).not.toBeNull();
  });

  it("a replayed answer and a studio member's existing account", async () => {
    const s = await studio("SSO Replay Studio");
    const admin = `admin@${s.domain}`;
    await provider().addAccount({ email: admin });
    const ob = await ownerBrowser(s);
    expect((await configure(s, ob, admin)).status).toBe(303);
    await proveDomain(ob, s.t.tenantId, s.domain);

    // An existing member with a password is linked on first SSO sign-in (same user, password kept).
    const existing = `lee@${s.domain}`;
    const { id: leeId } = await withDb(async (db) => {
      const { createUser } = await import("../../workers/api/accounts/users.js");
      return createUser(db, {
        tenantId: s.t.tenantId,
        email: existing,
        password: "a-long-password",
        role: "owner",
      });
    });
    await provider().addAccount({ email: existing });
    const b = new Browser();
    const started = await b.submit(
      "/sign-in",
      { email: existing, password: "", sso: "1", returnTo: "/settings/account" },
      "/sign-in",
    );
    expect(started.status).toBe(303);
    const callback = await atProvider(started.headers.get("location") ?? "", existing);
    const res = await b.get(callback);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/settings/account");
    await withDb(async (db) => {
      const links = await db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, leeId));
      expect(links).toHaveLength(1);
      const [m] = await db.select().from(memberships).where(eq(memberships.userId, leeId));
      expect(m?.role).toBe("owner");
    });
    expect(await auditEntries(s.t.tenantId, "member.provisioned")).toEqual([]);
    // With a password given (and no "Continue with single sign-on"), the password path as before.
    expect((await new Browser().signIn(existing, "a-long-password")).status).toBe(303);

    // The same answer again: the state was spent.
    const replay = await b.get(callback);
    expect(replay.status).toBe(401);
    expect(await replay.text()).toContain("this sign-in answer was already used");
    const refused = await onlyAuditEntry(s.t.tenantId, "user.sign_in_failed");
    expect(refused.outcome).toBe("failure");
    expect(refused.detail).toMatchObject({ method: "sso", reason: "state_replayed" });
  });

  it("a failed test saves nothing and says why; a test of a replaced submission saves nothing", async () => {
    const s = await studio("SSO Failed Test Studio");
    const outsider = `someone@elsewhere-${crypto.randomUUID().slice(0, 6)}.test`;
    await provider().addAccount({ email: outsider });
    const owner = await ownerBrowser(s);
    const failed = await configure(s, owner, outsider);
    expect(failed.status).toBe(303);
    expect(failed.headers.get("location")).toBe(
      `${settingsPath(s.t.tenantId)}?test=failed&reason=email_domain`,
    );
    const page = await (await owner.get(failed.headers.get("location") ?? "")).text();
    expect(page).toContain("Test sign-in failed: the email address is not in one of the studio");
    const entry = await onlyAuditEntry(s.t.tenantId, "sso.test_failed");
    expect(entry.actorId).toBe(s.owner.id);
    expect(entry.detail).toMatchObject({ method: "sso", reason: "email_domain", email: outsider });

    // Two submissions, the first one's test completed last: it saves nothing.
    const admin = `admin@${s.domain}`;
    await provider().addAccount({ email: admin });
    const form = {
      issuer: inject("idpUrl"),
      clientId: s.clientId,
      clientSecret: s.clientSecret,
      domains: s.domain,
      defaultRole: "member",
    };
    const firstSubmit = await owner.submit(settingsPath(s.t.tenantId), form);
    const secondSubmit = await owner.submit(settingsPath(s.t.tenantId), { ...form, defaultRole: "owner" });
    const stale = await owner.get(await atProvider(firstSubmit.headers.get("location") ?? "", admin));
    expect(stale.headers.get("location")).toBe(
      `${settingsPath(s.t.tenantId)}?test=failed&reason=configuration_replaced`,
    );
    await withDb(async (db) => {
      const rows = await db.select().from(ssoConnections).where(eq(ssoConnections.tenantId, s.t.tenantId));
      expect(rows.map((r) => [r.state, r.defaultRole])).toEqual([["pending", "owner"]]);
    });
    const fresh = await owner.get(await atProvider(secondSubmit.headers.get("location") ?? "", admin));
    expect(fresh.headers.get("location")).toBe(`${settingsPath(s.t.tenantId)}?test=passed`);
    await withDb(async (db) => {
      const rows = await db.select().from(ssoConnections).where(eq(ssoConnections.tenantId, s.t.tenantId));
      expect(rows.map((r) => [r.state, r.defaultRole])).toEqual([["active", "owner"]]);
    });

    // Two sign-ins started in one browser (two tabs): both complete.
    await proveDomain(owner, s.t.tenantId, s.domain);
    const person = `two-tabs@${s.domain}`;
    await provider().addAccount({ email: person });
    const b = new Browser();
    const start = () => b.submit("/sign-in", { email: person, password: "", returnTo: "/" }, "/sign-in");
    const [tabA, tabB] = [await start(), await start()];
    for (const tab of [tabA, tabB]) {
      const res = await b.get(await atProvider(tab.headers.get("location") ?? "", person));
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/");
    }
  });

  it("a provider that cannot be reached: the sign-in page answers a retryable 503, no flow recorded", async () => {
    const s = await studio("SSO Down Provider Studio");
    await withDb(async (db) => {
      const [row] = await db
        .insert(ssoConnections)
        .values({
          tenantId: s.t.tenantId,
          state: "active",
          // A closed loopback port: discovery is refused.
          issuer: "http://127.0.0.1:1",
          clientId: s.clientId,
          clientSecret: "v1.unused.unused",
          domains: [s.domain],
        })
        .returning();
      await db
        .insert(ssoDomains)
        .values({ domain: s.domain, tenantId: s.t.tenantId, connectionId: row?.id ?? "" });
      await db
        .insert(ssoDomainProofs)
        .values({ tenantId: s.t.tenantId, domain: s.domain, token: "proven", verifiedAt: new Date() });
    });
    const email = `pat@${s.domain}`;
    const res = await new Browser().submit("/sign-in", { email, password: "", returnTo: "/" }, "/sign-in");
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(await res.text()).toContain("identity provider could not be reached just now");
    await withDb(async (db) => {
      expect(await db.select().from(ssoFlows).where(eq(ssoFlows.email, email))).toEqual([]);
    });
  });
});
