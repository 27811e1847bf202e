import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startCallbackServer } from "../support/callback-server.js";
import { launchChromium } from "../support/chromium.js";
import type { OkBody } from "../support/schema.js";
import { adminCli, type Service } from "../support/service.js";
import { sharedService } from "../support/shared-service.js";

// A person in headless Chromium against the service as `npm run dev` serves it: signs in, approves a
// CLI-style authorization whose loopback redirect this test receives, creates an API key on the API
// Keys page and uses it, revokes it and sees it refused. Setup (users, studio) goes through the admin
// CLI, as an operator would.

let service: Service;
let context: BrowserContext;
let profileDir: string;
let callback: { server: Server; port: number; received: URL[] };
const seed = {
  tenantId: "",
  projectId: "",
  email: "qa.lead@studio.test",
  password: "browser-test-password-1",
};

/** An admin CLI command's answer, with its `id` as text. */
async function admin(...args: string[]): Promise<Record<string, unknown> & { id: string }> {
  const answer = await adminCli(service, ...args);
  return { ...answer, id: String(answer.id) };
}

function b64url(buf: Buffer): string {
  return buf.toString("base64url");
}

beforeAll(async () => {
  service = await sharedService();
  seed.tenantId = (await admin("tenant", "create", "--name", "Browser Studio", "--plan", "pro")).id;
  seed.projectId = (await admin("project", "create", "--tenant", seed.tenantId, "--name", "Browser Game")).id;
  const user = await admin(
    "user",
    "create",
    "--tenant",
    seed.tenantId,
    "--email",
    seed.email,
    "--password",
    seed.password,
    "--role",
    "owner",
  );
  expect(user.id).toMatch(/^[0-9a-f-]{36}$/);
  const client = await admin(
    "client",
    "create",
    "--name",
    "Editor plugin",
    "--redirect-uri",
    "http://127.0.0.1/cb",
  );
  expect(client).toMatchObject({
    id: expect.stringMatching(/^fdc_/),
    name: "Editor plugin",
    redirectUris: ["http://127.0.0.1/cb"],
  });
  callback = await startCallbackServer();
  profileDir = await mkdtemp(join(tmpdir(), "chromium-profile-"));
  context = await launchChromium(profileDir);
}, 180_000);

afterAll(async () => {
  await context?.close();
  callback?.server.close();
  await service?.close();
  if (profileDir) {
    await rm(profileDir, { recursive: true, force: true });
  }
}, 60_000);

