import { and, eq, isNull } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { accountLinks, apiKeys, auditLog, oauthGrants } from "../../schema/pg/schema.js";
import { run } from "../../scripts/admin/commands.js";
import { SIGN_IN_LIMITS } from "../../workers/api/accounts/throttle.js";
import { auditEntries, onlyAuditEntry } from "../support/audit.js";
import { Browser, csrfOf, seedUser } from "../support/browser.js";
import { BASE, seedTenant, withDb } from "../support/harness.js";
import { linkIn, mailTo } from "../support/mail.js";
import { CLI, cliLogin } from "../support/oauth.js";

// One entry per action, with the right actor, target and outcome (docs/accounts.md, "Audit log").

const INBOX = inject("inboxUrl");

function uniqueEmail(tag: string): string {
  return `${tag}-${crypto.randomUUID().slice(0, 8)}@audit.test`;
}

async function signedIn(email: string, password: string, ip?: string): Promise<Browser> {
  const b = new Browser(ip);
  expect((await b.signIn(email, password)).status).toBe(303);
  return b;
}

/** A studio with a signed-in owner and a signed-in member. */
async function studio(name = "Audit Studio") {
  const t = await seedTenant("pro", name);
  const owner = await seedUser(t.tenantId, "owner");
  const member = await seedUser(t.tenantId, "member");
  return {
    t,
    owner,
    member,
    ob: await signedIn(owner.email, owner.password),
    mb: await signedIn(member.email, member.password),
  };
}

const membersPath = (tenantId: string) => `/settings/studios/${tenantId}/members`;
const keysPath = (projectId: string) => `/settings/projects/${projectId}/api-keys`;

describe("account entries", () => {
  it("sign-in: one success row with the user, IP and user agent", async () => {
    const t = await seedTenant("pro", "Audit Sign-in");
    const user = await seedUser(t.tenantId, "member");
    const b = new Browser("203.0.113.41");
    expect((await b.signIn(user.email, user.password)).status).toBe(303);
    const e = await onlyAuditEntry(t.tenantId, "user.signed_in");
    expect(e).toMatchObject({
      actorType: "user",
      actorId: user.id,
      actorLabel: user.email,
      actorUserId: user.id,
      targetType: "user",
      targetId: user.id,
      outcome: "success",
      ip: "203.0.113.41",
      count: 1,
    });
  });

  it("sign-in failures are counted per account, IP and window, not one row each; unknown accounts belong to no studio", async () => {
    const t = await seedTenant("pro", "Audit Failures");
    const user = await seedUser(t.tenantId, "member");
    const a = new Browser("203.0.113.51");
    const z = new Browser("203.0.113.52");
    for (let i = 0; i < 3; i++) {
      expect((await a.signIn(user.email, "wrong-password")).status).toBe(401);
    }
    expect((await z.signIn(user.email, "wrong-password")).status).toBe(401);
    const rows = (await auditEntries(t.tenantId, "user.sign_in_failed")).sort((x, y) =>
      (x.ip ?? "").localeCompare(y.ip ?? ""),
    );
    expect(rows.map((r) => [r.ip, r.count, r.outcome, r.targetId, r.detail])).toEqual([
      ["203.0.113.51", 3, "failure", user.id, { reason: "password" }],
      ["203.0.113.52", 1, "failure", user.id, { reason: "password" }],
    ]);
    for (const r of rows) {
      expect(r.at.getTime() % (SIGN_IN_LIMITS.windowSeconds * 1000)).toBe(0);
      expect(JSON.stringify(r)).not.toContain("wrong-password");
    }
    const ghost = uniqueEmail("ghost");
    expect((await a.signIn(ghost, "whatever-password")).status).toBe(401);
    const none = (await auditEntries(null, "user.sign_in_failed")).filter((r) => r.targetLabel === ghost);
    expect(none.map((r) => [r.tenantId, r.targetId, r.count])).toEqual([[null, null, 1]]);
  });

  it("sign-out ends the session with one session.ended row", async () => {
    const t = await seedTenant("pro", "Audit Sign-out");
    const user = await seedUser(t.tenantId, "member");
    const b = await signedIn(user.email, user.password);
    const html = await (await b.get("/")).text();
    expect((await b.post("/sign-out", { csrf: csrfOf(html) })).status).toBe(303);
    const e = await onlyAuditEntry(t.tenantId, "session.ended");
    expect(e).toMatchObject({
      actorType: "user",
      actorId: user.id,
      targetType: "session",
      outcome: "success",
    });
    expect(e.detail).toEqual({ how: "sign_out" });
  });

  it("password change and reset: one row each", async () => {
    const t = await seedTenant("pro", "Audit Passwords");
    const user = await seedUser(t.tenantId, "member");
    const b = await signedIn(user.email, user.password);
    const changed = await b.submit(
      "/settings/account",
      { current: user.password, next: "a-brand-new-password" },
      "/settings/account/password",
    );
    expect(changed.status).toBe(303);
    expect(await onlyAuditEntry(t.tenantId, "user.password_changed")).toMatchObject({
      actorType: "user",
      actorId: user.id,
      targetId: user.id,
      outcome: "success",
    });
    // A wrong current password changes nothing and records no change.
    const refused = await b.submit(
      "/settings/account",
      { current: "not-it", next: "another-new-password" },
      "/settings/account/password",
    );
    expect(refused.status).toBe(400);
    expect(await auditEntries(t.tenantId, "user.password_changed")).toHaveLength(1);

    expect((await new Browser().submit("/password-reset", { email: user.email })).status).toBe(200);
    const link = linkIn(await mailTo(INBOX, user.email, /Reset your/), "/password-reset/confirm");
    const token = new URL(link).searchParams.get("token") ?? "";
    const res = await new Browser("203.0.113.61").submit(
      link.slice(BASE.length),
      { token, password: "reset-password-1" },
      "/password-reset/confirm",
    );
    expect(res.headers.get("location")).toBe("/sign-in?done=reset");
    expect(await onlyAuditEntry(t.tenantId, "user.password_reset")).toMatchObject({
      actorType: "user",
      actorId: user.id,
      actorLabel: user.email,
      targetId: user.id,
      ip: "203.0.113.61",
      outcome: "success",
    });
  });
});

