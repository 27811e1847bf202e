import { eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { memberships, sessions, ssoIdentities, users } from "../../schema/pg/schema.js";
import { auditEntries } from "../support/audit.js";
import { Browser, unescapeHtml } from "../support/browser.js";
import { once, withDb } from "../support/harness.js";
import type { IdpRogue } from "../support/oidc-idp-control.js";
import { idp, ssoSignIn, ssoStudio, startSsoSignIn, throughProvider } from "../support/sso-flow.js";

// The negative cases of issue 31 item 6, against the real provider (test/support/oidc-idp.ts): tokens
// a real provider never issues are made by its rogue mode (re-signed with its own key, so each fails
// only on the claim under test). Each sign-in is refused with a page, an audit entry naming the reason,
// and nothing created: no user, no membership, no link to the provider's account, no session.

const studio = once(() => ssoStudio("Negative Cases"));

type Created = { users: number; memberships: number; identities: number; sessions: number };

/** What exists for these emails: users, their memberships, provider links and sessions. */
async function createdFor(emails: string[]): Promise<Created> {
  return withDb(async (db) => {
    const found = await db.select({ id: users.id }).from(users).where(inArray(users.email, emails));
    const ids = found.map((u) => u.id);
    const count = async (rows: Promise<unknown[]>) => (ids.length === 0 ? 0 : (await rows).length);
    return {
      users: ids.length,
      memberships: await count(db.select().from(memberships).where(inArray(memberships.userId, ids))),
      identities: await count(db.select().from(ssoIdentities).where(inArray(ssoIdentities.userId, ids))),
      sessions: await count(db.select().from(sessions).where(inArray(sessions.userId, ids))),
    };
  });
}

const NOTHING: Created = { users: 0, memberships: 0, identities: 0, sessions: 0 };

/** SSO failures recorded in the studio for `email` (as typed on the sign-in page or as the token said). */
async function refusalsFor(tenantId: string, email: string) {
  const rows = await auditEntries(tenantId, "user.sign_in_failed");
  return rows.filter((e) => {
    const d = e.detail as { method?: string; email?: string };
    return d.method === "sso" && (e.actorLabel === email || d.email === email);
  });
}

/**
 * Starts a sign-in as `email` on the sign-in page, signs in at the provider as `loginAs` (default the
 * same person) with the studio's next token rogue, and follows the callback.
 */
async function refusedSignIn(opts: { email: string; loginAs?: string; rogue?: Omit<IdpRogue, "clientId"> }) {
  const s = await studio();
  if (opts.rogue) {
    await idp().rogue({ clientId: s.clientId, ...opts.rogue });
  }
  const b = new Browser();
  const started = await startSsoSignIn(b, opts.email);
  expect(started.status).toBe(303);
  const callback = await throughProvider(started.headers.get("location") ?? "", opts.loginAs ?? opts.email);
  const res = await b.get(callback);
  return { s, b, res, text: unescapeHtml(await res.text()) };
}

async function expectRefused(
  opts: Parameters<typeof refusedSignIn>[0],
  reason: string,
  words: string,
): Promise<void> {
  const { s, b, res, text } = await refusedSignIn(opts);
  expect(res.status).toBe(401);
  expect(text).toContain(`Single sign-on failed: ${words}`);
  expect(b.cookies.has("gt_session")).toBe(false);
  const who = opts.loginAs ?? opts.email;
  const entries = await refusalsFor(s.t.tenantId, opts.email);
  expect(entries).toHaveLength(1);
  expect(entries[0]?.outcome).toBe("failure");
  expect(entries[0]?.detail).toMatchObject({ method: "sso", reason });
  expect(await createdFor([opts.email, who])).toEqual(NOTHING);
}

describe("SSO sign-in refusals against a real provider", () => {
  it("a wrong issuer", async () => {
    const s = await studio();
    await expectRefused(
      { email: await s.person("iss"), rogue: { set: { iss: "http://127.0.0.1:1/another-tenant" } } },
      "issuer",
      "the ID token's issuer is not the configured one",
    );
  });

  it("a token for another audience", async () => {
    const s = await studio();
    await expectRefused(
      { email: await s.person("aud"), rogue: { set: { aud: "another-studio-app" } } },
      "audience",
      "the ID token was issued for another client",
    );
  });

  it("a wrong nonce", async () => {
    const s = await studio();
    await expectRefused(
      { email: await s.person("nonce"), rogue: { set: { nonce: "not-this-sign-in" } } },
      "nonce",
      "the ID token's nonce does not match this sign-in",
    );
  });

  it("an expired ID token", async () => {
    const s = await studio();
    await expectRefused(
      { email: await s.person("exp"), rogue: { expiresInSeconds: -600 } },
      "expired",
      "the ID token has expired",
    );
  });

  it("a signature by another key under the provider's key id", async () => {
    const s = await studio();
    await expectRefused(
      { email: await s.person("sig"), rogue: { foreignKey: true } },
      "signature",
      "the ID token's signature does not verify",
    );
  });

  it("an unverified email (email_verified false)", async () => {
    const s = await studio();
    await expectRefused(
      { email: await s.person("unverified", { emailVerified: false }) },
      "email_unverified",
      "the provider did not say the email address is verified",
    );
  });

  it("no email_verified claim at all (Entra ID's default) is not verified", async () => {
    const s = await studio();
    await expectRefused(
      { email: await s.person("entra", { emailVerified: null }) },
      "email_unverified",
      "the provider did not say the email address is verified",
    );
  });

  it("an email outside the studio's domains", async () => {
    const s = await studio();
    const outsider = `outsider-${crypto.randomUUID().slice(0, 6)}@elsewhere.test`;
    await idp().addAccount({ email: outsider });
    const typed = await s.person("typed");
    const { res, text } = await refusedSignIn({ email: typed, loginAs: outsider });
    expect(res.status).toBe(401);
    expect(text).toContain("the email address is not in one of the studio's domains");
    const entries = await refusalsFor(s.t.tenantId, outsider);
    expect(entries.map((e) => e.detail)).toEqual([
      expect.objectContaining({ reason: "email_domain", email: outsider }),
    ]);
    expect(await createdFor([typed, outsider])).toEqual(NOTHING);
  });

  it("a replayed state: the callback used twice signs in once", async () => {
    const s = await studio();
    const email = await s.person("replay");
    const b = new Browser();
    const started = await startSsoSignIn(b, email);
    const callback = await throughProvider(started.headers.get("location") ?? "", email);
    const first = await b.get(callback);
    expect(first.status).toBe(303);
    const after = await createdFor([email]);
    expect(after).toEqual({ users: 1, memberships: 1, identities: 1, sessions: 1 });
    // The same answer again, in the same browser (its binding cookie still there), and in another.
    const again = await b.get(callback);
    expect(again.status).toBe(401);
    expect(await again.text()).toContain("this sign-in answer was already used");
    const elsewhere = await new Browser().get(callback);
    expect(elsewhere.status).toBe(401);
    expect(await createdFor([email])).toEqual(after);
    const replays = (await auditEntries(s.t.tenantId, "user.sign_in_failed")).filter(
      (e) => (e.detail as { reason?: string }).reason === "state_replayed" && e.actorLabel === email,
    );
    expect(replays.length).toBe(2);
  });

  it("a genuine sign-in after all that still works: the refusals were one-shot", async () => {
    const s = await studio();
    const email = await s.person("fine");
    const { res } = await ssoSignIn(email);
    expect(res.status).toBe(303);
    expect(await createdFor([email])).toEqual({ users: 1, memberships: 1, identities: 1, sessions: 1 });
    const [user] = await withDb((db) =>
      db.select({ id: users.id }).from(users).where(eq(users.email, email)),
    );
    expect(user?.id).toBeDefined();
  });
});

describe("the providers' ways of vouching for an email", () => {
  it("Okta's thin ID token (email_verified only at UserInfo): verified there, signed in", async () => {
    const s = await studio();
    const email = `okta-${crypto.randomUUID().slice(0, 6)}@${s.domain}`;
    await idp().addAccount({ email, emailVerifiedOnlyAtUserinfo: true });
    const { res } = await ssoSignIn(email);
    expect(res.status).toBe(303);
    expect(await createdFor([email])).toEqual({ users: 1, memberships: 1, identities: 1, sessions: 1 });
  });

  it("Okta saying false at UserInfo: refused", async () => {
    const s = await studio();
    const email = `okta-no-${crypto.randomUUID().slice(0, 6)}@${s.domain}`;
    await idp().addAccount({ email, emailVerified: false, emailVerifiedOnlyAtUserinfo: true });
    await expectRefused(
      { email },
      "email_unverified",
      "the provider did not say the email address is verified",
    );
  });

  it("Entra ID with the optional claim xms_edov true: signed in", async () => {
    const s = await studio();
    const email = `entra-edov-${crypto.randomUUID().slice(0, 6)}@${s.domain}`;
    await idp().addAccount({ email, emailVerified: null, xmsEdov: true });
    const { res } = await ssoSignIn(email);
    expect(res.status).toBe(303);
    expect(await createdFor([email])).toEqual({ users: 1, memberships: 1, identities: 1, sessions: 1 });
  });

  it("Entra ID with xms_edov false: refused", async () => {
    const s = await studio();
    const email = `entra-no-${crypto.randomUUID().slice(0, 6)}@${s.domain}`;
    await idp().addAccount({ email, emailVerified: null, xmsEdov: false });
    await expectRefused(
      { email },
      "email_unverified",
      "the provider did not say the email address is verified",
    );
  });
});

describe("a wrong client secret", () => {
  it("the provider's 401 invalid_client (WWW-Authenticate: Basic) is reported as token_request, as documented", async () => {
    const s = await ssoStudio("Wrong Secret");
    const admin = await s.person("wrong-secret-admin");
    const submitted = await s.ownerBrowser.submit(`/settings/studios/${s.t.tenantId}/sso`, {
      issuer: idp().issuer,
      clientId: s.clientId,
      clientSecret: "not-the-secret-the-provider-issued",
      domains: s.domain,
      defaultRole: "member",
    });
    expect(submitted.status).toBe(303);
    const failed = await s.ownerBrowser.get(
      await throughProvider(submitted.headers.get("location") ?? "", admin),
    );
    expect(failed.headers.get("location")).toBe(
      `/settings/studios/${s.t.tenantId}/sso?test=failed&reason=token_request`,
    );
    const page = unescapeHtml(await (await s.ownerBrowser.get(failed.headers.get("location") ?? "")).text());
    expect(page).toContain(
      "Test sign-in failed: the provider refused the code exchange (check the client id and secret)",
    );
    const entries = await auditEntries(s.t.tenantId, "sso.test_failed");
    expect(entries.map((e) => e.detail)).toEqual([
      expect.objectContaining({ method: "sso", reason: "token_request", cause: "invalid_client" }),
    ]);
  });
});

describe("two first sign-ins of the same new person at once", () => {
  it("both sign in, as one user with one membership and one link, and nothing answers 500", async () => {
    const s = await studio();
    const email = await s.person("twice-at-once");
    // Two browsers (a laptop and a phone), each through the provider; the two answers arrive together.
    const browsers = [new Browser(), new Browser()];
    const callbacks: string[] = [];
    for (const b of browsers) {
      const started = await startSsoSignIn(b, email);
      expect(started.status).toBe(303);
      callbacks.push(await throughProvider(started.headers.get("location") ?? "", email));
    }
    const answers = await Promise.all(browsers.map((b, i) => b.get(callbacks[i] ?? "")));
    expect(answers.map((r) => r.status)).toEqual([303, 303]);
    expect(browsers.map((b) => b.cookies.has("gt_session"))).toEqual([true, true]);
    expect(await createdFor([email])).toEqual({ users: 1, memberships: 1, identities: 1, sessions: 2 });
    const provisioned = (await auditEntries(s.t.tenantId, "member.provisioned")).filter(
      (e) => e.actorLabel === email,
    );
    expect(provisioned).toHaveLength(1);
  });
});