it("signs in, approves a loopback authorization, creates, uses and revokes an API key", async () => {
  const page = await context.newPage();
  const { origin } = service;

  // 1. The CLI opens /oauth/authorize with PKCE; the browser is sent to sign in first.
  const verifier = b64url(Buffer.from(crypto.getRandomValues(new Uint8Array(48))));
  const challenge = b64url(
    Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
  );
  const redirectUri = `http://127.0.0.1:${callback.port}/callback`;
  const authorize = new URL("/oauth/authorize", origin);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: "fdc_framedash_cli",
    redirect_uri: redirectUri,
    scope: "analytics:read",
    state: "browser-state-1",
    code_challenge: challenge,
    code_challenge_method: "S256",
  })) {
    authorize.searchParams.set(k, v);
  }
  await page.goto(authorize.toString());
  expect(new URL(page.url()).pathname).toBe("/sign-in");
  await page.getByLabel("Email").fill(seed.email);
  await page.getByLabel("Password").fill(seed.password);
  await page.getByRole("button", { name: "Sign in" }).click();

  // 2. Consent names the client and the scope; Allow sends the browser to the loopback receiver.
  await page.getByRole("heading", { name: "Allow Framedash CLI?" }).waitFor();
  expect(await page.getByText("(analytics:read)").count()).toBe(1);
  await page.getByRole("button", { name: "Allow" }).click();
  await page.waitForURL((u) => u.port === String(callback.port));
  const cb = callback.received.find((u) => u.pathname === "/callback");
  expect(cb?.pathname).toBe("/callback");
  expect(cb?.searchParams.get("state")).toBe("browser-state-1");
  const code = cb?.searchParams.get("code") ?? "";

  // The CLI's side: exchange the code, call the API with the token.
  const tokenRes = await fetch(`${origin}/api/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: "fdc_framedash_cli",
    }),
    redirect: "manual",
  });
  expect(tokenRes.status).toBe(200);
  const tokens = (await tokenRes.json()) as { access_token: string; expires_in: number; scope: string };
  expect(tokens.expires_in).toBe(3600);
  expect(tokens.scope).toBe("analytics:read");
  const projects = await fetch(`${origin}/api/v1/projects`, {
    headers: { Authorization: `Bearer ${tokens.access_token}` },
  });
  expect(projects.status).toBe(200);
  expect(((await projects.json()) as OkBody<"/v1/projects">).data.map((p) => p.id)).toEqual([seed.projectId]);

  // 3. Connected apps shows the grant.
  await page.goto(`${origin}/settings/connected-apps`);
  await page.getByRole("cell", { name: "Framedash CLI", exact: true }).waitFor();

  // 4. API Keys page: create a Read-only key; its secret is shown once.
  await page.goto(`${origin}/`);
  await page.getByRole("link", { name: "API Keys" }).click();
  await page.getByRole("heading", { name: "API Keys" }).waitFor();
  await page.getByLabel("Name").fill("Browser test key");
  await page.getByLabel("Preset").selectOption("read");
  await page.getByRole("button", { name: "Create key" }).click();
  const secret = await page.getByLabel("New API key").inputValue();
  expect(secret).toMatch(/^gta_/);
  // The POST redirected to the page (Post/Redirect/Get): a reload shows the key's row, not its secret,
  // and creates no second key.
  expect(new URL(page.url()).pathname).toBe(`/settings/projects/${seed.projectId}/api-keys`);
  await page.reload();
  await page.getByRole("heading", { name: "API Keys" }).waitFor();
  expect(await page.getByLabel("New API key").count()).toBe(0);
  expect(await page.getByRole("cell", { name: "Browser test key", exact: true }).count()).toBe(1);
  const whoami = await fetch(`${origin}/api/v1/whoami`, { headers: { "X-API-Key": secret } });
  expect(whoami.status).toBe(200);
  expect(((await whoami.json()) as OkBody<"/v1/whoami">).data).toMatchObject({
    projectId: seed.projectId,
    scopes: ["analytics:read"],
  });

  // 5. Revoke it on the page: refused from then on.
  await page.getByRole("button", { name: `Revoke Browser test key (${secret.slice(0, 10)}…)` }).click();
  await page.getByText("Key revoked: it no longer works.").waitFor();
  expect(await page.getByRole("cell", { name: "Browser test key", exact: true }).count()).toBe(0);
  const refused = await fetch(`${origin}/api/v1/whoami`, { headers: { "X-API-Key": secret } });
  expect(refused.status).toBe(401);
}, 60_000);

it("a session ended from another browser is signed out on its next request", async () => {
  const { origin } = service;
  const email = "two.browsers@studio.test";
  const password = "two-browsers-password-1";
  await admin("user", "create", "--tenant", seed.tenantId, "--email", email, "--password", password);
  // A second, separate browser (its own profile, cookies and process): the person's laptop.
  const laptopDir = await mkdtemp(join(tmpdir(), "chromium-profile-"));
  const laptop = await launchChromium(laptopDir);
  try {
    const signIn = async (ctx: BrowserContext) => {
      await ctx.clearCookies();
      const page = await ctx.newPage();
      await page.goto(`${origin}/sign-in`);
      await page.getByLabel("Email").fill(email);
      await page.getByLabel("Password").fill(password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL((u) => u.pathname === "/");
      return page;
    };
    const here = await signIn(context);
    const there = await signIn(laptop);

    // The Account page lists both, this one marked; "End" the other.
    await here.goto(`${origin}/settings/account`);
    await here.getByText("(this browser)").waitFor();
    expect(await here.getByRole("cell", { name: "Chrome on Linux", exact: true }).count()).toBe(1);
    const end = here.locator("button", { hasText: /^End$/ });
    expect(await end.count()).toBe(1);
    await end.click();
    await here.getByText("Session ended: that browser is signed out.").waitFor();
    expect(await here.locator("button", { hasText: /^End$/ }).count()).toBe(0);

    // The laptop's next request: signed out, on the sign-in page.
    await there.goto(`${origin}/settings/account`);
    await there.waitForURL((u) => u.pathname === "/sign-in");
    await there.getByLabel("Email").waitFor();
    // This browser stays signed in.
    await here.reload();
    await here.getByRole("heading", { name: "Your account" }).waitFor();
  } finally {
    await laptop.close();
    await rm(laptopDir, { recursive: true, force: true });
  }
}, 90_000);
