import { describe, expect, it } from "vitest";
import { auditOutside } from "../../workers/api/audit/record.js";
import { auditEntries } from "../support/audit.js";
import { Browser, seedUser } from "../support/browser.js";
import { once, seedTenant, withDb } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import type { Ok, OkBody } from "../support/schema.js";

// Who reads the audit log (owners only; a Full key its project; nobody another studio's), its
// filters and paging, through GET /api/v1/audit-log and the "Audit log" page.

type Page = Ok<"/v1/audit-log">;

const T0 = Date.UTC(2026, 9, 1, 12, 0);

/** A studio with 7 entries of its own (one a minute from T0), an owner and a member signed in. */
const fixture = once(async () => {
  const t = await seedTenant("pro", "Audit Read");
  const other = await seedTenant("pro", "Audit Read Other");
  const owner = await seedUser(t.tenantId, "owner");
  const member = await seedUser(t.tenantId, "member");
  const stranger = await seedUser(other.tenantId, "owner");
  const actor = { type: "user", id: owner.id, label: owner.email, userId: owner.id } as const;
  await withDb(async (db) => {
    for (let i = 0; i < 7; i++) {
      await auditOutside(db, {
        tenantId: t.tenantId,
        projectId: i % 2 === 0 ? t.projectId : t.siblingProjectId,
        actor: i < 5 ? actor : { type: "api_key", id: t.keys.full.id, label: "deploy key" },
        action: i < 3 ? "key.created" : "key.revoked",
        target: { type: "key", id: `k${i}`, label: `key ${i}` },
        at: new Date(T0 + i * 60_000),
      });
    }
    await auditOutside(db, {
      tenantId: other.tenantId,
      actor: { type: "system", id: null, label: "system" },
      action: "key.created",
      at: new Date(T0),
    });
  });
  const sign = async (u: { email: string; password: string }) => {
    const b = new Browser();
    expect((await b.signIn(u.email, u.password)).status).toBe(303);
    return b;
  };
  return { t, other, owner, ob: await sign(owner), mb: await sign(member), sb: await sign(stranger) };
});

const window = `from=${new Date(T0).toISOString()}&to=${new Date(T0 + 10 * 60_000).toISOString()}`;

async function read(b: Browser, query: string): Promise<Page> {
  const res = await b.get(`/api/v1/audit-log?${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as OkBody<"/v1/audit-log">).data;
}

describe("GET /api/v1/audit-log", () => {
  it("an owner's session reads the studio's entries newest first, filtered by time, action, actor and project", async () => {
    const { t, owner, ob } = await fixture();
    const all = await read(ob, window);
    expect(all.entries.map((e) => e.action)).toEqual([
      ...Array(4).fill("key.revoked"),
      ...Array(3).fill("key.created"),
    ]);
    expect((await read(ob, `${window}&action=key.created`)).entries).toHaveLength(3);
    expect((await read(ob, `${window}&action=key`)).entries).toHaveLength(7);
    expect((await read(ob, `${window}&actor=${encodeURIComponent(owner.email)}`)).entries).toHaveLength(5);
    expect((await read(ob, `${window}&actor=${t.keys.full.id}`)).entries).toHaveLength(2);
    const main = await read(ob, `${window}&project=${t.projectId}`);
    expect(main.entries.map((e) => e.projectId)).toEqual(Array(4).fill(t.projectId));
    const narrow = `from=${new Date(T0 + 60_000).toISOString()}&to=${new Date(T0 + 120_000).toISOString()}`;
    expect((await read(ob, narrow)).entries).toHaveLength(2);
  });

  it("pages with a cursor: every entry once, in order, then null", async () => {
    const { ob } = await fixture();
    const seen: string[] = [];
    let cursor: string | null = "";
    let pages = 0;
    while (cursor !== null) {
      const page: Page = await read(ob, `${window}&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...page.entries.map((e) => e.id));
      cursor = page.nextCursor;
      pages++;
    }
    expect(pages).toBe(3);
    const all = await read(ob, window);
    expect(seen).toEqual(all.entries.map((e) => e.id));
  });

  it("bad filters are a 400 naming the field; nothing is read", async () => {
    const { ob } = await fixture();
    for (const [query, field] of [
      ["cursor=nope", "query.cursor"],
      ["action=Key.Created", "query.action"],
      ["from=yesterday", "query.from"],
      ["limit=500", "query.limit"],
      ["project=not-a-uuid", "query.project"],
    ]) {
      const res = await ob.get(`/api/v1/audit-log?${query}`);
      expect(res.status, query).toBe(400);
      expect((await problemOf(res)).detail, query).toContain(field);
    }
  });

  it("members, OAuth tokens and lesser keys are refused (403); a Full key reads only its project; another studio reads none", async () => {
    const { t, other, mb, sb } = await fixture();
    expect((await mb.get("/api/v1/audit-log")).status).toBe(403);
    expect((await api(`/v1/audit-log?${window}`, { token: t.token })).status).toBe(403);
    expect((await api(`/v1/audit-log?${window}`, { key: t.keys.readwrite.key })).status).toBe(403);
    expect((await api(`/v1/audit-log?${window}`, { key: t.keys.read.key })).status).toBe(403);
    const full = await api(`/v1/audit-log?${window}`, { key: t.keys.full.key });
    expect(full.status).toBe(200);
    const keyPage = ((await full.json()) as OkBody<"/v1/audit-log">).data;
    expect(keyPage.entries.map((e) => e.projectId)).toEqual(Array(4).fill(t.projectId));
    // The other studio's owner sees only their own studio's entry, never ours, whatever they ask.
    const theirs = await read(sb, window);
    expect(theirs.entries.map((e) => e.action)).toEqual(["key.created"]);
    expect((await read(sb, `${window}&project=${t.projectId}`)).entries).toEqual([]);
    expect((await auditEntries(other.tenantId, "key.created")).length).toBe(1);
    expect((await new Browser().get("/api/v1/audit-log")).status).toBe(401);
  });
});