describe("account deletion", () => {
  it("user.deleted: one row in the studio, written before the membership goes", async () => {
    const t = await seedTenant("pro", "Audit Deletion");
    await seedUser(t.tenantId, "owner");
    const user = await seedUser(t.tenantId, "member");
    const b = await signedIn(user.email, user.password);
    const res = await b.submit("/settings/account", { password: user.password }, "/settings/account/delete");
    expect(res.status).toBe(303);
    expect(await onlyAuditEntry(t.tenantId, "user.deleted")).toMatchObject({
      actorType: "user",
      actorId: user.id,
      actorLabel: user.email,
      targetId: user.id,
      outcome: "success",
    });
  });
});

describe("credential entries", () => {
  it("key created and revoked on the API Keys page; a member's refused revoke is recorded as denied", async () => {
    const { t, owner, member, ob, mb } = await studio("Audit Keys");
    expect((await ob.submit(keysPath(t.projectId), { name: "ci key", preset: "full" })).status).toBe(303);
    const created = await onlyAuditEntry(t.tenantId, "key.created");
    expect(created).toMatchObject({
      actorType: "user",
      actorId: owner.id,
      projectId: t.projectId,
      targetType: "key",
      targetLabel: "ci key",
      outcome: "success",
      detail: { preset: "full" },
    });
    const keyId = created.targetId ?? "";
    const [row] = await withDb((db) => db.select().from(apiKeys).where(eq(apiKeys.id, keyId)));
    expect(row?.name).toBe("ci key");

    const denied = await mb.submit(keysPath(t.projectId), {}, `${keysPath(t.projectId)}/${keyId}/revoke`);
    expect(denied.status).toBe(403);
    expect(await onlyAuditEntry(t.tenantId, "key.revoked")).toMatchObject({
      actorId: member.id,
      targetId: keyId,
      outcome: "denied",
    });
    const done = await ob.submit(keysPath(t.projectId), {}, `${keysPath(t.projectId)}/${keyId}/revoke`);
    expect(done.status).toBe(303);
    const revoked = (await auditEntries(t.tenantId, "key.revoked")).filter((r) => r.outcome === "success");
    expect(revoked.map((r) => [r.actorId, r.targetId, r.targetLabel])).toEqual([[owner.id, keyId, "ci key"]]);
  });

  it("OAuth: consent, token created, token revoked by the client, grant revoked by the user", async () => {
    const { t, member, mb } = await studio("Audit OAuth");
    const tokens = await cliLogin(mb, t.tenantId);
    expect(await onlyAuditEntry(t.tenantId, "oauth.consent_granted")).toMatchObject({
      actorType: "user",
      actorId: member.id,
      targetType: "oauth_client",
      targetId: CLI,
      outcome: "success",
    });
    const created = await onlyAuditEntry(t.tenantId, "token.created");
    expect(created).toMatchObject({
      actorType: "oauth_client",
      actorId: CLI,
      actorUserId: member.id,
      targetType: "grant",
    });
    expect(created.actorLabel).toContain(member.email);
    const grantId = created.targetId ?? "";

    // Revoking an access token through RFC 7009: one entry; again (already revoked): none more.
    const revokeRes = await revoke(tokens.access_token);
    expect(revokeRes).toBe(200);
    expect(await revoke(tokens.access_token)).toBe(200);
    expect(await onlyAuditEntry(t.tenantId, "token.revoked")).toMatchObject({
      actorType: "oauth_client",
      actorId: CLI,
      targetId: grantId,
      detail: { kind: "access" },
    });

    const page = await mb.get("/settings/connected-apps");
    const res = await mb.post(`/settings/connected-apps/${grantId}/revoke`, {
      csrf: csrfOf(await page.text()),
    });
    expect(res.status).toBe(303);
    expect(await onlyAuditEntry(t.tenantId, "oauth.grant_revoked")).toMatchObject({
      actorType: "user",
      actorId: member.id,
      targetType: "grant",
      targetId: grantId,
      outcome: "success",
    });
    const [grant] = await withDb((db) => db.select().from(oauthGrants).where(eq(oauthGrants.id, grantId)));
    expect(grant?.revokedAt).not.toBeNull();
  });
});

