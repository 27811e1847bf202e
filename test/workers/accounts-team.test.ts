import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import {
  accountLinks,
  memberships,
  oauthGrants,
  projects,
  sessions,
  tenants,
  users,
} from "../../schema/pg/schema.js";
import { createLink, LINK_TTL_SECONDS } from "../../workers/api/accounts/links.js";
import api from "../../workers/api/index.js";
import { INVITATIONS_PER_TENANT_PER_HOUR } from "../../workers/api/web/mail-throttle.js";
import { sha256Hex } from "../../workers/shared/credentials/secrets.js";
import { buckets } from "../../workers/shared/rate-limit.js";
import { Browser, csrfOf, seedUser } from "../support/browser.js";
import { BASE, seedTenant, withDb } from "../support/harness.js";
import { api as apiRequest } from "../support/http.js";
import { atLeast, linkIn, mailsTo, mailTo } from "../support/mail.js";
import { cliLogin, refresh } from "../support/oauth.js";

const INBOX = inject("inboxUrl");

function uniqueEmail(tag: string): string {
  return `${tag}-${crypto.randomUUID().slice(0, 8)}@team.test`;
}

async function signedIn(email: string, password: string): Promise<Browser> {
  const b = new Browser();
  expect((await b.signIn(email, password)).status).toBe(303);
  return b;
}

/** A studio with an owner signed in. */
async function tenantWithOwner(name = "Team Studio") {
  const t = await seedTenant("pro", name);
  const owner = await seedUser(t.tenantId, "owner");
  return { t, owner, b: await signedIn(owner.email, owner.password) };
}

const membersPath = (tenantId: string) => `/settings/studios/${tenantId}/members`;

async function invite(b: Browser, tenantId: string, email: string, role = "member"): Promise<Response> {
  return b.submit(membersPath(tenantId), { email, role }, `/settings/studios/${tenantId}/invitations`);
}

async function acceptAsNewUser(link: string, password: string): Promise<Browser> {
  const b = new Browser();
  const res = await b.submit(
    link.slice(BASE.length),
    { token: tokenOf(link), password, name: "New Person" },
    "/invitations/accept",
  );
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toBe("/");
  return b;
}

function tokenOf(link: string): string {
  return new URL(link).searchParams.get("token") ?? "";
}