describe("Audit log page", () => {
  it("owners read it with filters and paging; members 403; another studio 404; signed out 307", async () => {
    const { t, ob, mb, sb } = await fixture();
    const path = `/settings/studios/${t.tenantId}/audit-log`;
    const home = await (await ob.get("/")).text();
    expect(home).toContain(`href="${path}">Audit log</a>`);
    const res = await ob.get(`${path}?action=key.created&from=2026-10-01T12:00&to=2026-10-01T12:10`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("<h1>Audit log of Audit Read</h1>");
    expect(html.match(/<code>key\.created<\/code>/g)).toHaveLength(3);
    expect(html).not.toContain("<code>key.revoked</code>");
    expect(html).toContain("key 2");
    const all = await (await ob.get(`${path}?action=key&from=2026-10-01T12:00&to=2026-10-01T12:10`)).text();
    expect(all.match(/<code>key\.[a-z]+<\/code>/g)).toHaveLength(7);
    expect((await ob.get(`${path}?from=tomorrow`)).status).toBe(400);
    expect((await ob.get(`${path}?cursor=bogus`)).status).toBe(400);
    expect((await mb.get(path)).status).toBe(403);
    expect((await sb.get(path)).status).toBe(404);
    const out = await new Browser().get(path);
    expect(out.status).toBe(307);
    expect(out.headers.get("location")).toContain("/sign-in");
  });

  it("pages: 50 entries, then an Older entries link carrying the filters to the rest", async () => {
    const t = await seedTenant("pro", "Audit Paging");
    const owner = await seedUser(t.tenantId, "owner");
    await withDb(async (db) => {
      for (let i = 0; i < 52; i++) {
        await auditOutside(db, {
          tenantId: t.tenantId,
          actor: { type: "system", id: null, label: "system" },
          action: "test.paged",
          target: { type: "thing", id: `n${i}`, label: `thing ${i}` },
          at: new Date(T0 + i * 1000),
        });
      }
    });
    const b = new Browser();
    expect((await b.signIn(owner.email, owner.password)).status).toBe(303);
    const first = await (await b.get(`/settings/studios/${t.tenantId}/audit-log?action=test.paged`)).text();
    expect(first.match(/<code>test\.paged<\/code>/g)).toHaveLength(50);
    expect(first).toContain("thing 51");
    expect(first).not.toContain("thing 1<");
    const next =
      /<a href="([^"]+)" rel="next">Older entries<\/a>/.exec(first)?.[1]?.replaceAll("&amp;", "&") ?? "";
    expect(next).toContain("action=test.paged");
    const second = await (await b.get(next)).text();
    expect(second.match(/<code>test\.paged<\/code>/g)).toHaveLength(2);
    expect(second).toContain("thing 1<");
    expect(second).toContain("thing 0<");
    expect(second).not.toContain('rel="next"');
  });
});
