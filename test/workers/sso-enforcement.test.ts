import { and, eq, isNull } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { accountLinks, sessions, ssoConnections, users } from "../../schema/pg/schema.js";
import { createLink } from "../../workers/api/accounts/links.js";
import {
  SESSION_TTL_SECONDS,
  SSO_SESSION_TTL_SECONDS,
  startSession,
} from "../../workers/api/credentials/sessions.js";
import { auditEntries } from "../support/audit.js";
import { Browser, seedUser } from "../support/browser.js";
import { BASE, seedTenant, withDb } from "../support/harness.js";
import { api } from "../support/http.js";
import { linkIn, mailTo } from "../support/mail.js";
import type { OkBody } from "../support/schema.js";
import {
  idp,
  type SsoStudio,
  ssoPath,
  ssoSignIn,
  ssoStudio,
  startSsoSignIn,
  throughProvider,
} from "../support/sso-flow.js";

// Requiring single sign-on (issue 31 item 3) and leaving (item 4), through the pages and the real
// OpenID provider of the global setup (test/support/oidc-idp.ts).

const INBOX = inject("inboxUrl");

async function enforce(s: SsoStudio, requireSso: boolean, breakGlassUserId: string | null = s.owner.id) {
  return s.ownerBrowser.submit(
    ssoPath(s.t.tenantId),
    { ...(requireSso ? { requireSso: "1" } : {}), breakGlassUserId: breakGlassUserId ?? "" },
    `${ssoPath(s.t.tenantId)}/enforcement`,
  );
}

async function required(s: SsoStudio): Promise<boolean> {
  return withDb(async (db) => {
    const [row] = await db
      .select({ requireSso: ssoConnections.requireSso })
      .from(ssoConnections)
      .where(and(eq(ssoConnections.tenantId, s.t.tenantId), eq(ssoConnections.state, "active")));
    return row?.requireSso ?? false;
  });
}

async function passwordSignIn(email: string, password: string) {
  const b = new Browser();
  const res = await b.signIn(email, password);
  return { b, res, text: await res.text() };
}