describe("invitations over SMTP", () => {
  it("mails a single-use link stored only as its hash; a new person sets a password, joins and sees the project", async () => {
    const { t, b } = await tenantWithOwner();
    const email = uniqueEmail("new");
    const res = await invite(b, t.tenantId, email);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${membersPath(t.tenantId)}?done=invited`);
    const mail = await mailTo(INBOX, email, /invited to Team Studio/);
    const link = linkIn(mail, "/invitations/accept");
    const token = tokenOf(link);
    await withDb(async (db) => {
      const [row] = await db.select().from(accountLinks).where(eq(accountLinks.email, email));
      expect(row?.tokenHash).toBe(await sha256Hex(token));
      expect(JSON.stringify(row)).not.toContain(token);
      expect(row?.mailStatus).toBe("sent");
      expect(row?.expiresAt.getTime()).toBe(
        (row?.createdAt.getTime() ?? 0) + LINK_TTL_SECONDS.invitation * 1000,
      );
    });
    const page = await (await b.get(membersPath(t.tenantId))).text();
    expect(page).toContain(email);
    const joined = await acceptAsNewUser(link, "a-long-password");
    const home = await (await joined.get("/")).text();
    expect(home).toContain(`/projects/${t.projectId}/overview`);
    // Once only: the same link again is refused and changes nothing.
    const again = await new Browser().get(link.slice(BASE.length));
    expect(again.status).toBe(410);
    const replay = await new Browser().post("/invitations/accept", { token, password: "another-password" });
    expect(replay.status).toBe(410);
  });

  it("an existing user joins with the link and signs in as usual", async () => {
    const { t, b } = await tenantWithOwner();
    const other = await seedTenant("pro", "Elsewhere");
    const person = await seedUser(other.tenantId, "owner");
    await invite(b, t.tenantId, person.email, "owner");
    const link = linkIn(await mailTo(INBOX, person.email, /invited/), "/invitations/accept");
    const guest = new Browser();
    const page = await (await guest.get(link.slice(BASE.length))).text();
    expect(page).not.toContain('name="password"');
    const res = await guest.post("/invitations/accept", { csrf: csrfOf(page), token: tokenOf(link) });
    expect(res.headers.get("location")).toBe("/sign-in?done=joined");
    await withDb(async (db) => {
      const [m] = await db
        .select()
        .from(memberships)
        .where(and(eq(memberships.userId, person.id), eq(memberships.tenantId, t.tenantId)));
      expect(m?.role).toBe("owner");
    });
  });

  it("an expired link is refused", async () => {
    const { t, b } = await tenantWithOwner();
    const email = uniqueEmail("late");
    await invite(b, t.tenantId, email);
    const link = linkIn(await mailTo(INBOX, email, /invited/), "/invitations/accept");
    await withDb((db) =>
      db
        .update(accountLinks)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(accountLinks.email, email)),
    );
    expect((await new Browser().get(link.slice(BASE.length))).status).toBe(410);
    const b2 = new Browser();
    const res = await b2.post("/invitations/accept", { token: tokenOf(link), password: "a-long-password" });
    expect(res.status).toBe(410);
    await withDb(async (db) => {
      expect(await db.select().from(users).where(eq(users.email, email))).toEqual([]);
    });
  });

  it("resend mails a new link and kills the old one; revoke kills it too", async () => {
    const { t, b } = await tenantWithOwner();
    const email = uniqueEmail("resend");
    await invite(b, t.tenantId, email);
    const first = linkIn(await mailTo(INBOX, email, /invited/), "/invitations/accept");
    const [row] = await withDb((db) => db.select().from(accountLinks).where(eq(accountLinks.email, email)));
    const resent = await b.submit(
      membersPath(t.tenantId),
      {},
      `/settings/studios/${t.tenantId}/invitations/${row?.id}/resend`,
    );
    expect(resent.headers.get("location")).toBe(`${membersPath(t.tenantId)}?done=resent`);
    const [newest] = await atLeast(INBOX, email, 2);
    const second = linkIn(newest ?? { subject: "", text: "" }, "/invitations/accept");
    expect(second).not.toBe(first);
    expect((await new Browser().get(first.slice(BASE.length))).status).toBe(410);
    expect((await new Browser().get(second.slice(BASE.length))).status).toBe(200);
    await b.submit(
      membersPath(t.tenantId),
      {},
      `/settings/studios/${t.tenantId}/invitations/${row?.id}/revoke`,
    );
    expect((await new Browser().get(second.slice(BASE.length))).status).toBe(410);
  });

  it("a member invites members but not owners", async () => {
    const { t } = await tenantWithOwner();
    const member = await seedUser(t.tenantId, "member");
    const mb = await signedIn(member.email, member.password);
    const email = uniqueEmail("owner-wannabe");
    const refused = await invite(mb, t.tenantId, email, "owner");
    expect(refused.status).toBe(403);
    expect(await mailsTo(INBOX, email)).toEqual([]);
    expect((await invite(mb, t.tenantId, uniqueEmail("peer"))).status).toBe(303);
  });

  it("a studio sends a bounded number of invitation mails per hour", async () => {
    const { t, b } = await tenantWithOwner();
    const bucket = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(buckets.mailTenant(t.tenantId)));
    expect((await bucket.chargeWindow(1000, 3600, INVITATIONS_PER_TENANT_PER_HOUR)).allowed).toBe(true);
    const email = uniqueEmail("flood");
    const res = await invite(b, t.tenantId, email);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await mailsTo(INBOX, email)).toEqual([]);
    expect(await withDb((db) => db.select().from(accountLinks).where(eq(accountLinks.email, email)))).toEqual(
      [],
    );
  });

  it("a mail that cannot be sent keeps the invitation, says so, and can be resent", async () => {
    const { t, b } = await tenantWithOwner();
    const email = uniqueEmail("bounce");
    const page = await (await b.get(membersPath(t.tenantId))).text();
    // The Worker's own handler with SMTP pointed at a closed port; everything else is real.
    const headers = new Headers({
      "Content-Type": "application/x-www-form-urlencoded",
      Origin: BASE,
      "CF-Connecting-IP": b.ip,
      Cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
    });
    const ctx = createExecutionContext();
    const res = await api.fetch(
      new Request(`${BASE}/settings/studios/${t.tenantId}/invitations`, {
        method: "POST",
        headers,
        body: new URLSearchParams({ csrf: csrfOf(page), email, role: "member" }).toString(),
        redirect: "manual",
      }) as Request<unknown, IncomingRequestCfProperties>,
      { ...env, SMTP_PORT: "1" } as Env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${membersPath(t.tenantId)}?done=invite-mail-failed`);
    const after = await (await b.get(`${membersPath(t.tenantId)}?done=invite-mail-failed`)).text();
    expect(after).toContain("its mail could not be sent");
    expect(after).toContain("Mail failed");
    const [row] = await withDb((db) => db.select().from(accountLinks).where(eq(accountLinks.email, email)));
    expect(row?.mailStatus).toBe("failed");
    await b.submit(
      membersPath(t.tenantId),
      {},
      `/settings/studios/${t.tenantId}/invitations/${row?.id}/resend`,
    );
    const link = linkIn(await mailTo(INBOX, email, /invited/), "/invitations/accept");
    expect((await new Browser().get(link.slice(BASE.length))).status).toBe(200);
  });
});

