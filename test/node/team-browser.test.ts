import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Cookie, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startCallbackServer } from "../support/callback-server.js";
import { launchChromium } from "../support/chromium.js";
import { linkIn, mailTo } from "../support/mail.js";
import { adminCli, type Service } from "../support/service.js";
import { sharedService } from "../support/shared-service.js";

// A studio bringing its team, in headless Chromium against the service as `npm run dev` serves it,
// with every mail read from the real SMTP catcher: sign-up and its verification link; an invitation
// accepted by someone new; a role change; a removal that the removed person's open page and CLI token
// feel on their next request; a password reset that ends the other sessions; and a lockout from one
// address that leaves the owner on another free to sign in. One Chromium: people take turns in it,
// each with their own cookies.

let service: Service;
let context: BrowserContext;
let profileDir: string;
let callback: { server: Server; port: number; received: URL[] };

/** An admin CLI command's answer, with its `id` as text. */
async function admin(...args: string[]): Promise<Record<string, unknown> & { id: string }> {
  const answer = await adminCli(service, ...args);
  return { ...answer, id: String(answer.id) };
}

beforeAll(async () => {
  service = await sharedService();
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

const unique = (tag: string) => `${tag}-${crypto.randomUUID().slice(0, 8)}@studio.test`;

/** A studio with its owner, set up by the operator's CLI. */
async function tenantWithOwner(name: string) {
  const tenantId = (await admin("tenant", "create", "--name", name, "--plan", "pro")).id;
  const projectId = (await admin("project", "create", "--tenant", tenantId, "--name", `${name} Game`)).id;
  const email = unique("owner");
  const password = "owner-password-1";
  await admin(
    "user",
    "create",
    "--tenant",
    tenantId,
    "--email",
    email,
    "--password",
    password,
    "--role",
    "owner",
  );
  return { tenantId, projectId, email, password };
}

/** Takes turns in the one browser: whose cookies it holds (saved from, and restored to, each person). */
async function as(who: Cookie[]): Promise<void> {
  await context.clearCookies();
  if (who.length) {
    await context.addCookies(who);
  }
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${service.origin}/sign-in`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Projects" }).waitFor();
}

/** The CLI's login for the signed-in person: authorize with PKCE, Allow, exchange the code. */
async function cliToken(page: Page): Promise<{ access_token: string; refresh_token: string }> {
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(48))).toString("base64url");
  const challenge = Buffer.from(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)),
  ).toString("base64url");
  const redirectUri = `http://127.0.0.1:${callback.port}/callback`;
  const state = crypto.randomUUID();
  const authorize = new URL("/oauth/authorize", service.origin);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: "fdc_framedash_cli",
    redirect_uri: redirectUri,
    scope: "analytics:read",
    state,
    code_challenge: challenge,
    code_challenge_method: "S256",
  })) {
    authorize.searchParams.set(k, v);
  }
  await page.goto(authorize.toString());
  await page.getByRole("button", { name: "Allow" }).click();
  await page.waitForURL((u) => u.port === String(callback.port));
  const code = callback.received.find((u) => u.searchParams.get("state") === state)?.searchParams.get("code");
  const res = await fetch(`${service.origin}/api/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: code ?? "",
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: "fdc_framedash_cli",
    }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; refresh_token: string };
}

it("signs up: the verification link from the mail creates the studio, its first project, and signs in", async () => {
  const page = await context.newPage();
  await as([]);
  const email = unique("founder");
  await page.goto(`${service.origin}/sign-in`);
  await page.getByRole("link", { name: "Sign up" }).click();
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("founder-password-1");
  await page.getByLabel("Studio name").fill("Founders Inc");
  await page.getByRole("button", { name: "Sign up" }).click();
  await page.getByRole("heading", { name: "Check your email" }).waitFor();
  const link = linkIn(await mailTo(service.inboxUrl, email, /Confirm your email/), "/sign-up/verify");
  await page.goto(link);
  await page.getByRole("button", { name: "Confirm and create my studio" }).click();
  await page.getByRole("heading", { name: "Founders Inc (owner)" }).waitFor();
  expect(await page.getByRole("link", { name: "My first game" }).count()).toBe(1);
  await page.getByRole("link", { name: "Members" }).click();
  expect(await page.getByRole("cell", { name: email, exact: true }).count()).toBe(1);
  await page.close();
}, 90_000);

it("invites someone new who joins and sees the project; a role change; removal cuts their open page and CLI token", async () => {
  const s = await tenantWithOwner("Invite Studio");
  const page = await context.newPage();
  await as([]);
  await signIn(page, s.email, s.password);
  const owner = await context.cookies();
  const invitee = unique("designer");
  await page.goto(`${service.origin}/settings/studios/${s.tenantId}/members`);
  await page.getByLabel("Email").fill(invitee);
  await page.getByLabel("Role", { exact: true }).selectOption("member");
  await page.getByRole("button", { name: "Send invitation" }).click();
  await page.getByText("Invitation sent.").waitFor();
  expect(await page.getByRole("cell", { name: invitee, exact: true }).count()).toBe(1);

  // The invitee, in their own cookies, opens the mail's link and chooses a password.
  await as([]);
  const link = linkIn(
    await mailTo(service.inboxUrl, invitee, /invited to Invite Studio/),
    "/invitations/accept",
  );
  await page.goto(link);
  await page.getByLabel("Your name").fill("Dana Designer");
  await page.getByLabel("Choose a password").fill("designer-password-1");
  await page.getByRole("button", { name: "Accept invitation" }).click();
  await page.getByRole("link", { name: "Invite Studio Game" }).first().click();
  await page.waitForURL((u) => u.pathname === `/projects/${s.projectId}/overview`);
  const tokens = await cliToken(page);
  const status = `${service.origin}/api/v1/projects/${s.projectId}/status`;
  expect((await fetch(status, { headers: { Authorization: `Bearer ${tokens.access_token}` } })).status).toBe(
    200,
  );
  await page.goto(`${service.origin}/projects/${s.projectId}/overview`);
  const member = await context.cookies();

  // The owner makes them an owner, then a member again, then removes them.
  await as(owner);
  const members = await context.newPage();
  await members.goto(`${service.origin}/settings/studios/${s.tenantId}/members`);
  const label = `Dana Designer (${invitee})`;
  await members.getByLabel(`Role of ${label}`, { exact: true }).selectOption("owner");
  await members.getByRole("button", { name: `Change role of ${label}` }).click();
  await members.getByText("Role changed.").waitFor();
  expect(await members.getByLabel(`Role of ${label}`, { exact: true }).inputValue()).toBe("owner");
  await members.getByLabel(`Role of ${label}`, { exact: true }).selectOption("member");
  await members.getByRole("button", { name: `Change role of ${label}` }).click();
  await members.getByText("Role changed.").waitFor();
  // Remove asks first (their keys would be listed, ticked); confirm.
  await members.getByRole("button", { name: `Remove ${label}` }).click();
  await members.getByRole("heading", { name: `Remove ${label}?` }).waitFor();
  await members.getByText("They created no API key that still works in this studio.").waitFor();
  await members.getByRole("button", { name: `Remove ${label}` }).click();
  await members.getByText("Member removed").waitFor();
  expect(await members.getByRole("cell", { name: invitee, exact: true }).count()).toBe(0);
  await members.close();

  // Their open page, reloaded, and their CLI token: nothing of the studio any more.
  await as(member);
  const reload = await page.reload();
  expect(reload?.status()).toBe(404);
  expect((await fetch(status, { headers: { Authorization: `Bearer ${tokens.access_token}` } })).status).toBe(
    401,
  );
  const refreshed = await fetch(`${service.origin}/api/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: "fdc_framedash_cli",
    }),
  });
  expect(refreshed.status).toBe(400);
  await page.close();
}, 120_000);