/** RFC 7009 revocation as the CLI sends it; the answer's status. */
async function revoke(token: string): Promise<number> {
  const res = await new Browser("198.18.0.10").fetch("/api/oauth/revoke", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
    body: new URLSearchParams({ token, client_id: CLI }).toString(),
  });
  return res.status;
}

describe("operator entries", () => {
  it("the admin CLI's key create, key revoke and token create: one row each, as the operator", async () => {
    const t = await seedTenant("pro", "Audit Operator");
    const made = await withDb((db) =>
      run(db, ["key", "create"], { project: t.projectId, preset: "read" }, []),
    );
    const keyId = (made.result as { id: string }).id;
    expect(await onlyAuditEntry(t.tenantId, "key.created")).toMatchObject({
      actorType: "operator",
      actorId: null,
      projectId: t.projectId,
      targetId: keyId,
    });
    await withDb((db) => run(db, ["key", "revoke"], { id: keyId }, []));
    expect(await onlyAuditEntry(t.tenantId, "key.revoked")).toMatchObject({
      actorType: "operator",
      targetId: keyId,
    });
    await withDb((db) => run(db, ["token", "create"], { tenant: t.tenantId, scopes: "analytics:read" }, []));
    expect(await onlyAuditEntry(t.tenantId, "token.created")).toMatchObject({
      actorType: "operator",
      targetType: "token",
      detail: { scope: "analytics:read" },
    });
  });
});

