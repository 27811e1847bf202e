import { and, eq } from "drizzle-orm";
import { expect, inject } from "vitest";
import { ssoDomainProofs } from "../../schema/pg/schema.js";
import { Browser, seedUser, unescapeHtml } from "./browser.js";
import { type DohControl, dohControl } from "./doh-control.js";
import { BASE, seedTenant, type Tenant, withDb } from "./harness.js";
import { type IdpControl, idpControl } from "./oidc-idp-control.js";

// Single sign-on in workers tests: the global setup's OpenID provider (test/support/oidc-idp.ts, a real
// oidc-provider on loopback) driven over its control plane, and the app's pages through SELF.

export const CALLBACK = `${BASE}/sso/callback`;

export function idp(): IdpControl {
  return idpControl(inject("idpUrl"));
}

export const ssoPath = (tenantId: string) => `/settings/studios/${tenantId}/sso`;

/** The global setup's DNS-over-HTTPS resolver (the Worker's SSO_DNS_RESOLVER), driven over its control plane. */
export function dns(): DohControl {
  return dohControl(inject("dohUrl"));
}

/** The TXT record the studio must publish for `domain` (its token, from the database). */
export async function proofRecord(
  tenantId: string,
  domain: string,
): Promise<{ name: string; value: string }> {
  const [row] = await withDb((db) =>
    db
      .select()
      .from(ssoDomainProofs)
      .where(and(eq(ssoDomainProofs.tenantId, tenantId), eq(ssoDomainProofs.domain, domain))),
  );
  if (!row) {
    throw new Error(`no proof of ${domain} for the studio`);
  }
  return { name: `_gt-sso.${domain}`, value: `gt-sso-verification=${row.token}` };
}

/** Publishes the studio's TXT record for `domain` and presses Verify on the page as its owner. */
export async function proveDomain(owner: Browser, tenantId: string, domain: string): Promise<void> {
  const record = await proofRecord(tenantId, domain);
  await dns().setTxt(record.name, [record.value]);
  const verified = await owner.submit(ssoPath(tenantId), { domain }, `${ssoPath(tenantId)}/verify`);
  const page = unescapeHtml(await verified.text());
  expect(verified.status, page).toBe(200);
  expect(page).toContain(`${domain} is verified`);
}

/** A studio whose single sign-on is configured and tested: its owner signed in with a password. */
export type SsoStudio = {
  t: Tenant;
  owner: { id: string; email: string; password: string };
  ownerBrowser: Browser;
  /** The studio's email domain (unique per studio). */
  domain: string;
  clientId: string;
  clientSecret: string;
  /** An address of the studio's domain, with an account at the provider. */
  person(tag: string, init?: { emailVerified?: boolean | null }): Promise<string>;
};

/** `prove: false` leaves the domain unproven (its DNS record not published): it routes no sign-in. */
export async function ssoStudio(name = "SSO Studio", opts: { prove?: boolean } = {}): Promise<SsoStudio> {
  const t = await seedTenant("pro", name);
  const owner = await seedUser(t.tenantId, "owner");
  const ownerBrowser = new Browser();
  expect((await ownerBrowser.signIn(owner.email, owner.password)).status).toBe(303);
  const tag = crypto.randomUUID().slice(0, 8);
  const domain = `${tag}.sso.test`;
  const clientId = `studio-${tag}`;
  const clientSecret = `secret-${crypto.randomUUID()}`;
  const provider = idp();
  await provider.addClient({ clientId, clientSecret, redirectUris: [CALLBACK] });
  const person = async (who: string, init: { emailVerified?: boolean | null } = {}) => {
    const email = `${who}-${crypto.randomUUID().slice(0, 6)}@${domain}`;
    await provider.addAccount({ email, ...init });
    return email;
  };
  // Configure, then the test sign-in as the owner's provider account: only then is it active.
  const admin = await person("it-admin");
  const submitted = await ownerBrowser.submit(ssoPath(t.tenantId), {
    issuer: provider.issuer,
    clientId,
    clientSecret,
    domains: domain,
    defaultRole: "member",
  });
  expect(submitted.status, await submitted.clone().text()).toBe(303);
  const callback = await throughProvider(submitted.headers.get("location") ?? "", admin);
  const tested = await ownerBrowser.get(callback);
  expect(tested.status).toBe(303);
  expect(tested.headers.get("location")).toBe(`${ssoPath(t.tenantId)}?test=passed`);
  // The studio proves it owns the domain (its DNS TXT record): only then does it route sign-ins.
  if (opts.prove !== false) {
    await proveDomain(ownerBrowser, t.tenantId, domain);
  }
  return { t, owner, ownerBrowser, domain, clientId, clientSecret, person };
}

/** Follows the app's redirect to the provider as `email`; the callback URL the provider sends back. */
export async function throughProvider(authorizationUrl: string, email: string): Promise<string> {
  expect(authorizationUrl.startsWith(inject("idpUrl"))).toBe(true);
  const result = await idp().authorize(authorizationUrl, email);
  if (!("callback" in result)) {
    throw new Error(`the provider stopped at its own page: ${result.status}`);
  }
  return result.callback;
}

/** "Continue with single sign-on" on the sign-in page: the redirect to the provider. */
export async function startSsoSignIn(b: Browser, email: string): Promise<Response> {
  return b.submit("/sign-in", { email, password: "", sso: "1", returnTo: "/" }, "/sign-in");
}

/**
 * A whole SSO sign-in in a fresh browser (or `b`): sign-in page → provider as `email` → callback.
 * Returns the browser and the callback's answer.
 */
export async function ssoSignIn(email: string, b = new Browser()): Promise<{ b: Browser; res: Response }> {
  const started = await startSsoSignIn(b, email);
  expect(started.status).toBe(303);
  const callback = await throughProvider(started.headers.get("location") ?? "", email);
  return { b, res: await b.get(callback) };
}
