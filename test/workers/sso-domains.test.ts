import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { and, eq, sql } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import migration0018 from "../../schema/pg/migrations/0018_sso_domain_proofs.sql?raw";
import { ssoConnections, ssoDomainProofs, ssoDomains } from "../../schema/pg/schema.js";
import worker from "../../workers/api/index.js";
import type { SsoNoticeJob } from "../../workers/api/jobs.js";
import { QUEUES } from "../../workers/shared/queues.js";
import { auditEntries } from "../support/audit.js";
import { Browser, unescapeHtml } from "../support/browser.js";
import { BASE, seedTenant, withDb } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import { mailsTo, mailTo } from "../support/mail.js";
import {
  dns,
  idp,
  proofRecord,
  proveDomain,
  type SsoStudio,
  ssoPath,
  ssoSignIn,
  ssoStudio,
  startSsoSignIn,
  throughProvider,
} from "../support/sso-flow.js";

// Proving a single sign-on domain (docs/accounts.md, "Single sign-on: proving a domain"): a studio's
// domain sends sign-ins to its provider only after its DNS TXT record is seen through the DNS-over-
// HTTPS resolver the Worker's SSO_DNS_RESOLVER names: here the global setup's resolver on loopback
// (test/support/doh-server.ts), whose records the tests publish.

const sameOrigin = { Origin: BASE, "Sec-Fetch-Site": "same-origin" };

/** The Web API as the studio's owner (their browser session). */
function asOwner(s: SsoStudio, path: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  headers.set("Cookie", `gt_session=${s.ownerBrowser.cookies.get("gt_session") ?? ""}`);
  for (const [k, v] of Object.entries(sameOrigin)) {
    headers.set(k, v);
  }
  return api(path, { ip: "192.0.2.41" }, { ...init, headers });
}

const verifyPath = (s: SsoStudio, domain = s.domain) =>
  `/v1/studios/${s.t.tenantId}/sso/domains/${domain}/verify`;

async function proof(tenantId: string, domain: string) {
  const [row] = await withDb((db) =>
    db
      .select()
      .from(ssoDomainProofs)
      .where(and(eq(ssoDomainProofs.tenantId, tenantId), eq(ssoDomainProofs.domain, domain))),
  );
  return row;
}

/** Whether "Continue with single sign-on" for `email` goes to the provider. */
async function routed(email: string): Promise<boolean> {
  const res = await startSsoSignIn(new Browser(), email);
  return (res.headers.get("location") ?? "").startsWith(`${inject("idpUrl")}/`);
}