describe("requiring single sign-on", () => {
  it("needs a tested configuration and a break-glass owner with a password; a member may not set it", async () => {
    const s = await ssoStudio("Enforce Setup");
    // No break-glass owner named: refused, naming the field; nothing changes.
    const none = await enforce(s, true, null);
    expect(none.status).toBe(400);
    expect(await none.text()).toContain("breakGlassUserId: name one owner who keeps password sign-in");
    // A member cannot be the break-glass account.
    const member = await seedUser(s.t.tenantId, "member");
    const notOwner = await enforce(s, true, member.id);
    expect(notOwner.status).toBe(400);
    expect(await notOwner.text()).toContain("breakGlassUserId: must be an owner of this studio");
    expect(await required(s)).toBe(false);
    // A member of the studio is refused the page action (403), nothing changes.
    const mb = new Browser();
    expect((await mb.signIn(member.email, member.password)).status).toBe(303);
    const byMember = await mb.post(`${ssoPath(s.t.tenantId)}/enforcement`, {
      csrf: "x",
      requireSso: "1",
      breakGlassUserId: member.id,
    });
    expect([403]).toContain(byMember.status);
    expect(await required(s)).toBe(false);
    // The owner names themselves: required, and recorded.
    const ok = await enforce(s, true);
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe(`${ssoPath(s.t.tenantId)}?enforcement=required`);
    expect(await required(s)).toBe(true);
    const [entry] = await auditEntries(s.t.tenantId, "sso.enforcement_changed");
    expect(entry?.detail).toMatchObject({ requireSso: true, wasRequired: false, breakGlass: s.owner.email });
    expect(entry?.actorLabel).toBe(s.owner.email);
  });

  it("refuses a studio without a tested configuration (409)", async () => {
    const t = await seedTenant("pro", "No SSO");
    const owner = await seedUser(t.tenantId, "owner");
    const b = new Browser();
    expect((await b.signIn(owner.email, owner.password)).status).toBe(303);
    const res = await b.submit(
      ssoPath(t.tenantId),
      { requireSso: "1", breakGlassUserId: owner.id },
      `${ssoPath(t.tenantId)}/enforcement`,
    );
    expect(res.status).toBe(409);
    expect(await res.text()).toContain("single sign-on is not set up for this studio yet");
  });

  it("refuses members' password sign-in but not the break-glass owner's; turning it off restores it", async () => {
    const s = await ssoStudio("Enforce Sign-in");
    const member = await seedUser(s.t.tenantId, "member");
    const secondOwner = await seedUser(s.t.tenantId, "owner");
    expect((await enforce(s, true)).status).toBe(303);

    const refused = await passwordSignIn(member.email, member.password);
    expect(refused.res.status).toBe(403);
    expect(refused.text).toContain("Enforce Sign-in requires single sign-on");
    expect(refused.b.cookies.has("gt_session")).toBe(false);
    // Even a wrong password gets the same answer: the password is never checked for such an account.
    expect((await passwordSignIn(member.email, "not-the-password")).res.status).toBe(403);
    // An owner who is not the break-glass account is a member like any other here.
    expect((await passwordSignIn(secondOwner.email, secondOwner.password)).res.status).toBe(403);
    // The break-glass owner signs in with the password.
    expect((await passwordSignIn(s.owner.email, s.owner.password)).res.status).toBe(303);

    const failed = (await auditEntries(s.t.tenantId, "user.sign_in_failed")).filter(
      (e) => e.targetLabel === member.email,
    );
    // One row per address, IP and window (each Browser here has its own IP): two attempts, both denied.
    expect(failed.map((e) => [e.outcome, (e.detail as { reason?: string }).reason, e.count])).toEqual([
      ["denied", "sso_required", 1],
      ["denied", "sso_required", 1],
    ]);

    // Off again: everyone with a password signs in with it.
    expect((await enforce(s, false)).status).toBe(303);
    expect(await required(s)).toBe(false);
    expect((await passwordSignIn(member.email, member.password)).res.status).toBe(303);
    expect((await passwordSignIn(secondOwner.email, secondOwner.password)).res.status).toBe(303);
  });

  it("a break-glass owner demoted to member loses the exemption", async () => {
    const s = await ssoStudio("Enforce Demoted");
    const other = await seedUser(s.t.tenantId, "owner");
    expect((await enforce(s, true, other.id)).status).toBe(303);
    expect((await passwordSignIn(other.email, other.password)).res.status).toBe(303);
    const demoted = await s.ownerBrowser.submit(
      `/settings/studios/${s.t.tenantId}/members`,
      { role: "member" },
      `/settings/studios/${s.t.tenantId}/members/${other.id}/role`,
    );
    expect(demoted.status).toBe(303);
    expect((await passwordSignIn(other.email, other.password)).res.status).toBe(403);
  });

  it("turning it on ends members' password sessions, keeps SSO sessions and the owner's own", async () => {
    const s = await ssoStudio("Enforce Sessions");
    const member = await seedUser(s.t.tenantId, "member");
    const password = await passwordSignIn(member.email, member.password);
    expect(password.res.status).toBe(303);
    const ssoPerson = await s.person("sso-member");
    const sso = await ssoSignIn(ssoPerson);
    expect(sso.res.status).toBe(303);
    expect((await password.b.get("/")).status).toBe(200);

    const on = await enforce(s, true);
    expect(on.status).toBe(303);
    const [entry] = await auditEntries(s.t.tenantId, "sso.enforcement_changed");
    expect(entry?.detail).toMatchObject({ sessionsEnded: 1 });
    // The password session is signed out on its next request; the SSO session and the owner's stay.
    expect((await password.b.get("/")).status).toBe(307);
    expect((await sso.b.get("/")).status).toBe(200);
    expect((await s.ownerBrowser.get(ssoPath(s.t.tenantId))).status).toBe(200);
  });

  it("password reset: a member gets no link but a mail saying so; a link issued before is refused", async () => {
    const s = await ssoStudio("Enforce Reset");
    const member = await seedUser(s.t.tenantId, "member");
    // A reset link issued before single sign-on was required.
    const early = await withDb((db) =>
      createLink(db, { purpose: "reset", email: member.email, userId: member.id }),
    );
    expect((await enforce(s, true)).status).toBe(303);

    const b = new Browser();
    const asked = await b.submit("/password-reset", { email: member.email });
    expect(asked.status).toBe(200);
    expect(await asked.text()).toContain(`We sent a mail to ${member.email}`);
    const mail = await mailTo(INBOX, member.email, /Reset your/);
    expect(mail.text).toContain("Enforce Reset requires single sign-on");
    expect(() => linkIn(mail, "/password-reset/confirm")).toThrow();
    const live = await withDb((db) =>
      db
        .select({ id: accountLinks.id })
        .from(accountLinks)
        .where(
          and(
            eq(accountLinks.userId, member.id),
            isNull(accountLinks.usedAt),
            isNull(accountLinks.revokedAt),
          ),
        ),
    );
    expect(live.map((l) => l.id)).toEqual([early.id]);

    const before = await passwordHashOf(member.id);
    const confirm = await b.submit(
      `/password-reset/confirm?token=${early.token}`,
      { token: early.token, password: "a-brand-new-password" },
      "/password-reset/confirm",
    );
    expect(confirm.status).toBe(403);
    expect(await confirm.text()).toContain("requires single sign-on");
    expect(await passwordHashOf(member.id)).toBe(before);
    const denied = (await auditEntries(s.t.tenantId, "user.password_reset")).filter(
      (e) => e.outcome === "denied",
    );
    expect(denied.map((e) => e.detail)).toEqual([
      expect.objectContaining({ reason: "sso_required", how: "request" }),
      expect.objectContaining({ reason: "sso_required", how: "link" }),
    ]);
    // The break-glass owner still resets theirs.
    expect((await b.submit("/password-reset", { email: s.owner.email })).status).toBe(200);
    const ownerMail = await mailTo(INBOX, s.owner.email, /Reset your/);
    expect(linkIn(ownerMail, "/password-reset/confirm")).toContain(`${BASE}/password-reset/confirm?token=`);
  });

  it("invitations: only addresses in the studio's domains; pending ones outside are revoked when it is turned on", async () => {
    const s = await ssoStudio("Enforce Invite");
    const invitationsPath = `/settings/studios/${s.t.tenantId}/invitations`;
    const membersPath = `/settings/studios/${s.t.tenantId}/members`;
    const outsideEarly = `contractor-${crypto.randomUUID().slice(0, 6)}@elsewhere.test`;
    expect(
      (await s.ownerBrowser.submit(membersPath, { email: outsideEarly, role: "member" }, invitationsPath))
        .status,
    ).toBe(303);
    expect((await enforce(s, true)).status).toBe(303);
    const [entry] = await auditEntries(s.t.tenantId, "sso.enforcement_changed");
    expect(entry?.detail).toMatchObject({ invitationsRevoked: 1 });
    const pending = await withDb((db) =>
      db
        .select({ email: accountLinks.email })
        .from(accountLinks)
        .where(
          and(
            eq(accountLinks.tenantId, s.t.tenantId),
            eq(accountLinks.purpose, "invitation"),
            isNull(accountLinks.revokedAt),
          ),
        ),
    );
    expect(pending).toEqual([]);

    const outside = `freelancer-${crypto.randomUUID().slice(0, 6)}@elsewhere.test`;
    const refused = await s.ownerBrowser.submit(
      membersPath,
      { email: outside, role: "member" },
      invitationsPath,
    );
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain(
      `Email: this studio requires single sign-on, so it invites only addresses in its domains (${s.domain})`,
    );
    const deniedInvites = (await auditEntries(s.t.tenantId, "invitation.sent")).filter(
      (e) => e.outcome === "denied",
    );
    expect(deniedInvites.map((e) => [e.targetLabel, e.detail])).toEqual([
      [outside, expect.objectContaining({ reason: "sso_domain" })],
    ]);

    const inside = `artist-${crypto.randomUUID().slice(0, 6)}@${s.domain}`;
    expect(
      (await s.ownerBrowser.submit(membersPath, { email: inside, role: "member" }, invitationsPath)).status,
    ).toBe(303);
    // Accepted by someone new: they join, and sign in with the provider, not with the password they chose.
    const mail = await mailTo(INBOX, inside, /invit/i);
    const link = linkIn(mail, "/invitations/accept");
    const nb = new Browser();
    const token = new URL(link).searchParams.get("token") ?? "";
    const accepted = await nb.submit(
      link.slice(BASE.length),
      { token, password: "chosen-password-1", name: "Artist" },
      "/invitations/accept",
    );
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get("location")).toBe("/sign-in?done=joined");
    expect(nb.cookies.has("gt_session")).toBe(false);
  });
});

