import { and, eq } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { accountLinks, apiKeys, memberships, sessions, users } from "../../schema/pg/schema.js";
import { createLink } from "../../workers/api/accounts/links.js";
import { createKey } from "../../workers/api/bootstrap.js";
import { SESSION_LAST_SEEN_RESOLUTION_MS } from "../../workers/api/credentials/sessions.js";
import { auditEntries, onlyAuditEntry } from "../support/audit.js";
import { Browser, csrfOf, seedUser, unescapeHtml } from "../support/browser.js";
import { BASE, seedTenant, withDb } from "../support/harness.js";
import { api } from "../support/http.js";
import { mailsTo, mailTo } from "../support/mail.js";
import { waitFor } from "../support/wait.js";

// Issue 32 items 2-4: keys with owners (creator, removal revoking the ticked keys), sessions (the list,
// ending one, all others, a member's by an owner, last seen, the password mails) and invitations (the
// role's default, the signed-in-as-someone-else confirmation).

const INBOX = inject("inboxUrl");
const CHROME_WINDOWS =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const FIREFOX_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";

const keysPath = (projectId: string) => `/settings/projects/${projectId}/api-keys`;
const membersPath = (tenantId: string) => `/settings/studios/${tenantId}/members`;

/** Signs a new browser in, sending `userAgent` as a real browser would. */
async function signedIn(user: { email: string; password: string }, userAgent = CHROME_WINDOWS, ip?: string) {
  const b = new Browser(ip);
  const page = await b.get("/sign-in");
  const res = await b.post(
    "/sign-in",
    { csrf: csrfOf(await page.text()), email: user.email, password: user.password, returnTo: "/" },
    { "User-Agent": userAgent },
  );
  expect(res.status).toBe(303);
  return b;
}

/** Creates a key on the API Keys page as `b` and returns its secret and id. */
async function createOnPage(b: Browser, projectId: string, name: string, preset = "read") {
  const res = await b.submit(keysPath(projectId), { name, preset });
  expect(res.status).toBe(303);
  const html = await (await b.get(keysPath(projectId))).text();
  const secret = unescapeHtml(/id="new-key" class="secret" readonly value="([^"]+)"/.exec(html)?.[1] ?? "");
  expect(secret).toMatch(/^gta_/);
  const [row] = await withDb((db) =>
    db
      .select()
      .from(apiKeys)
      .where(eq(apiKeys.prefix, secret.slice(0, 10))),
  );
  return { secret, id: row?.id ?? "" };
}

/** The cells of the API Keys page's row of the key named `name`. */
function rowOf(html: string, name: string): string {
  const row = html.split("<tr>").find((r) => r.includes(`<td>${name}</td>`));
  if (!row) {
    throw new Error(`no row for ${name}`);
  }
  return row;
}

