import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launchChromium } from "../support/chromium.js";
import { type OidcIdp, startOidcIdp } from "../support/oidc-idp.js";
import { adminCli, type Service } from "../support/service.js";
import { sharedService } from "../support/shared-service.js";

// Single sign-on end to end (issue 31 item 6): headless Chromium against the service as `npm run dev`
// serves it, with a real OpenID provider (oidc-provider, test/support/oidc-idp.ts) as the studio's
// IdP on 127.0.0.2, another site than the app's 127.0.0.1, so the browser treats it as a real IdP
// (its own cookies; the callback is a cross-site navigation). The owner configures it, tests it,
// requires it; a new person signs in and is made a member; signs in again; a password sign-in is
// refused; a person disabled at the provider cannot sign in again.

const DOMAIN = "mosaic-games.test";
const STUDIO = "Mosaic Games";
const owner = { email: `owner@${DOMAIN}`, password: "owner-password-123", id: "" };
const colleague = { email: `producer@${DOMAIN}`, password: "producer-password-123" };
const CLIENT_ID = "mosaic-analytics";
const CLIENT_SECRET = "mosaic-client-secret-0123456789";

let service: Service;
let idp: OidcIdp;
let db: pg.Client;
let tenantId = "";
const dirs: string[] = [];
const contexts: BrowserContext[] = [];

async function admin(...args: string[]): Promise<{ id: string }> {
  const answer = await adminCli(service, ...args);
  return { id: String(answer.id) };
}