describe("PUT /api/v1/studios/{tenantId}/sso/enforcement", () => {
  const put = (b: Browser, tenantId: string, body: unknown) =>
    b.fetch(`/api/v1/studios/${tenantId}/sso/enforcement`, {
      method: "PUT",
      headers: { Origin: BASE, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });

  it("an owner's session sets it; bad input names the field; members 403, another studio 404, keys 403", async () => {
    const s = await ssoStudio("Enforce API");
    const member = await seedUser(s.t.tenantId, "member");
    const missing = await put(s.ownerBrowser, s.t.tenantId, { requireSso: true, breakGlassUserId: null });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ field: "breakGlassUserId" });
    const malformed = await put(s.ownerBrowser, s.t.tenantId, {
      requireSso: "yes",
      breakGlassUserId: s.owner.id,
    });
    expect(malformed.status).toBe(400);
    expect(await required(s)).toBe(false);

    const on = await put(s.ownerBrowser, s.t.tenantId, { requireSso: true, breakGlassUserId: s.owner.id });
    expect(on.status).toBe(200);
    expect(((await on.json()) as OkBody<"/v1/studios/{tenantId}/sso/enforcement", "put">).data).toEqual({
      requireSso: true,
      breakGlassUserId: s.owner.id,
      sessionsEnded: 0,
      invitationsRevoked: 0,
    });
    expect(await required(s)).toBe(true);
    // The owner's own session survived turning it on.
    expect((await s.ownerBrowser.get("/")).status).toBe(200);

    const memberSession = new Browser();
    expect((await memberSession.signIn(member.email, member.password)).status).toBe(403);
    memberSession.cookies.set("gt_session", await withDb((db) => startSession(db, member.id)));
    const byMember = await put(memberSession, s.t.tenantId, { requireSso: false, breakGlassUserId: null });
    expect(byMember.status).toBe(403);
    const other = await ssoStudio("Enforce API Other");
    const crossStudio = await put(s.ownerBrowser, other.t.tenantId, {
      requireSso: false,
      breakGlassUserId: null,
    });
    expect(crossStudio.status).toBe(404);
    const byKey = await api(
      `/v1/studios/${s.t.tenantId}/sso/enforcement`,
      { key: s.t.keys.full.key },
      {
        method: "PUT",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ requireSso: false, breakGlassUserId: null }),
      },
    );
    expect(byKey.status).toBe(403);
    expect(await required(s)).toBe(true);

    const off = await put(s.ownerBrowser, s.t.tenantId, { requireSso: false, breakGlassUserId: null });
    expect(off.status).toBe(200);
    expect(await required(s)).toBe(false);
  });
});

