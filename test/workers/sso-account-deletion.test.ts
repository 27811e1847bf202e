import { eq } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { memberships, users } from "../../schema/pg/schema.js";
import { auditEntries } from "../support/audit.js";
import { unescapeHtml } from "../support/browser.js";
import { once, withDb } from "../support/harness.js";
import { idp, ssoSignIn, ssoStudio, throughProvider } from "../support/sso-flow.js";

// An account made by single sign-on has no password; it is deleted after a fresh sign-in through the
// studio's provider (docs/accounts.md, "Single sign-on": deleting an account without a password),
// against the global setup's real OpenID provider.

const studio = once(() => ssoStudio("SSO Deletion"));

async function userByEmail(email: string) {
  const [row] = await withDb((db) => db.select().from(users).where(eq(users.email, email)));
  return row;
}

/** A person of the studio signed in through the provider (a new account without a password). */
async function ssoPerson(tag: string) {
  const s = await studio();
  const email = await s.person(tag);
  const { b, res } = await ssoSignIn(email);
  expect(res.status).toBe(303);
  const user = await userByEmail(email);
  expect(user?.passwordHash).toBe("");
  return { s, email, b, userId: user?.id ?? "" };
}

describe("deleting an account made by single sign-on", () => {
  it("the account page asks the provider, which signs the person in again; then the account is gone", async () => {
    const { s, email, b, userId } = await ssoPerson("leaving");
    const page = unescapeHtml(await (await b.get("/settings/account")).text());
    expect(page).toContain("Confirm with your identity provider and delete my account");
    expect(page).not.toContain('id="delete-password"');

    const started = await b.submit("/settings/account", {}, "/settings/account/delete");
    expect(started.status).toBe(303);
    const authorize = new URL(started.headers.get("location") ?? "");
    expect(authorize.origin).toBe(new URL(inject("idpUrl")).origin);
    expect(authorize.searchParams.get("prompt")).toBe("login");
    expect(authorize.searchParams.get("max_age")).toBe("600");
    expect(authorize.searchParams.get("login_hint")).toBe(email);
    // Nothing is deleted before the provider has answered.
    expect(await userByEmail(email)).toBeDefined();

    const done = await b.get(await throughProvider(authorize.href, email));
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe("/sign-in");
    expect(await userByEmail(email)).toBeUndefined();
    expect(await withDb((db) => db.select().from(memberships).where(eq(memberships.userId, userId)))).toEqual(
      [],
    );
    expect((await b.get("/")).status).toBe(307);
    const deleted = (await auditEntries(s.t.tenantId, "user.deleted")).filter((e) => e.targetId === userId);
    expect(deleted.map((e) => e.detail)).toEqual([
      expect.objectContaining({ confirmedWith: "sso", issuer: inject("idpUrl") }),
    ]);
  });

  it("another person at the provider, or a sign-in older than 10 minutes, deletes nothing", async () => {
    const { s, email, b, userId } = await ssoPerson("staying");
    // Someone else of the domain (an account of their own here) signs in at the provider instead.
    const other = await ssoPerson("someone-else");
    const started = await b.submit("/settings/account", {}, "/settings/account/delete");
    const wrong = await b.get(await throughProvider(started.headers.get("location") ?? "", other.email));
    expect(wrong.status).toBe(401);
    expect(unescapeHtml(await wrong.text())).toContain(
      "the provider signed in another person than the one signed in here",
    );
    expect((await userByEmail(email))?.id).toBe(userId);

    // The provider answers with a sign-in an hour old (auth_time), as a session it did not renew.
    await idp().rogue({ clientId: s.clientId, set: { auth_time: Math.floor(Date.now() / 1000) - 3600 } });
    const again = await b.submit("/settings/account", {}, "/settings/account/delete");
    const stale = await b.get(await throughProvider(again.headers.get("location") ?? "", email));
    expect(stale.status).toBe(401);
    expect(unescapeHtml(await stale.text())).toContain("Your account was not deleted");
    expect((await userByEmail(email))?.id).toBe(userId);
    const refusals = (await auditEntries(s.t.tenantId, "user.sign_in_failed")).filter(
      (e) => (e.detail as { method?: string }).method === "sso",
    );
    expect(refusals.map((e) => (e.detail as { reason?: string }).reason)).toEqual(
      expect.arrayContaining(["account_mismatch", "expired"]),
    );
    // Still signed in, and a genuine confirmation works.
    const last = await b.submit("/settings/account", {}, "/settings/account/delete");
    const ok = await b.get(await throughProvider(last.headers.get("location") ?? "", email));
    expect(ok.headers.get("location")).toBe("/sign-in");
    expect(await userByEmail(email)).toBeUndefined();
  });

  it("the last owner of a studio is told before going to the provider", async () => {
    const s = await studio();
    const { b, userId } = await ssoPerson("sole-owner");
    // The person's own studio, which they alone own.
    const { createTenant } = await import("../../workers/api/bootstrap.js");
    await withDb(async (db) => {
      const t = await createTenant(db, "Solo Studio", "free");
      await db.insert(memberships).values({ userId, tenantId: t.id, role: "owner" });
    });
    const res = await b.submit("/settings/account", {}, "/settings/account/delete");
    expect(res.status).toBe(400);
    expect(unescapeHtml(await res.text())).toContain("You are the last owner of a studio");
    expect(s.t.tenantId).toBeDefined();
  });
});