describe("members and roles", () => {
  it("lists name, email, role, joined and last sign-in; an owner changes roles but never the last owner", async () => {
    const { t, owner, b } = await tenantWithOwner();
    const member = await seedUser(t.tenantId, "member");
    const page = await (await b.get(membersPath(t.tenantId))).text();
    expect(page).toContain(member.email);
    expect(page).toContain("Last sign-in");
    const last = await b.submit(
      membersPath(t.tenantId),
      { role: "member" },
      `${membersPath(t.tenantId)}/${owner.id}/role`,
    );
    expect(last.status).toBe(409);
    expect(await last.text()).toContain("A studio keeps at least one owner");
    const promoted = await b.submit(
      membersPath(t.tenantId),
      { role: "owner" },
      `${membersPath(t.tenantId)}/${member.id}/role`,
    );
    expect(promoted.status).toBe(303);
    // Now the first owner may step down.
    expect(
      (
        await b.submit(
          membersPath(t.tenantId),
          { role: "member" },
          `${membersPath(t.tenantId)}/${owner.id}/role`,
        )
      ).status,
    ).toBe(303);
    const roles = await withDb((db) =>
      db
        .select({ userId: memberships.userId, role: memberships.role })
        .from(memberships)
        .where(eq(memberships.tenantId, t.tenantId)),
    );
    expect(Object.fromEntries(roles.map((r) => [r.userId, r.role]))).toEqual({
      [owner.id]: "member",
      [member.id]: "owner",
    });
  });

  it("a member changes no roles and removes no one", async () => {
    const { t, owner } = await tenantWithOwner();
    const member = await seedUser(t.tenantId, "member");
    const mb = await signedIn(member.email, member.password);
    const path = membersPath(t.tenantId);
    expect((await mb.submit(path, { role: "member" }, `${path}/${owner.id}/role`)).status).toBe(403);
    expect((await mb.submit(path, {}, `${path}/${owner.id}/remove`)).status).toBe(403);
  });

  it("removal cuts every path from the next request: pages, the Web API with the session, the OAuth token and its refresh", async () => {
    const { t, b } = await tenantWithOwner();
    const member = await seedUser(t.tenantId, "member");
    const mb = await signedIn(member.email, member.password);
    const tokens = await cliLogin(mb, t.tenantId);
    const projectPath = `/projects/${t.projectId}/overview`;
    expect((await mb.get(projectPath)).status).toBe(200);
    const status = `/api/v1/projects/${t.projectId}/status`;
    expect((await mb.get(status)).status).toBe(200);
    expect(
      (await apiRequest(`/v1/projects/${t.projectId}/status`, { token: tokens.access_token })).status,
    ).toBe(200);

    const path = membersPath(t.tenantId);
    const removed = await b.submit(path, {}, `${path}/${member.id}/remove`);
    expect(removed.headers.get("location")).toBe(`${path}?done=removed`);

    expect((await mb.get(projectPath)).status).toBe(404);
    expect((await mb.get(status)).status).toBe(404);
    expect((await mb.get(path)).status).toBe(404);
    expect(
      (await apiRequest(`/v1/projects/${t.projectId}/status`, { token: tokens.access_token })).status,
    ).toBe(401);
    const { res, body } = await refresh(tokens.refresh_token);
    expect(res.status).toBe(400);
    expect(body.error).toBe("invalid_grant");
    const grants = await withDb((db) =>
      db.select().from(oauthGrants).where(eq(oauthGrants.userId, member.id)),
    );
    expect(grants.every((g) => g.revokedAt !== null)).toBe(true);
  });

  it("the last owner cannot be removed", async () => {
    const { t, owner, b } = await tenantWithOwner();
    const path = membersPath(t.tenantId);
    expect((await b.submit(path, {}, `${path}/${owner.id}/remove`)).status).toBe(409);
  });
});