describe("a domain routes sign-ins only once its DNS record proves the studio owns it", () => {
  it("the record on the page and in the API; Verify without it changes nothing; with it the domain routes", async () => {
    const s = await ssoStudio("DNS Proof", { prove: false });
    const person = await s.person("first");
    expect(await routed(person)).toBe(false);

    // The record to publish: on the page (with the banner) and in the API.
    const record = await proofRecord(s.t.tenantId, s.domain);
    expect(record.value).toMatch(/^gt-sso-verification=[0-9a-f]{32}$/);
    const page = unescapeHtml(await (await s.ownerBrowser.get(ssoPath(s.t.tenantId))).text());
    expect(page).toContain(`Not verified: ${s.domain}.`);
    expect(page).toContain(`<code>${record.name}</code>`);
    expect(page).toContain(`<code>${record.value}</code>`);
    const settings = await asOwner(s, `/v1/studios/${s.t.tenantId}/sso`);
    expect(settings.status).toBe(200);
    const body = (await settings.json()) as { data: { domainProofs: unknown[] } };
    expect(body.data.domainProofs).toEqual([
      {
        domain: s.domain,
        record: { type: "TXT", ...record },
        verified: false,
        verifiedAt: null,
        checkedAt: null,
      },
    ]);

    // Verify before publishing: not found, still unverified, recorded as a failure.
    await dns().setTxt(record.name, ["v=spf1 -all", "gt-sso-verification=someone-elses-token"]);
    const early = await asOwner(s, verifyPath(s), { method: "POST" });
    expect(early.status).toBe(200);
    expect(((await early.json()) as { data: unknown }).data).toMatchObject({
      domain: s.domain,
      verified: false,
      recordsFound: 2,
    });
    expect(await routed(person)).toBe(false);
    const notFound = await s.ownerBrowser.submit(
      ssoPath(s.t.tenantId),
      { domain: s.domain },
      `${ssoPath(s.t.tenantId)}/verify`,
    );
    expect(unescapeHtml(await notFound.text())).toContain(`The TXT record of ${s.domain} was not found`);
    const failures = await auditEntries(s.t.tenantId, "sso.domain_verified");
    expect(failures.map((e) => [e.outcome, e.detail.reason, e.actorId])).toEqual([
      ["failure", "record_missing", s.owner.id],
      ["failure", "record_missing", s.owner.id],
    ]);

    // Published (beside other TXT records): verified, and sign-ins go to the provider.
    await dns().setTxt(record.name, ["v=spf1 -all", record.value]);
    const verified = await asOwner(s, verifyPath(s), { method: "POST" });
    expect(verified.status).toBe(200);
    const data = ((await verified.json()) as { data: { verified: boolean; verifiedAt: string } }).data;
    expect(data.verified).toBe(true);
    expect(Date.parse(data.verifiedAt)).toBeGreaterThan(0);
    expect(await routed(person)).toBe(true);
    const { res } = await ssoSignIn(person);
    expect(res.status).toBe(303);
    const entries = await auditEntries(s.t.tenantId, "sso.domain_verified");
    expect(entries.filter((e) => e.outcome === "success").map((e) => e.detail)).toEqual([
      expect.objectContaining({ domain: s.domain, verified: true, recordsFound: 2 }),
    ]);
    const after = unescapeHtml(await (await s.ownerBrowser.get(ssoPath(s.t.tenantId))).text());
    expect(after).not.toContain("Not verified:");
  });

  it("a resolver that is down or fails: a retryable 503 on the page and the API, nothing changed", async () => {
    const s = await ssoStudio("DNS Down", { prove: false });
    const record = await proofRecord(s.t.tenantId, s.domain);
    await dns().setTxt(record.name, [record.value]);
    try {
      for (const mode of ["down", "servfail"] as const) {
        await dns().setMode(mode);
        const res = await asOwner(s, verifyPath(s), { method: "POST" });
        expect(res.status).toBe(503);
        expect(res.headers.get("retry-after")).toBe("30");
        expect((await problemOf(res)).detail).toContain("The DNS resolver (127.0.0.1:");
        const page = await s.ownerBrowser.submit(
          ssoPath(s.t.tenantId),
          { domain: s.domain },
          `${ssoPath(s.t.tenantId)}/verify`,
        );
        expect(page.status).toBe(503);
        expect(unescapeHtml(await page.text())).toContain("could not be asked for the TXT record");
      }
    } finally {
      await dns().setMode("up");
    }
    expect((await proof(s.t.tenantId, s.domain))?.verifiedAt).toBeNull();
    expect(await auditEntries(s.t.tenantId, "sso.domain_verified")).toEqual([]);
    // Back up: the same Verify works.
    expect((await asOwner(s, verifyPath(s), { method: "POST" })).status).toBe(200);
    expect((await proof(s.t.tenantId, s.domain))?.verifiedAt).not.toBeNull();
  });

  it("owners' sessions only: another studio 404, an unknown domain 404, an API key 403", async () => {
    const s = await ssoStudio("DNS Rights", { prove: false });
    const other = await ssoStudio("DNS Rights Other", { prove: false });
    const unknown = await asOwner(s, verifyPath(s, "not-ours.test"), { method: "POST" });
    expect(unknown.status).toBe(404);
    expect((await problemOf(unknown)).field).toBe("domain");
    expect((await asOwner(other, verifyPath(s), { method: "POST" })).status).toBe(404);
    const keyed = await api(verifyPath(s), { key: s.t.keys.full.key }, { method: "POST" });
    expect(keyed.status).toBe(403);
  });
});

describe("a studio that only typed a domain cannot hold it", () => {
  it("the owner of the domain configures it anyway, proves it, and a squatter's Verify finds nothing", async () => {
    const squatter = await ssoStudio("Squatter", { prove: false });
    const domain = squatter.domain;
    // The real owner: another studio, a provider client of its own, the same domain.
    const owner = await ssoStudio("Domain Owner", { prove: false });
    const admin = `admin-${crypto.randomUUID().slice(0, 6)}@${domain}`;
    await idp().addAccount({ email: admin });
    const submitted = await owner.ownerBrowser.submit(ssoPath(owner.t.tenantId), {
      issuer: idp().issuer,
      clientId: owner.clientId,
      clientSecret: owner.clientSecret,
      domains: domain,
      defaultRole: "member",
    });
    expect(submitted.status).toBe(303);
    const tested = await owner.ownerBrowser.get(
      await throughProvider(submitted.headers.get("location") ?? "", admin),
    );
    expect(tested.headers.get("location")).toBe(`${ssoPath(owner.t.tenantId)}?test=passed`);
    await proveDomain(owner.ownerBrowser, owner.t.tenantId, domain);
    const claims = await withDb((db) => db.select().from(ssoDomains).where(eq(ssoDomains.domain, domain)));
    expect(claims.map((c) => c.tenantId)).toEqual([owner.t.tenantId]);

    // A person of the domain now signs in with the owner's studio, never the squatter's.
    const person = `dev-${crypto.randomUUID().slice(0, 6)}@${domain}`;
    await idp().addAccount({ email: person });
    const { b, res } = await ssoSignIn(person);
    expect(res.status).toBe(303);
    expect((await b.get("/")).status).toBe(200);
    expect(await (await b.get("/")).text()).toContain("Domain Owner");

    // The squatter's Verify: its record is not published; nothing moves.
    const tried = await asOwner(squatter, verifyPath(squatter), { method: "POST" });
    expect(((await tried.json()) as { data: { verified: boolean } }).data.verified).toBe(false);

    // Both records published at once: the earlier proof stands (409).
    const theirs = await proofRecord(squatter.t.tenantId, domain);
    const ours = await proofRecord(owner.t.tenantId, domain);
    await dns().setTxt(theirs.name, [ours.value, theirs.value]);
    const both = await asOwner(squatter, verifyPath(squatter), { method: "POST" });
    expect(both.status).toBe(409);
    expect((await problemOf(both)).field).toBe("domain");

    // The domain changes hands (the first studio's record is gone): the new proof takes it over.
    await dns().setTxt(theirs.name, [theirs.value]);
    const moved = await asOwner(squatter, verifyPath(squatter), { method: "POST" });
    expect(((await moved.json()) as { data: { verified: boolean } }).data.verified).toBe(true);
    expect((await proof(owner.t.tenantId, domain))?.verifiedAt).toBeNull();
    const released = await auditEntries(owner.t.tenantId, "sso.domain_released");
    expect(released.map((e) => e.detail)).toEqual([
      expect.objectContaining({ domain, reason: "record_gone", provenBy: squatter.t.tenantId }),
    ]);
  });
});

