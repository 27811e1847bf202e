import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launchChromium } from "../support/chromium.js";
import type { OkBody } from "../support/schema.js";
import { adminCli, type Service } from "../support/service.js";
import { sharedService } from "../support/shared-service.js";

// The API reference at /api/docs in headless Chromium against the service as `npm run dev` serves it:
// Swagger UI and our initializer load from this origin under the page's CSP (script-src 'self'), render
// the operations of /api/v1/openapi.json, and "Try it" sends the reader's own key.

let service: Service;
let context: BrowserContext;
let profileDir: string;

function admin(...args: string[]): Promise<Record<string, unknown>> {
  return adminCli(service, ...args);
}

beforeAll(async () => {
  service = await sharedService();
  profileDir = await mkdtemp(join(tmpdir(), "chromium-docs-"));
  context = await launchChromium(profileDir, { viewport: { width: 1280, height: 900 } });
}, 180_000);

afterAll(async () => {
  await context?.close();
  await service?.close();
  if (profileDir) {
    await rm(profileDir, { recursive: true, force: true });
  }
}, 60_000);

it("renders the operations of the served document with scripts of this origin only, and no CSP violation", async () => {
  const { origin } = service;
  const page = await context.newPage();
  const requested: string[] = [];
  const problems: string[] = [];
  page.on("request", (req) => requested.push(req.url()));
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") {
      problems.push(`console: ${msg.text()}`);
    }
  });
  const res = await page.goto(`${origin}/api/docs`);
  expect(res?.status()).toBe(200);
  expect(res?.headers()["content-security-policy"]).toContain("script-src 'self'");

  // The operations list, by operation id and summary, as the document names them.
  const doc = (await (await fetch(`${origin}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { operationId: string; summary?: string }>>;
  };
  const whoami = doc.paths["/v1/whoami"]?.get;
  expect(whoami?.operationId).toBe("getWhoami");
  const operation = page.locator(".opblock", { hasText: "getWhoami" });
  await operation.waitFor();
  if (whoami?.summary) {
    await expect(operation.getByText(whoami.summary, { exact: true }).count()).resolves.toBe(1);
  }
  expect(await page.locator(".opblock").count()).toBeGreaterThan(30);
  await page.getByRole("heading", { name: "Game Telemetry Analytics API" }).first().waitFor();

  // Everything the page loaded came from this origin (or is inline data).
  expect(requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"))).toEqual([]);
  expect(requested.filter((url) => url.endsWith(".js"))).toHaveLength(2);
  expect(problems).toEqual([]);
}, 60_000);

it("Try it: the reader's own key, entered on the page, calls the API from the browser", async () => {
  const { origin } = service;
  const tenantId = String((await admin("tenant", "create", "--name", "Docs Studio", "--plan", "pro")).id);
  const projectId = String(
    (await admin("project", "create", "--tenant", tenantId, "--name", "Docs Game")).id,
  );
  const key = String((await admin("key", "create", "--project", projectId, "--preset", "read")).key);
  const page = await context.newPage();
  await page.goto(`${origin}/api/docs`);
  await page.locator(".opblock", { hasText: "getWhoami" }).waitFor();

  await page.locator(".auth-wrapper .authorize").click();
  const dialog = page.locator(".modal-ux");
  // The X-API-Key scheme's form (one per scheme).
  const apiKey = dialog.locator("form").filter({ hasText: "ApiKey (apiKey)" });
  await apiKey.locator("input").fill(key);
  await apiKey.getByRole("button", { name: "Apply credentials" }).click();
  await apiKey.getByRole("button", { name: "Remove authorization" }).waitFor();
  await dialog.locator(".close-modal").click();

  const operation = page.locator(".opblock", { hasText: "getWhoami" });
  await operation.locator(".opblock-summary").first().click();
  await operation.getByRole("button", { name: "Try it out" }).click();
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url() === `${origin}/api/v1/whoami`),
    operation.getByRole("button", { name: "Execute" }).click(),
  ]);
  expect(response.status()).toBe(200);
  expect(response.request().headers()["x-api-key"]).toBe(key);
  expect(((await response.json()) as OkBody<"/v1/whoami">).data.projectId).toBe(projectId);
  // The page shows the server's answer.
  const status = operation.locator(".live-responses-table tbody .response-col_status").first();
  expect((await status.textContent())?.trim()).toBe("200");
}, 60_000);