describe("passwords", () => {
  it("change needs the current password and ends the user's other sessions, not this one", async () => {
    const { t } = await tenantWithOwner();
    const user = await seedUser(t.tenantId, "member");
    const here = await signedIn(user.email, user.password);
    const there = await signedIn(user.email, user.password);
    const wrong = await here.submit(
      "/settings/account",
      { current: "not-it", next: "a-new-password" },
      "/settings/account/password",
    );
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("Current password");
    const ok = await here.submit(
      "/settings/account",
      { current: user.password, next: "a-new-password" },
      "/settings/account/password",
    );
    expect(ok.headers.get("location")).toBe("/settings/account?done=password");
    expect((await here.get("/settings/account")).status).toBe(200);
    expect((await there.get("/settings/account")).status).toBe(307);
    expect((await new Browser().signIn(user.email, user.password)).status).toBe(401);
    expect((await new Browser().signIn(user.email, "a-new-password")).status).toBe(303);
  });

  it("reset by mail: single use, ends every session and grant, the old password is refused", async () => {
    const { t } = await tenantWithOwner();
    const user = await seedUser(t.tenantId, "member");
    const session = await signedIn(user.email, user.password);
    const tokens = await cliLogin(session, t.tenantId);
    const asked = await new Browser().submit("/password-reset", { email: user.email });
    expect(asked.status).toBe(200);
    const link = linkIn(await mailTo(INBOX, user.email, /Reset your/), "/password-reset/confirm");
    const token = tokenOf(link);
    await withDb(async (db) => {
      const [row] = await db
        .select()
        .from(accountLinks)
        .where(eq(accountLinks.tokenHash, await sha256Hex(token)));
      expect(row?.purpose).toBe("reset");
      expect(row?.expiresAt.getTime()).toBe((row?.createdAt.getTime() ?? 0) + 3600 * 1000);
    });
    const b = new Browser();
    const res = await b.submit(
      link.slice(BASE.length),
      { token, password: "brand-new-password" },
      "/password-reset/confirm",
    );
    expect(res.headers.get("location")).toBe("/sign-in?done=reset");
    expect((await session.get("/")).status).toBe(307);
    expect(
      (await apiRequest(`/v1/projects/${t.projectId}/status`, { token: tokens.access_token })).status,
    ).toBe(401);
    expect((await refresh(tokens.refresh_token)).body.error).toBe("invalid_grant");
    expect((await new Browser().signIn(user.email, user.password)).status).toBe(401);
    expect((await new Browser().signIn(user.email, "brand-new-password")).status).toBe(303);
    // Single use.
    expect(
      (await new Browser().post("/password-reset/confirm", { token, password: "third-password" })).status,
    ).toBe(410);
  });

  it("an expired reset link is refused", async () => {
    const { t } = await tenantWithOwner();
    const user = await seedUser(t.tenantId, "member");
    const { token } = await withDb((db) =>
      createLink(
        db,
        { purpose: "reset", email: user.email, userId: user.id },
        new Date(Date.now() - 3601 * 1000),
      ),
    );
    const b = new Browser();
    expect((await b.get(`/password-reset/confirm?token=${token}`)).status).toBe(410);
    expect((await b.post("/password-reset/confirm", { token, password: "brand-new-password" })).status).toBe(
      410,
    );
  });

  it("an unknown email gets the same answer, and a mail saying there is no account", async () => {
    const known = await (async () => {
      const { t } = await tenantWithOwner();
      return seedUser(t.tenantId, "member");
    })();
    const ghost = uniqueEmail("ghost");
    const a = await new Browser().submit("/password-reset", { email: known.email });
    const g = await new Browser().submit("/password-reset", { email: ghost });
    expect(a.status).toBe(g.status);
    const strip = (html: string, email: string) =>
      html.replaceAll(email, "EMAIL").replace(/value="[^"]*"/g, "");
    expect(strip(await a.text(), known.email)).toBe(strip(await g.text(), ghost));
    expect((await mailTo(INBOX, ghost, /Reset your/)).text).toContain("has no account");
    await withDb(async (db) => {
      expect(await db.select().from(accountLinks).where(eq(accountLinks.email, ghost))).toEqual([]);
    });
  });
});

