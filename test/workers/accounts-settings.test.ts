import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { apiKeys } from "../../schema/pg/schema.js";
import { LAST_USED_RESOLUTION_MS, lastUsedIsStale } from "../../workers/shared/credentials/last-used.js";
import { batchOf } from "../support/batches.js";
import { Browser, csrfOf, seedUser, unescapeHtml } from "../support/browser.js";
import { seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, ingest } from "../support/http.js";
import type { OkBody } from "../support/schema.js";
import { waitFor } from "../support/wait.js";

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

/** The secret of the key just created, as the page shows it ("" when it shows none). */
const newKeyOf = (html: string) =>
  unescapeHtml(/id="new-key" class="secret" readonly value="([^"]+)"/.exec(html)?.[1] ?? "");

/** Polls the key's row until `check` holds: the write happens after the response, in waitUntil. */
async function keyRowWhen(keyId: string, check: (lastUsedAt: Date | null) => boolean) {
  const row = await waitFor(
    async () => (await withDb((db) => db.select().from(apiKeys).where(eq(apiKeys.id, keyId))))[0],
    (r) => r !== undefined && check(r.lastUsedAt),
    { timeoutMs: 15_000, message: `key ${keyId}: lastUsedAt condition` },
  );
  return row as NonNullable<typeof row>;
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
    const posted = await owner.submit(keysPath(t.projectId), { name: "Build server", preset: "readwrite" });
    expect(posted.status).toBe(303);
    expect(posted.headers.get("location")).toBe(keysPath(t.projectId));
    const res = await owner.get(keysPath(t.projectId));
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    const secret = newKeyOf(html);
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
    expect(again).not.toContain('id="new-key"');
    expect(again).not.toContain(secret);
    expect(again).toContain("<td>Build server</td>");

    const who = await api("/v1/whoami", { key: secret });
    expect(who.status).toBe(200);
    expect(((await who.json()) as OkBody<"/v1/whoami">).data.projectId).toBe(t.projectId);
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

  it("creation is Post/Redirect/Get: a refresh creates no second key, and the secret is shown exactly once", async () => {
    const b = new Browser();
    const u = await seedUser(t.tenantId, "owner");
    expect((await b.signIn(u.email, u.password)).status).toBe(303);
    const countOf = async () =>
      (await withDb((db) => db.select().from(apiKeys).where(eq(apiKeys.projectId, t.projectId)))).length;
    const before = await countOf();

    const posted = await b.submit(keysPath(t.projectId), { name: "Refresh test", preset: "read" });
    expect(posted.status).toBe(303);
    expect(posted.headers.get("location")).toBe(keysPath(t.projectId));
    expect(await posted.text()).not.toContain("gta_");
    // The secret rides sealed in a cookie of this page only: HttpOnly, SameSite=Strict, short-lived.
    const cookie = posted.headers.getSetCookie().find((line) => line.startsWith("gt_new_key="));
    expect(cookie).toMatch(/; Max-Age=120(;|$)/);
    expect(cookie).toContain(`; Path=${keysPath(t.projectId)}`);
    expect(cookie).toContain("; HttpOnly");
    expect(cookie).toContain("; SameSite=Strict");
    const sealed = b.cookies.get("gt_new_key") ?? "";
    expect(sealed.length).toBeGreaterThan(40);
    expect(await countOf()).toBe(before + 1);

    // The redirect's GET shows it, and clears the cookie.
    const shown = await b.get(keysPath(t.projectId));
    expect(shown.status).toBe(200);
    expect(shown.headers.get("cache-control")).toBe("no-store");
    expect(shown.headers.getSetCookie().some((l) => /^gt_new_key=;.*Max-Age=0/.test(l))).toBe(true);
    const html = await shown.text();
    const secret = newKeyOf(html);
    expect(secret).toMatch(/^gta_[A-Za-z0-9_-]{40}$/);
    expect(html.split(secret).length - 1).toBe(1);
    expect(sealed).not.toContain(secret.slice(4));
    expect((await api("/v1/whoami", { key: secret })).status).toBe(200);

    // Refreshing: no secret, no second key.
    const refreshed = await (await b.get(keysPath(t.projectId))).text();
    expect(refreshed).not.toContain(secret);
    expect(refreshed).not.toContain('id="new-key"');
    expect(refreshed).toContain("<td>Refresh test</td>");
    expect(await countOf()).toBe(before + 1);

    // The sealed cookie is this session's: replayed by another signed-in owner, it opens nothing.
    const thief = new Browser();
    const v = await seedUser(t.tenantId, "owner");
    expect((await thief.signIn(v.email, v.password)).status).toBe(303);
    thief.cookies.set("gt_new_key", sealed);
    const stolen = await (await thief.get(keysPath(t.projectId))).text();
    expect(stolen).not.toContain(secret);
    expect(stolen).not.toContain('id="new-key"');
    expect(thief.cookies.has("gt_new_key")).toBe(false);
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
    expect(ingest.status).toBe(303);
    expect(newKeyOf(await (await member.get(keysPath(t.projectId))).text())).toMatch(/^gta_/);
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