describe("keys with owners", () => {
  it("a key made on the page records its creator; the page shows creator, created and last used; older keys say unknown", async () => {
    const t = await seedTenant("pro", "Owners Studio");
    const owner = await seedUser(t.tenantId, "owner");
    const b = await signedIn(owner);
    const made = await createOnPage(b, t.projectId, "Build server");
    await withDb(async (db) => {
      const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, made.id));
      expect(row?.createdByType).toBe("user");
      expect(row?.createdByUserId).toBe(owner.id);
      await db.update(users).set({ name: "Olga Owner" }).where(eq(users.id, owner.id));
      await createKey(db, t.projectId, "ingest", "From the CLI", { type: "operator" });
    });
    expect((await api("/v1/projects", { key: made.secret })).status).toBe(200);
    await waitFor(
      async () => (await withDb((db) => db.select().from(apiKeys).where(eq(apiKeys.id, made.id))))[0],
      (r) => r?.lastUsedAt != null,
      { timeoutMs: 15_000, message: "the key's lastUsedAt" },
    );
    const html = await (await b.get(keysPath(t.projectId))).text();
    expect(html).toContain('<th scope="col">Created by</th>');
    const mine = rowOf(html, "Build server");
    expect(mine).toContain(`<td>Olga Owner (${owner.email})</td>`);
    expect(mine.match(/<time datetime=/g)?.length).toBe(2);
    expect(rowOf(html, "From the CLI")).toContain("<td>operator (admin CLI)</td>");
    // The harness's keys are made without a creator, as every key before this change.
    const [unknownRow] = html.split("<tr>").filter((r) => r.includes(`${t.keys.full.key.slice(0, 10)}…`));
    expect(unknownRow).toContain("<td>unknown</td>");
  });

  it("removing a member lists the keys they created, all ticked; the ticked ones are revoked with the removal, the unticked keep working", async () => {
    const t = await seedTenant("pro", "Removal Studio");
    const owner = await seedUser(t.tenantId, "owner");
    const member = await seedUser(t.tenantId, "member");
    const colleague = await seedUser(t.tenantId, "member");
    const ob = await signedIn(owner);
    const mb = await signedIn(member);
    const cb = await signedIn(colleague);
    const first = await createOnPage(mb, t.projectId, "Leaver read");
    const second = await createOnPage(mb, t.siblingProjectId, "Leaver ingest", "ingest");
    const kept = await createOnPage(mb, t.projectId, "Leaver kept", "readwrite");
    const theirs = await createOnPage(cb, t.projectId, "Colleague key");
    const gone = await createOnPage(mb, t.projectId, "Already revoked");
    await withDb((db) => db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, gone.id)));

    const confirmPath = `${membersPath(t.tenantId)}/${member.id}/remove`;
    const page = await ob.get(confirmPath);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`Remove ${member.email}?`);
    for (const k of [first, second, kept]) {
      expect(html).toContain(`name="revoke:${k.id}" checked`);
    }
    expect(html).not.toContain(theirs.id);
    expect(html).not.toContain(gone.id);
    // Nothing changed by looking.
    await withDb(async (db) => {
      expect(await db.select().from(memberships).where(eq(memberships.userId, member.id))).toHaveLength(1);
    });

    // The owner unticks one key and confirms.
    const res = await ob.post(confirmPath, {
      csrf: csrfOf(html),
      [`revoke:${first.id}`]: "on",
      [`revoke:${second.id}`]: "on",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${membersPath(t.tenantId)}?done=removed-keys`);
    expect((await api("/v1/projects", { key: first.secret })).status).toBe(401);
    expect((await api("/v1/whoami", { key: second.secret })).status).toBe(401);
    expect((await api("/v1/projects", { key: kept.secret })).status).toBe(200);
    expect((await api("/v1/projects", { key: theirs.secret })).status).toBe(200);
    await withDb(async (db) => {
      expect(await db.select().from(memberships).where(eq(memberships.userId, member.id))).toEqual([]);
    });
    expect((await ob.get(`${membersPath(t.tenantId)}?done=removed-keys`)).status).toBe(200);
    // Audit: the removal, and one key.revoked per revoked key, by the owner; none for the unticked key.
    const removal = await onlyAuditEntry(t.tenantId, "member.removed");
    expect(removal).toMatchObject({ actorType: "user", actorId: owner.id, targetId: member.id });
    const revokedEntries = (await auditEntries(t.tenantId, "key.revoked")).filter(
      (e) => e.detail.reason === "member_removed",
    );
    expect(revokedEntries.map((e) => e.targetId).sort()).toEqual([first.id, second.id].sort());
    for (const e of revokedEntries) {
      expect(e).toMatchObject({ actorId: owner.id, outcome: "success", detail: { creator: member.email } });
    }
    expect(revokedEntries.find((e) => e.targetId === second.id)?.projectId).toBe(t.siblingProjectId);
  });

  it("a ticked key that is not the member's (another's, another studio's, malformed) refuses the whole removal: 400, nothing changed", async () => {
    const t = await seedTenant("pro", "Refusal Studio");
    const other = await seedTenant("pro", "Refusal Neighbour");
    const owner = await seedUser(t.tenantId, "owner");
    const member = await seedUser(t.tenantId, "member");
    const ob = await signedIn(owner);
    const mine = await createOnPage(await signedIn(member), t.projectId, "Member key");
    const path = `${membersPath(t.tenantId)}/${member.id}/remove`;
    for (const foreign of [t.keys.full.id, other.keys.read.id, "not-a-uuid"]) {
      const html = await (await ob.get(path)).text();
      const res = await ob.post(path, {
        csrf: csrfOf(html),
        [`revoke:${mine.id}`]: "on",
        [`revoke:${foreign}`]: "on",
      });
      expect(res.status, foreign).toBe(400);
      expect(await res.text()).toContain("only keys this member created in this studio");
    }
    await withDb(async (db) => {
      expect(await db.select().from(memberships).where(eq(memberships.userId, member.id))).toHaveLength(1);
      const [key] = await db.select().from(apiKeys).where(eq(apiKeys.id, mine.id));
      expect(key?.revokedAt).toBeNull();
    });
    expect((await api("/v1/projects", { key: other.keys.read.key })).status).toBe(200);
    expect((await api("/v1/projects", { key: t.keys.full.key })).status).toBe(200);
    expect(await auditEntries(t.tenantId, "member.removed")).toEqual([]);
  });

  it("a member sees no removal page for someone else (403); the members page's Remove asks first", async () => {
    const t = await seedTenant("pro", "Ask Studio");
    const owner = await seedUser(t.tenantId, "owner");
    const member = await seedUser(t.tenantId, "member");
    const mb = await signedIn(member);
    expect((await mb.get(`${membersPath(t.tenantId)}/${owner.id}/remove`)).status).toBe(403);
    const html = await (await (await signedIn(owner)).get(membersPath(t.tenantId))).text();
    expect(html).toContain(`<form method="get" action="${membersPath(t.tenantId)}/${member.id}/remove"`);
  });
});

describe("sessions", () => {
  it("the Account page lists the live sessions with browser, IP, signed in and last seen; ending one signs that browser out on its next request", async () => {
    const t = await seedTenant("pro", "Sessions Studio");
    const user = await seedUser(t.tenantId, "owner");
    const here = await signedIn(user, CHROME_WINDOWS, "203.0.113.7");
    const there = await signedIn(user, FIREFOX_LINUX, "203.0.113.8");
    const html = await (await here.get("/settings/account")).text();
    expect(html).toContain("Chrome on Windows <strong>(this browser)</strong>");
    expect(html).toContain("Firefox on Linux");
    expect(html).toContain("<td>203.0.113.7</td>");
    expect(html).toContain("<td>203.0.113.8</td>");
    const live = await withDb((db) => db.select().from(sessions).where(eq(sessions.userId, user.id)));
    const thereId = live.find((s) => s.ip === "203.0.113.8")?.id ?? "";
    expect(html).toContain(`/settings/account/sessions/${thereId}/end`);

    // Someone else cannot end it: 404, it lives on.
    const stranger = await signedIn(await seedUser(t.tenantId, "member"));
    const strangerPage = await (await stranger.get("/settings/account")).text();
    const refused = await stranger.post(`/settings/account/sessions/${thereId}/end`, {
      csrf: csrfOf(strangerPage),
    });
    expect(refused.status).toBe(404);
    expect((await there.get("/settings/account")).status).toBe(200);

    const ended = await here.post(`/settings/account/sessions/${thereId}/end`, { csrf: csrfOf(html) });
    expect(ended.status).toBe(303);
    expect(ended.headers.get("location")).toBe("/settings/account?done=session-ended");
    const next = await there.get("/settings/account");
    expect(next.status).toBe(307);
    expect(next.headers.get("location")).toMatch(/^\/sign-in/);
    expect((await here.get("/settings/account")).status).toBe(200);
    const entry = await onlyAuditEntry(t.tenantId, "session.ended");
    expect(entry).toMatchObject({
      actorType: "user",
      actorId: user.id,
      targetType: "session",
      targetId: thereId,
      outcome: "success",
      detail: { how: "ended_from_list", thisBrowser: false },
    });
  });

  it("end all other sessions keeps this one", async () => {
    const t = await seedTenant("pro", "Others Studio");
    const user = await seedUser(t.tenantId, "owner");
    const here = await signedIn(user);
    const a = await signedIn(user, FIREFOX_LINUX);
    const b = await signedIn(user, FIREFOX_LINUX);
    const res = await here.submit("/settings/account", {}, "/settings/account/sessions/end-others");
    expect(res.headers.get("location")).toBe("/settings/account?done=others-ended");
    expect((await a.get("/settings/account")).status).toBe(307);
    expect((await b.get("/")).status).toBe(307);
    const page = await (await here.get("/settings/account")).text();
    expect(page).not.toContain("End all other sessions");
    expect(page).toContain("(this browser)");
    const entry = await onlyAuditEntry(t.tenantId, "session.ended");
    expect(entry).toMatchObject({ actorId: user.id, detail: { how: "ended_others", count: 2 } });
  });

  it("last seen is written at most once per resolution window, after the response", async () => {
    const t = await seedTenant("pro", "Seen Studio");
    const user = await seedUser(t.tenantId, "owner");
    const b = await signedIn(user);
    const [row] = await withDb((db) => db.select().from(sessions).where(eq(sessions.userId, user.id)));
    const start = row?.lastSeenAt?.getTime() ?? 0;
    expect(start).toBeGreaterThan(0);
    const seenAt = async () =>
      (
        await withDb((db) =>
          db
            .select()
            .from(sessions)
            .where(eq(sessions.id, row?.id ?? "")),
        )
      )[0]?.lastSeenAt;
    // Within the window: nothing written (a later request past the window is the barrier).
    const soon = start + SESSION_LAST_SEEN_RESOLUTION_MS - 60_000;
    expect((await b.fetch("/", { headers: { "X-Test-Now": String(soon) } })).status).toBe(200);
    const later = start + SESSION_LAST_SEEN_RESOLUTION_MS + 60_000;
    expect((await b.fetch("/", { headers: { "X-Test-Now": String(later) } })).status).toBe(200);
    const written = await waitFor(seenAt, (d) => d?.getTime() !== start, {
      timeoutMs: 15_000,
      message: "the session's last seen",
    });
    expect(written?.getTime()).toBe(later);
  });

  it("an owner ends every session of a member; a member may not, and the owner keeps their own", async () => {
    const t = await seedTenant("pro", "End Studio");
    const owner = await seedUser(t.tenantId, "owner");
    const member = await seedUser(t.tenantId, "member");
    const ob = await signedIn(owner);
    const m1 = await signedIn(member);
    const m2 = await signedIn(member, FIREFOX_LINUX);
    const path = `${membersPath(t.tenantId)}/${member.id}/sessions/end`;
    const ownerPath = `${membersPath(t.tenantId)}/${owner.id}/sessions/end`;
    expect((await m1.submit(membersPath(t.tenantId), {}, ownerPath)).status).toBe(403);
    expect((await ob.get("/")).status).toBe(200);
    const denied = await onlyAuditEntry(t.tenantId, "session.ended");
    expect(denied).toMatchObject({ actorId: member.id, targetId: owner.id, outcome: "denied" });
    const res = await ob.submit(membersPath(t.tenantId), {}, path);
    expect(res.headers.get("location")).toBe(`${membersPath(t.tenantId)}?done=sessions-ended`);
    const ended = (await auditEntries(t.tenantId, "session.ended")).filter((e) => e.outcome === "success");
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({
      actorId: owner.id,
      targetId: member.id,
      detail: { how: "ended_by_owner", count: 2 },
    });
    expect((await m1.get("/")).status).toBe(307);
    expect((await m2.get("/")).status).toBe(307);
    expect((await ob.get("/")).status).toBe(200);
    // The owner naming themselves keeps this session.
    const other = await signedIn(owner, FIREFOX_LINUX);
    await ob.submit(membersPath(t.tenantId), {}, ownerPath);
    expect((await other.get("/")).status).toBe(307);
    expect((await ob.get("/")).status).toBe(200);
    // Still a member: only signed out.
    await withDb(async (db) => {
      expect(await db.select().from(memberships).where(eq(memberships.userId, member.id))).toHaveLength(1);
    });
  });
});

/** A mail must carry no credential and no link that opens anything: only the reset request page. */
function expectNoSecret(text: string) {
  expect(text).not.toMatch(/gt[slrcat]_[A-Za-z0-9_-]{10,}/);
  expect(text).not.toContain("token=");
  const links = (text.match(/https?:\/\/[^\s)]+/g) ?? []).map((l) => l.replace(/[.,]$/, ""));
  expect(links).toEqual([`${BASE}/password-reset`]);
}

describe("password mails", () => {
  it("a password change mails the account: when, from where, no secret, no link that grants access", async () => {
    const t = await seedTenant("pro", "Mail Studio");
    const user = await seedUser(t.tenantId, "owner");
    const b = await signedIn(user, CHROME_WINDOWS, "203.0.113.20");
    const page = await (await b.get("/settings/account")).text();
    const res = await b.post(
      "/settings/account/password",
      { csrf: csrfOf(page), current: user.password, next: "a-brand-new-password" },
      { "User-Agent": CHROME_WINDOWS },
    );
    expect(res.status).toBe(303);
    const mail = await mailTo(INBOX, user.email, /password was changed/);
    expect(mail.text).toContain("from 203.0.113.20 (Chrome on Windows)");
    expect(mail.text).not.toContain("a-brand-new-password");
    expect(mail.text).not.toContain(user.password);
    expectNoSecret(mail.text);
  });

  it("a wrong current password sends nothing", async () => {
    const t = await seedTenant("pro", "Mail Studio 2");
    const user = await seedUser(t.tenantId, "owner");
    const b = await signedIn(user);
    const res = await b.submit(
      "/settings/account",
      { current: "not-the-password", next: "a-brand-new-password" },
      "/settings/account/password",
    );
    expect(res.status).toBe(400);
    // A change that does succeed afterwards is the barrier: its mail is the only one.
    await b.submit(
      "/settings/account",
      { current: user.password, next: "another-new-password" },
      "/settings/account/password",
    );
    await mailTo(INBOX, user.email, /password was changed/);
    expect((await mailsTo(INBOX, user.email)).filter((m) => /password was/.test(m.subject))).toHaveLength(1);
  });

  it("a completed reset mails the account that it was reset, without the reset link", async () => {
    const t = await seedTenant("pro", "Reset Mail Studio");
    const user = await seedUser(t.tenantId, "owner");
    const { token } = await withDb((db) =>
      createLink(db, { purpose: "reset", email: user.email, userId: user.id }),
    );
    const b = new Browser("203.0.113.21");
    const res = await b.submit(
      `/password-reset/confirm?token=${token}`,
      { token, password: "a-reset-password" },
      "/password-reset/confirm",
    );
    expect(res.status).toBe(303);
    const mail = await mailTo(INBOX, user.email, /password was reset/);
    expect(mail.text).toContain("from 203.0.113.21");
    expect(mail.text).not.toContain(token);
    expectNoSecret(mail.text);
  });
});

describe("invitations", () => {
  it("the role select starts at Member, for owners too", async () => {
    const t = await seedTenant("pro", "Default Studio");
    const owner = await seedUser(t.tenantId, "owner");
    const html = await (await (await signedIn(owner)).get(membersPath(t.tenantId))).text();
    const select = /<select id="invite-role" name="role">([\s\S]*?)<\/select>/.exec(html)?.[1] ?? "";
    expect(select).toMatch(/<option value="member" selected>Member<\/option>/);
    expect(select).toMatch(/<option value="owner" >Owner<\/option>/);
    expect(select.indexOf("member")).toBeLessThan(select.indexOf("owner"));
  });

  it("opened while signed in as someone else: says who is who, changes nothing until confirmed, then switches", async () => {
    const t = await seedTenant("pro", "Switch Studio");
    const alice = await seedUser(t.tenantId, "owner");
    const email = `newcomer-${crypto.randomUUID().slice(0, 8)}@owners.test`;
    const { id, token } = await withDb((db) =>
      createLink(db, { purpose: "invitation", email, tenantId: t.tenantId, role: "member" }),
    );
    const b = await signedIn(alice);
    const page = await b.get(`/invitations/accept?token=${token}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`You are signed in as <strong>${alice.email}</strong>`);
    expect(html).toContain(`this invitation is for <strong>${email}</strong>`);
    expect(html).toContain(`name="signedInAs" value="${alice.id}"`);
    // Posted without the confirmation (a form from before the sign-in, a forged one): nothing changes.
    const unconfirmed = await b.post("/invitations/accept", {
      csrf: csrfOf(html),
      token,
      password: "a-long-password",
    });
    expect(unconfirmed.status).toBe(409);
    expect(await unconfirmed.text()).toContain(`You are signed in as <strong>${alice.email}</strong>`);
    await withDb(async (db) => {
      const [link] = await db.select().from(accountLinks).where(eq(accountLinks.id, id));
      expect(link?.usedAt).toBeNull();
      expect(await db.select().from(users).where(eq(users.email, email))).toEqual([]);
    });
    expect((await b.get("/settings/account")).status).toBe(200);
    const aliceSession = b.cookies.get("gt_session");

    const confirmed = await b.post("/invitations/accept", {
      csrf: csrfOf(html),
      token,
      password: "a-long-password",
      signedInAs: alice.id,
    });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get("location")).toBe("/");
    const account = await (await b.get("/settings/account")).text();
    expect(account).toContain(`Signed in as <strong>${email}</strong>`);
    const stale = new Browser();
    stale.cookies.set("gt_session", aliceSession ?? "");
    expect((await stale.get("/")).status).toBe(307);
  });

  it("an existing invitee while someone else is signed in: confirmed, they join and the other is signed out", async () => {
    const t = await seedTenant("pro", "Join Studio");
    const elsewhere = await seedTenant("pro", "Join Elsewhere");
    const alice = await seedUser(t.tenantId, "owner");
    const bob = await seedUser(elsewhere.tenantId, "owner");
    const { token } = await withDb((db) =>
      createLink(db, { purpose: "invitation", email: bob.email, tenantId: t.tenantId, role: "member" }),
    );
    const b = await signedIn(alice);
    const html = await (await b.get(`/invitations/accept?token=${token}`)).text();
    expect(html).toContain(`signs ${alice.email} out of this browser`);
    const refused = await b.post("/invitations/accept", { csrf: csrfOf(html), token, signedInAs: bob.id });
    expect(refused.status).toBe(409);
    const joined = async () =>
      withDb((db) =>
        db
          .select()
          .from(memberships)
          .where(and(eq(memberships.userId, bob.id), eq(memberships.tenantId, t.tenantId))),
      );
    expect(await joined()).toEqual([]);
    const res = await b.post("/invitations/accept", { csrf: csrfOf(html), token, signedInAs: alice.id });
    expect(res.headers.get("location")).toBe("/sign-in?done=joined");
    expect((await joined()).map((m) => m.role)).toEqual(["member"]);
    expect((await b.get("/")).status).toBe(307);
  });

  it("signed in as the invitee, or signed out, nothing is asked", async () => {
    const t = await seedTenant("pro", "Plain Studio");
    const email = `plain-${crypto.randomUUID().slice(0, 8)}@owners.test`;
    const { token } = await withDb((db) =>
      createLink(db, { purpose: "invitation", email, tenantId: t.tenantId, role: "member" }),
    );
    const html = await (await new Browser().get(`/invitations/accept?token=${token}`)).text();
    expect(html).not.toContain("signedInAs");
    expect(html).not.toContain("You are signed in as");
  });
});