describe("sign-up", () => {
  it("verification mail → studio on the free plan with its owner and a first project, signed in; unverified cannot sign in", async () => {
    const email = uniqueEmail("founder");
    const b = new Browser();
    const res = await b.submit("/sign-up", { email, password: "founder-password", studio: "Founder Games" });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("Check your email");
    expect((await new Browser().signIn(email, "founder-password")).status).toBe(401);
    const link = linkIn(await mailTo(INBOX, email, /Confirm your email/), "/sign-up/verify");
    const token = tokenOf(link);
    await withDb(async (db) => {
      const [row] = await db
        .select()
        .from(accountLinks)
        .where(eq(accountLinks.tokenHash, await sha256Hex(token)));
      expect(row?.passwordHash).toMatch(/^\$scrypt\$/);
    });
    const verified = await b.submit(link.slice(BASE.length), { token }, "/sign-up/verify");
    expect(verified.status).toBe(303);
    const home = await (await b.get("/")).text();
    expect(home).toContain("Founder Games");
    expect(home).toContain("My first game");
    await withDb(async (db) => {
      const [user] = await db.select().from(users).where(eq(users.email, email));
      const [m] = await db
        .select()
        .from(memberships)
        .where(eq(memberships.userId, user?.id ?? ""));
      expect(m?.role).toBe("owner");
      const [tenant] = await db
        .select()
        .from(tenants)
        .where(eq(tenants.id, m?.tenantId ?? ""));
      expect(tenant?.planId).toBe("free");
      const ps = await db
        .select()
        .from(projects)
        .where(eq(projects.tenantId, m?.tenantId ?? ""));
      expect(ps.map((p) => p.name)).toEqual(["My first game"]);
      const [link] = await db
        .select()
        .from(accountLinks)
        .where(eq(accountLinks.tokenHash, await sha256Hex(token)));
      expect(link?.passwordHash).toBeNull();
    });
    expect((await new Browser().post("/sign-up/verify", { token })).status).toBe(410);
    expect((await new Browser().signIn(email, "founder-password")).status).toBe(303);
  });

  it("an email already in use gets the same answer and a mail, never a second account", async () => {
    const { t } = await tenantWithOwner();
    const user = await seedUser(t.tenantId, "member");
    const fresh = uniqueEmail("fresh");
    const a = await new Browser().submit("/sign-up", {
      email: user.email,
      password: "whatever-password",
      studio: "",
    });
    const f = await new Browser().submit("/sign-up", {
      email: fresh,
      password: "whatever-password",
      studio: "",
    });
    expect(a.status).toBe(f.status);
    const strip = (html: string, email: string) =>
      html.replaceAll(email, "EMAIL").replace(/value="[^"]*"/g, "");
    expect(strip(await a.text(), user.email)).toBe(strip(await f.text(), fresh));
    expect((await mailTo(INBOX, user.email, /Signing up/)).text).toContain("already has an account");
  });

  it("bad input is a 400 naming the field, and nothing is sent", async () => {
    const email = uniqueEmail("short");
    const res = await new Browser().submit("/sign-up", { email, password: "short", studio: "" });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("Password must be at least 8 characters.");
    expect(await mailsTo(INBOX, email)).toEqual([]);
  });
});

describe("account page", () => {
  it("sets the name; deleting is refused for the last owner and otherwise ends sessions and grants", async () => {
    const { t, owner, b } = await tenantWithOwner();
    await b.submit("/settings/account", { name: "Producer Pat" }, "/settings/account/name");
    expect(await (await b.get(membersPath(t.tenantId))).text()).toContain("Producer Pat");
    const refused = await b.submit(
      "/settings/account",
      { password: owner.password },
      "/settings/account/delete",
    );
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("last owner");

    const member = await seedUser(t.tenantId, "member");
    const mb = await signedIn(member.email, member.password);
    const tokens = await cliLogin(mb, t.tenantId);
    const gone = await mb.submit(
      "/settings/account",
      { password: member.password },
      "/settings/account/delete",
    );
    expect(gone.headers.get("location")).toBe("/sign-in");
    expect(
      (await apiRequest(`/v1/projects/${t.projectId}/status`, { token: tokens.access_token })).status,
    ).toBe(401);
    await withDb(async (db) => {
      expect(await db.select().from(users).where(eq(users.id, member.id))).toEqual([]);
      expect(await db.select().from(sessions).where(eq(sessions.userId, member.id))).toEqual([]);
    });
  });
});
