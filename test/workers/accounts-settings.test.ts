import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { apiKeys } from "../../schema/pg/schema.js";
import { LAST_USED_RESOLUTION_MS, lastUsedIsStale } from "../../workers/shared/credentials/last-used.js";
import { batchOf } from "../support/batches.js";
import { Browser, csrfOf, seedUser, unescapeHtml } from "../support/browser.js";
import { seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, ingest } from "../support/http.js";

let t: Tenant;
let other: Tenant;
let owner: Browser;
let member: Browser;

beforeAll(async () => {
  t = await seedTenant("pro", "Keys Studio");
  other = await seedTenant("pro", "Keys Neighbour");
  const o = await seedUser(t.tenantId, "owner");
  const m = await seedUser(t.tenantId, "member");
  owner = new Browser();
  member = new Browser();
  expect((await owner.signIn(o.email, o.password)).status).toBe(303);
  expect((await member.signIn(m.email, m.password)).status).toBe(303);
});

const keysPath = (projectId: string) => `/settings/projects/${projectId}/api-keys`;

/** Polls the key's row until `check` holds: the write happens after the response, in waitUntil. */
async function keyRowWhen(keyId: string, check: (lastUsedAt: Date | null) => boolean) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const [row] = await withDb((db) => db.select().from(apiKeys).where(eq(apiKeys.id, keyId)));
    if (row && check(row.lastUsedAt)) {
      return row;
    }
    if (Date.now() > deadline) {
      throw new Error(`key ${keyId}: condition not met, lastUsedAt=${row?.lastUsedAt?.toISOString()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("API Keys page", () => {
  it("lists the project's keys with name, prefix, scopes, created and last used; never a secret", async () => {
    const res = await owner.get(keysPath(t.projectId));
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("<h1>API Keys</h1>");
    for (const h of ["Name", "Prefix", "Scopes", "Created", "Last used"]) {
      expect(html).toContain(`<th scope="col">${h}</th>`);
    }
    for (const key of Object.values(t.keys)) {
      expect(html).toContain(`<code>${key.key.slice(0, 10)}…</code>`);
      expect(html).not.toContain(key.key);
    }
    expect(html).toContain("<td>analytics:read, resources:write, data:admin</td>");
    expect(html).toContain('<label for="key-name">Name</label>');
    expect(html).toContain('<label for="key-preset">Preset</label>');
    expect(html).toContain('<option value="full">Full: analytics:read, resources:write, data:admin</option>');
  });

  it("creates a key from a preset, shows its secret once; it works, records its use, and revoked it is refused", async () => {
    const res = await owner.submit(keysPath(t.projectId), { name: "Build server", preset: "readwrite" });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    const secret = unescapeHtml(/id="new-key" class="secret" readonly value="([^"]+)"/.exec(html)?.[1] ?? "");
    expect(secret).toMatch(/^gta_[A-Za-z0-9_-]{40}$/);
    expect(html).toContain("shown this once");
    // The key as stored: named, read & write, never used; the secret itself is nowhere in the row.
    const [row] = await withDb((db) =>
      db
        .select()
        .from(apiKeys)
        .where(eq(apiKeys.prefix, secret.slice(0, 10))),
    );
    expect(row).toMatchObject({
      name: "Build server",
      preset: "readwrite",
      scopes: ["analytics:read", "resources:write"],
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(JSON.stringify(row)).not.toContain(secret);
    // Shown once: the page never shows it again.
    const again = await (await owner.get(keysPath(t.projectId))).text();
    expect(again).not.toContain(secret);
    expect(again).toContain("<td>Build server</td>");

    const who = await api("/v1/whoami", { key: secret });
    expect(who.status).toBe(200);
    expect(((await who.json()) as { data: { projectId: string } }).data.projectId).toBe(t.projectId);
    const used = await keyRowWhen(row?.id ?? "", (at) => at !== null);
    expect(Math.abs((used.lastUsedAt?.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);
    expect(await (await owner.get(keysPath(t.projectId))).text()).toContain(
      `<time datetime="${used.lastUsedAt?.toISOString()}">`,
    );

    const revoke = await owner.submit(
      keysPath(t.projectId),
      {},
      `${keysPath(t.projectId)}/${row?.id}/revoke`,
    );
    expect(revoke.status).toBe(303);
    expect(revoke.headers.get("location")).toBe(`${keysPath(t.projectId)}?revoked=1`);
    expect((await api("/v1/whoami", { key: secret })).status).toBe(401);
    expect(await (await owner.get(keysPath(t.projectId))).text()).not.toContain("<td>Build server</td>");
  });

  it("lastUsedAt: a stale value is brought up to date by the next use, in the background", async () => {
    const key = t.keys.read;
    const stale = new Date(Date.now() - LAST_USED_RESOLUTION_MS - 60_000);
    await withDb((db) => db.update(apiKeys).set({ lastUsedAt: stale }).where(eq(apiKeys.id, key.id)));
    expect((await api(`/v1/projects/${t.projectId}/maps`, { key: key.key })).status).toBe(200);
    await keyRowWhen(key.id, (at) => (at?.getTime() ?? 0) > stale.getTime());
  });

  it("lastUsedAt: an ingest key's use is recorded by the ingest Worker too", async () => {
    const key = t.keys.ingest;
    const [before] = await withDb((db) => db.select().from(apiKeys).where(eq(apiKeys.id, key.id)));
    expect(before?.lastUsedAt).toBeNull();
    const res = await ingest(batchOf(2), key.key);
    expect(res.status, await res.clone().text()).toBe(202);
    const row = await keyRowWhen(key.id, (at) => at !== null);
    expect(Math.abs((row.lastUsedAt?.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);
  });

  it("lastUsedAt is written at most once per window: fresh values are left alone", () => {
    const now = Date.now();
    expect(lastUsedIsStale(null, now)).toBe(true);
    expect(lastUsedIsStale(new Date(now - LAST_USED_RESOLUTION_MS + 1000), now)).toBe(false);
    expect(lastUsedIsStale(new Date(now - LAST_USED_RESOLUTION_MS), now)).toBe(true);
  });

  it("refuses a bad name or preset with the field named, and creates nothing", async () => {
    const before = await withDb((db) => db.select().from(apiKeys).where(eq(apiKeys.projectId, t.projectId)));
    const long = await owner.submit(keysPath(t.projectId), { name: "x".repeat(101), preset: "read" });
    expect(long.status).toBe(400);
    expect(await long.text()).toContain("Name: at most 100 characters.");
    const bad = await owner.submit(keysPath(t.projectId), { name: "n", preset: "root" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("Preset: choose one of the listed presets.");
    const noCsrf = await owner.post(keysPath(t.projectId), { name: "n", preset: "read" });
    expect(noCsrf.status).toBe(403);
    const after = await withDb((db) => db.select().from(apiKeys).where(eq(apiKeys.projectId, t.projectId)));
    expect(after.length).toBe(before.length);
  });

  it("a member manages keys but not Full ones", async () => {
    const page = await (await member.get(keysPath(t.projectId))).text();
    expect(page).not.toContain('<option value="full">');
    expect(page).not.toContain(`${keysPath(t.projectId)}/${t.keys.full.id}/revoke`);
    const full = await member.submit(keysPath(t.projectId), { name: "admin", preset: "full" });
    expect(full.status).toBe(403);
    const revokeFull = await member.post(`${keysPath(t.projectId)}/${t.keys.full.id}/revoke`, {
      csrf: csrfOf(page),
    });
    expect(revokeFull.status).toBe(403);
    expect((await api("/v1/whoami", { key: t.keys.full.key })).status).toBe(200);
    const ingest = await member.submit(keysPath(t.projectId), { name: "SDK", preset: "ingest" });
    expect(ingest.status).toBe(200);
    expect(await ingest.text()).toMatch(/value="gta_/);
  });

  it("another studio's project, or a key of another project, is not found", async () => {
    expect((await owner.get(keysPath(other.projectId))).status).toBe(404);
    const page = await (await owner.get(keysPath(t.projectId))).text();
    const create = await owner.post(keysPath(other.projectId), { csrf: csrfOf(page), preset: "read" });
    expect(create.status).toBe(404);
    const revoke = await owner.post(`${keysPath(t.projectId)}/${other.keys.read.id}/revoke`, {
      csrf: csrfOf(page),
    });
    expect(revoke.status).toBe(404);
    expect((await api("/v1/whoami", { key: other.keys.read.key })).status).toBe(200);
  });
});