it("resets a forgotten password by mail: the old one is refused and other sessions end", async () => {
  const s = await tenantWithOwner("Reset Studio");
  const page = await context.newPage();
  await as([]);
  await signIn(page, s.email, s.password);
  const elsewhere = await context.cookies();

  await as([]);
  await page.goto(`${service.origin}/sign-in`);
  await page.getByRole("link", { name: "Forgot your password?" }).click();
  await page.getByLabel("Email").fill(s.email);
  await page.getByRole("button", { name: "Send reset link" }).click();
  await page.getByRole("heading", { name: "Check your email" }).waitFor();
  const link = linkIn(await mailTo(service.inboxUrl, s.email, /Reset your/), "/password-reset/confirm");
  await page.goto(link);
  await page.getByLabel("New password").fill("the-new-password-1");
  await page.getByRole("button", { name: "Set password" }).click();
  await page.getByText("Password changed: you were signed out everywhere.").waitFor();

  await page.getByLabel("Email").fill(s.email);
  await page.getByLabel("Password").fill(s.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByText("Sign-in failed.").waitFor();
  await signIn(page, s.email, "the-new-password-1");

  // The session signed in before the reset is over.
  await as(elsewhere);
  await page.goto(`${service.origin}/settings/account`);
  expect(new URL(page.url()).pathname).toBe("/sign-in");
  await page.close();
}, 90_000);

it("a stranger's failures lock out only their own address: the owner signs in from another", async () => {
  const s = await tenantWithOwner("Lockout Studio");
  const page = await context.newPage();
  await as([]);
  await page.setExtraHTTPHeaders({ "CF-Connecting-IP": "203.0.113.66" });
  let last = 0;
  for (let i = 0; i < 11; i++) {
    await page.goto(`${service.origin}/sign-in`);
    await page.getByLabel("Email").fill(s.email);
    await page.getByLabel("Password").fill(`wrong-${i}`);
    const answer = page.waitForResponse(
      (r) => r.url().endsWith("/sign-in") && r.request().method() === "POST",
    );
    await page.getByRole("button", { name: "Sign in" }).click();
    last = (await answer).status();
  }
  expect(last).toBe(429);
  // The stranger's address is refused even with the right password...
  await page.goto(`${service.origin}/sign-in`);
  await page.getByLabel("Email").fill(s.email);
  await page.getByLabel("Password").fill(s.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByText("Sign-in failed.").waitFor();
  // ...the owner's is not.
  await page.setExtraHTTPHeaders({ "CF-Connecting-IP": "198.51.100.7" });
  await signIn(page, s.email, s.password);
  await page.close();
}, 120_000);