describe("team entries", () => {
  it("invitation sent, resent, revoked and accepted: one row each", async () => {
    const { t, owner, ob } = await studio("Audit Invitations");
    const email = uniqueEmail("invitee");
    const invite = (to: string) =>
      ob.submit(
        membersPath(t.tenantId),
        { email: to, role: "member" },
        `/settings/studios/${t.tenantId}/invitations`,
      );
    expect((await invite(email)).status).toBe(303);
    const sent = await onlyAuditEntry(t.tenantId, "invitation.sent");
    expect(sent).toMatchObject({
      actorId: owner.id,
      targetType: "invitation",
      targetLabel: email,
      detail: { role: "member" },
    });
    const id = sent.targetId ?? "";
    const resend = await ob.submit(
      membersPath(t.tenantId),
      {},
      `/settings/studios/${t.tenantId}/invitations/${id}/resend`,
    );
    expect(resend.status).toBe(303);
    expect(await onlyAuditEntry(t.tenantId, "invitation.resent")).toMatchObject({
      actorId: owner.id,
      targetId: id,
    });
    const revoked = await ob.submit(
      membersPath(t.tenantId),
      {},
      `/settings/studios/${t.tenantId}/invitations/${id}/revoke`,
    );
    expect(revoked.status).toBe(303);
    expect(await onlyAuditEntry(t.tenantId, "invitation.revoked")).toMatchObject({
      actorId: owner.id,
      targetId: id,
    });

    const second = uniqueEmail("joiner");
    expect((await invite(second)).status).toBe(303);
    const link = linkIn(await mailTo(INBOX, second, /invited/), "/invitations/accept");
    const token = new URL(link).searchParams.get("token") ?? "";
    const joined = await new Browser().submit(
      link.slice(BASE.length),
      { token, password: "joiner-password-1", name: "Joiner" },
      "/invitations/accept",
    );
    expect(joined.status).toBe(303);
    const accepted = await onlyAuditEntry(t.tenantId, "invitation.accepted");
    expect(accepted).toMatchObject({
      actorType: "user",
      actorLabel: second,
      targetLabel: second,
      outcome: "success",
    });
    expect(accepted.actorId).toBe(accepted.targetId);
    const [link2] = await withDb((db) =>
      db
        .select()
        .from(accountLinks)
        .where(and(eq(accountLinks.email, second), isNull(accountLinks.revokedAt))),
    );
    expect(link2?.usedAt).not.toBeNull();
  });

  it("role changed and member removed: one row each with the target; a member's attempts are denied", async () => {
    const { t, owner, member, ob, mb } = await studio("Audit Roles");
    const roleUrl = `${membersPath(t.tenantId)}/${member.id}/role`;
    expect(
      (
        await mb.submit(
          membersPath(t.tenantId),
          { role: "owner" },
          `${membersPath(t.tenantId)}/${owner.id}/role`,
        )
      ).status,
    ).toBe(403);
    expect((await ob.submit(membersPath(t.tenantId), { role: "owner" }, roleUrl)).status).toBe(303);
    const roles = await auditEntries(t.tenantId, "member.role_changed");
    expect(roles.map((r) => [r.actorId, r.targetId, r.outcome, r.detail])).toEqual([
      [member.id, owner.id, "denied", {}],
      [owner.id, member.id, "success", { from: "member", to: "owner" }],
    ]);
    expect(roles[1]?.targetLabel).toBe(member.email);

    const other = await seedUser(t.tenantId, "member");
    expect(
      (await ob.submit(membersPath(t.tenantId), {}, `${membersPath(t.tenantId)}/${other.id}/remove`)).status,
    ).toBe(303);
    expect(await onlyAuditEntry(t.tenantId, "member.removed")).toMatchObject({
      actorId: owner.id,
      targetId: other.id,
      targetLabel: other.email,
      outcome: "success",
      detail: { left: false },
    });
  });
});

describe("entries are immutable through every interface", () => {
  it("the API has no way to change or delete an entry, and Postgres refuses", async () => {
    const { t, ob } = await studio("Audit Immutable API");
    const [entry] = await auditEntries(t.tenantId, "user.signed_in");
    const html = await (await ob.get("/")).text();
    for (const method of ["DELETE", "PUT", "PATCH", "POST"]) {
      const res = await ob.fetch(`/api/v1/audit-log/${entry?.id}`, {
        method,
        headers: { Origin: BASE, "X-CSRF": csrfOf(html) },
      });
      expect(res.status, method).toBe(404);
      const all = await ob.fetch("/api/v1/audit-log", { method, headers: { Origin: BASE } });
      expect([404, 405], method).toContain(all.status);
    }
    const refused = await withDb((db) =>
      db
        .delete(auditLog)
        .where(eq(auditLog.id, entry?.id ?? ""))
        .then(() => "deleted")
        .catch((err: unknown) => String(err instanceof Error ? `${err.message} ${String(err.cause)}` : err)),
    );
    expect(refused).toContain("kept for 400 days");
    expect(await auditEntries(t.tenantId, "user.signed_in")).toContainEqual(entry);
  });
});