describe("domains made pending by the migration", () => {
  it("migration 0018 gives every configured domain an unverified token; the active ones' notice is due", async () => {
    // A studio as it was before proofs existed: an active configuration routing two domains, a pending
    // one naming a third.
    const t = await seedTenant("pro", "Before Proofs");
    const tag = crypto.randomUUID().slice(0, 8);
    const [a, b, c] = [`a-${tag}.test`, `b-${tag}.test`, `c-${tag}.test`];
    await withDb(async (db) => {
      const base = { tenantId: t.tenantId, issuer: inject("idpUrl"), clientId: "x", clientSecret: "v1.x.x" };
      const [active] = await db
        .insert(ssoConnections)
        .values({ ...base, state: "active", domains: [a, b] })
        .returning();
      await db.insert(ssoConnections).values({ ...base, state: "pending", domains: [b, c] });
      await db
        .insert(ssoDomains)
        .values([a, b].map((domain) => ({ domain, tenantId: t.tenantId, connectionId: active?.id ?? "" })));
    });
    // The migration's data statement (its last), as it ran on the deployed database.
    const statement = migration0018.split("--> statement-breakpoint").at(-1) ?? "";
    expect(statement).toContain('INSERT INTO "sso_domain_proofs"');
    await withDb((db) => db.execute(sql.raw(statement)));
    const rows = await withDb((db) =>
      db.select().from(ssoDomainProofs).where(eq(ssoDomainProofs.tenantId, t.tenantId)),
    );
    expect(
      rows
        .map((r) => [r.domain, r.verifiedAt, r.noticeDue, /^[0-9a-f]{32}$/.test(r.token)])
        .sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    ).toEqual([
      [a, null, true, true],
      [b, null, true, true],
      [c, null, false, true],
    ]);
    // Claimed but unproven: sign-ins with it no longer go to the provider.
    expect(await routed(`someone@${a}`)).toBe(false);
  });

  it("their owners get one mail naming each record and the page; none once verified", async () => {
    const s = await ssoStudio("Pending Notice", { prove: false });
    // As migration 0018 leaves a domain that routed before: pending, its notice due.
    await withDb((db) =>
      db.update(ssoDomainProofs).set({ noticeDue: true }).where(eq(ssoDomainProofs.tenantId, s.t.tenantId)),
    );
    const record = await proofRecord(s.t.tenantId, s.domain);
    // The cron plans the notice as a job; the jobs queue's consumer sends it.
    const notice = async (id: string) => {
      const body: SsoNoticeJob = { v: 1, kind: "sso-notice", runAt: Date.now() };
      const b = createMessageBatch(QUEUES.jobs.name, [{ id, timestamp: new Date(), attempts: 1, body }]);
      const ctx = createExecutionContext();
      await worker.queue(b, env);
      return (await getQueueResult(b, ctx)).explicitAcks;
    };
    expect(await notice("n-1")).toEqual(["n-1"]);
    const mail = await mailTo(inject("inboxUrl"), s.owner.email, /prove your single sign-on domains/);
    expect(mail.subject).toBe("Action needed: prove your single sign-on domains for Pending Notice");
    expect(mail.text).toContain(`${s.domain}: TXT record ${record.name} = ${record.value}`);
    expect(mail.text).toContain(`/settings/studios/${s.t.tenantId}/sso`);
    // Once: the next run sends nothing more.
    expect(await notice("n-2")).toEqual(["n-2"]);
    expect(await mailsTo(inject("inboxUrl"), s.owner.email)).toHaveLength(1);
    expect((await proof(s.t.tenantId, s.domain))?.noticedAt).not.toBeNull();
  });
});