describe("leaving: a person disabled at the provider", () => {
  it("an SSO session lasts at most 12 hours, a password session 14 days", async () => {
    expect(SSO_SESSION_TTL_SECONDS).toBe(12 * 3600);
    const s = await ssoStudio("Leaving Bound");
    const email = await s.person("leaver");
    const t0 = Date.now();
    const { b, res } = await ssoSignIn(email);
    expect(res.status).toBe(303);
    const [row] = await withDb((db) =>
      db
        .select({
          createdAt: sessions.createdAt,
          expiresAt: sessions.expiresAt,
          ssoTenantId: sessions.ssoTenantId,
        })
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(eq(users.email, email)),
    );
    expect(row?.ssoTenantId).toBe(s.t.tenantId);
    expect((row?.expiresAt.getTime() ?? 0) - (row?.createdAt.getTime() ?? 0)).toBe(
      SSO_SESSION_TTL_SECONDS * 1000,
    );
    // Disabled at the provider meanwhile: the session runs out at its bound and is not renewed.
    await idp().setDisabled(email, true);
    const at = (ms: number) => b.fetch("/", { headers: { "X-Test-Now": String(ms) } });
    expect((await at(t0 + SSO_SESSION_TTL_SECONDS * 1000 - 60_000)).status).toBe(200);
    expect((await at((row?.expiresAt.getTime() ?? 0) + 1000)).status).toBe(307);
    // A password session of the owner is unchanged: 14 days.
    const [pw] = await withDb((db) =>
      db
        .select({ createdAt: sessions.createdAt, expiresAt: sessions.expiresAt })
        .from(sessions)
        .where(eq(sessions.userId, s.owner.id)),
    );
    expect((pw?.expiresAt.getTime() ?? 0) - (pw?.createdAt.getTime() ?? 0)).toBe(SESSION_TTL_SECONDS * 1000);
  });

  it("cannot sign in again: the provider refuses it, and nothing is created or signed in here", async () => {
    const s = await ssoStudio("Leaving Refused");
    const email = await s.person("gone");
    expect((await ssoSignIn(email)).res.status).toBe(303);
    await idp().setDisabled(email, true);
    const b = new Browser();
    const started = await startSsoSignIn(b, email);
    const result = await idp().authorize(started.headers.get("location") ?? "", email);
    expect(result).toMatchObject({ status: 403 });
    expect(b.cookies.has("gt_session")).toBe(false);
  });

  it("a provider that answers access_denied: refused with the reason in the audit log", async () => {
    const s = await ssoStudio("Leaving Denied");
    const email = `denied-${crypto.randomUUID().slice(0, 6)}@${s.domain}`;
    await idp().addAccount({ email, disabled: true, disabledAnswer: "access_denied" });
    const b = new Browser();
    const started = await startSsoSignIn(b, email);
    const callback = await throughProvider(started.headers.get("location") ?? "", email);
    const res = await b.get(callback);
    expect(res.status).toBe(401);
    expect(await res.text()).toContain("Single sign-on failed: the provider refused the sign-in");
    expect(b.cookies.has("gt_session")).toBe(false);
    const failed = (await auditEntries(s.t.tenantId, "user.sign_in_failed")).filter(
      (e) => (e.detail as { method?: string }).method === "sso",
    );
    expect(failed.map((e) => e.detail)).toEqual([
      expect.objectContaining({ reason: "provider_error", cause: "access_denied" }),
    ]);
    expect(await withDb((db) => db.select().from(users).where(eq(users.email, email)))).toEqual([]);
  });

  it("an owner still ends a member's SSO sessions at once", async () => {
    const s = await ssoStudio("Leaving Owner");
    const email = await s.person("ended");
    const { b } = await ssoSignIn(email);
    expect((await b.get("/")).status).toBe(200);
    const [user] = await withDb((db) =>
      db.select({ id: users.id }).from(users).where(eq(users.email, email)),
    );
    const ended = await s.ownerBrowser.submit(
      `/settings/studios/${s.t.tenantId}/members`,
      {},
      `/settings/studios/${s.t.tenantId}/members/${user?.id}/sessions/end`,
    );
    expect(ended.status).toBe(303);
    expect((await b.get("/")).status).toBe(307);
  });
});

async function passwordHashOf(userId: string): Promise<string> {
  const [row] = await withDb((db) =>
    db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, userId)),
  );
  return row?.passwordHash ?? "";
}