/** A fresh browser (its own profile and cookies): one person's laptop. */
async function browser(): Promise<BrowserContext> {
  const dir = await mkdtemp(join(tmpdir(), "chromium-profile-"));
  dirs.push(dir);
  const ctx = await launchChromium(dir);
  contexts.push(ctx);
  return ctx;
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM (${sql}) q`, params);
  return Number(rows[0]?.n ?? -1);
}

/** The provider's login form: email, Continue. */
async function providerLogin(page: Page, email: string) {
  await page.waitForURL((u) => u.origin === idp.issuer && u.pathname.startsWith("/interaction/"));
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Continue" }).click();
}

/** "Continue with single sign-on" on the sign-in page with a work email. */
async function startSso(page: Page, email: string) {
  await page.goto(`${service.origin}/sign-in`);
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Continue with single sign-on" }).click();
}

beforeAll(async () => {
  service = await sharedService();
  idp = await startOidcIdp({ host: "127.0.0.2" });
  db = new pg.Client({ connectionString: service.databaseUrl });
  await db.connect();
  tenantId = (await admin("tenant", "create", "--name", STUDIO, "--plan", "pro")).id;
  await admin("project", "create", "--tenant", tenantId, "--name", "Mosaic Racer");
  const user = (who: { email: string; password: string }, role: string) =>
    admin(
      "user",
      "create",
      "--tenant",
      tenantId,
      "--email",
      who.email,
      "--password",
      who.password,
      "--role",
      role,
    );
  owner.id = (await user(owner, "owner")).id;
  await user(colleague, "member");
  // The studio's people at the provider.
  await idp.addAccount({ email: `it-admin@${DOMAIN}`, name: "IT Admin" });
  await idp.addAccount({ email: `ada@${DOMAIN}`, name: "Ada" });
  await idp.addAccount({ email: colleague.email, name: "Producer" });
}, 180_000);

afterAll(async () => {
  for (const ctx of contexts) {
    await ctx.close();
  }
  await db?.end();
  await idp?.close();
  await service?.close();
  for (const dir of dirs) {
    await rm(dir, { recursive: true, force: true });
  }
}, 60_000);

it("configures, tests, requires SSO; a new member signs in twice; password and disabled refused", async () => {
  const { origin } = service;
  const ssoPage = `${origin}/settings/studios/${tenantId}/sso`;

  // 1. The owner signs in with their password and opens Single sign-on.
  const ownerCtx = await browser();
  const o = await ownerCtx.newPage();
  await o.goto(`${origin}/sign-in`);
  await o.getByLabel("Email").fill(owner.email);
  await o.getByLabel("Password").fill(owner.password);
  await o.getByRole("button", { name: "Sign in" }).click();
  await o.waitForURL((u) => u.pathname === "/");
  await o.goto(ssoPage);
  await o.getByRole("heading", { name: `Single sign-on for ${STUDIO}` }).waitFor();

  // 2. IT registers the app at the provider with the callback URL the page shows.
  const callbackUrl = (await o.locator("#callback-url").textContent()) ?? "";
  expect(callbackUrl).toBe(`${origin}/sso/callback`);
  await idp.addClient({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [callbackUrl] });

  // 3. Configure and test: the owner is sent to the provider and signs in there as IT's account.
  await o.getByLabel("Issuer URL").fill(idp.issuer);
  await o.getByLabel("Client ID").fill(CLIENT_ID);
  await o.getByLabel("Client secret").fill(CLIENT_SECRET);
  await o.getByLabel("Email domains").fill(DOMAIN);
  await o.getByRole("button", { name: "Test sign-in and save" }).click();
  await providerLogin(o, `it-admin@${DOMAIN}`);
  await o.getByText("Test sign-in succeeded").waitFor();
  expect(new URL(o.url()).pathname).toBe(`/settings/studios/${tenantId}/sso`);
  expect(await o.getByText(CLIENT_SECRET).count()).toBe(0);

  // 4. Require it, naming the owner as break-glass.
  await o.getByLabel("Require single sign-on for this studio's members").check();
  await o.getByLabel("Break-glass owner (keeps password sign-in)").selectOption(owner.id);
  await o.getByRole("button", { name: "Save requirement" }).click();
  await o.getByText("Required.").waitFor();

  // 5. Someone new at the studio signs in with the provider: made a member on the spot.
  const adaCtx = await browser();
  const a = await adaCtx.newPage();
  await startSso(a, `ada@${DOMAIN}`);
  await providerLogin(a, `ada@${DOMAIN}`);
  await a.waitForURL((u) => u.origin === origin && u.pathname === "/");
  await a.getByText(STUDIO).first().waitFor();
  expect(
    await count(
      "SELECT 1 FROM users u JOIN memberships m ON m.user_id = u.id WHERE u.email = $1 AND m.tenant_id = $2 AND m.role = 'member'",
      [`ada@${DOMAIN}`, tenantId],
    ),
  ).toBe(1);

  // 6. Signs out and in again: the provider remembers her (no form this time), the same account.
  await a.getByRole("button", { name: "Sign out" }).click();
  await a.waitForURL((u) => u.pathname === "/sign-in");
  await startSso(a, `ada@${DOMAIN}`);
  await a.waitForURL((u) => u.origin === origin && u.pathname === "/");
  await a.getByText(STUDIO).first().waitFor();
  expect(await count("SELECT 1 FROM users WHERE email = $1", [`ada@${DOMAIN}`])).toBe(1);
  expect(
    await count("SELECT 1 FROM sso_identities WHERE email = $1 AND issuer = $2", [
      `ada@${DOMAIN}`,
      idp.issuer,
    ]),
  ).toBe(1);

  // 7. A member's password sign-in is refused while SSO is required.
  const pwCtx = await browser();
  const p = await pwCtx.newPage();
  await p.goto(`${origin}/sign-in`);
  await p.getByLabel("Email").fill(colleague.email);
  await p.getByLabel("Password").fill(colleague.password);
  await p.getByRole("button", { name: "Sign in" }).click();
  await p.getByText(`${STUDIO} requires single sign-on`).waitFor();
  expect(new URL(p.url()).pathname).toBe("/sign-in");
  expect((await pwCtx.cookies(origin)).some((c) => c.name === "gt_session")).toBe(false);

  // 8. Ada leaves: disabled at the provider, she cannot sign in again (signed out first).
  await a.getByRole("button", { name: "Sign out" }).click();
  await a.waitForURL((u) => u.pathname === "/sign-in");
  await idp.setDisabled(`ada@${DOMAIN}`, true);
  await startSso(a, `ada@${DOMAIN}`);
  await providerLogin(a, `ada@${DOMAIN}`);
  await a.getByText("This account is disabled").waitFor();
  expect((await adaCtx.cookies(origin)).some((c) => c.name === "gt_session")).toBe(false);

  // The audit log has each step.
  const actions = await db.query<{ action: string; outcome: string; reason: string | null }>(
    "SELECT action, outcome, detail->>'reason' AS reason FROM audit_log WHERE tenant_id = $1 ORDER BY at, id",
    [tenantId],
  );
  const seen = actions.rows.map((r) => `${r.action}:${r.outcome}${r.reason ? `:${r.reason}` : ""}`);
  expect(seen).toEqual(
    expect.arrayContaining([
      "sso.configured:success",
      "sso.enforcement_changed:success",
      "member.provisioned:success",
      "user.signed_in:success",
      "user.sign_in_failed:denied:sso_required",
    ]),
  );
}, 120_000);
