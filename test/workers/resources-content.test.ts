import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { contentEntries } from "../../schema/pg/schema.js";
import { seedTenant, type Tenant, withDb } from "../support/harness.js";
import { type Auth, api, problemOf } from "../support/http.js";
import { dataOf, expectBadField, sendJson } from "../support/resources.js";
import type { Schemas } from "../support/schema.js";

type Entry = Schemas["ContentEntry"];
type Input = Partial<Omit<Entry, "id" | "projectId" | "createdAt" | "updatedAt">>;

let t: Tenant;
const post = (entries: unknown, auth: Auth = { key: t.keys.readwrite.key }, projectId = t.projectId) =>
  sendJson("POST", "/v1/content", auth, { entries }, { "X-Project-Id": projectId });
const listByPath = async (type?: string, projectId = t.projectId) =>
  dataOf<Entry[]>(
    await api(`/v1/projects/${projectId}/content${type ? `?type=${encodeURIComponent(type)}` : ""}`, {
      key: t.keys.read.key,
    }),
  );
const listByHeader = async (type?: string) =>
  dataOf<Entry[]>(
    await api(
      `/v1/content${type ? `?type=${encodeURIComponent(type)}` : ""}`,
      { key: t.keys.read.key },
      {
        headers: { "X-Project-Id": t.projectId },
      },
    ),
  );
/** The table's rows for the project, straight from Postgres. */
const tableRows = () =>
  withDb((db) => db.select().from(contentEntries).where(eq(contentEntries.projectId, t.projectId)));

const entry = (contentType: string, contentId: string, over: Input = {}): Input => ({
  contentType,
  contentId,
  displayName: `${contentType} ${contentId}`,
  ...over,
});

/** Code-point order, computed independently of Postgres. */
function codePointCompare(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0) ?? 0);
  const y = [...b].map((c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) {
      return (x[i] ?? 0) - (y[i] ?? 0);
    }
  }
  return x.length - y.length;
}

beforeAll(async () => {
  t = await seedTenant("pro", "Content Studio");
});

describe("POST /v1/content", () => {
  it("upserts, the last duplicate wins, and imported counts entries after de-duplication", async () => {
    const first = await post([
      entry("weapon", "ak", { displayName: "AK (first)", description: "old", metadata: { dmg: 1 } }),
      entry("weapon", "m4", { displayName: "M4", category: "rifle", metadata: { dmg: 30, tags: ["a"] } }),
      entry("weapon", "ak", { displayName: "AK-47", category: "rifle" }),
      entry("map", "ak", { displayName: "Map named ak" }),
    ]);
    expect(await dataOf(first)).toEqual({ imported: 3 });
    const rows = await listByPath();
    expect(rows.map((e) => [e.contentType, e.contentId, e.displayName])).toEqual([
      ["map", "ak", "Map named ak"],
      ["weapon", "ak", "AK-47"],
      ["weapon", "m4", "M4"],
    ]);
    const ak = rows[1] as Entry;
    // The last duplicate replaced the first whole: its omitted description and metadata are null.
    expect(ak).toEqual({
      id: expect.any(String),
      projectId: t.projectId,
      contentType: "weapon",
      contentId: "ak",
      displayName: "AK-47",
      description: null,
      category: "rifle",
      metadata: null,
      createdAt: ak.createdAt,
      updatedAt: ak.updatedAt,
    });
    expect(rows[2]?.metadata).toEqual({ dmg: 30, tags: ["a"] });
    expect(await listByHeader()).toEqual(rows);
    expect(await listByHeader("weapon")).toEqual(rows.slice(1));

    // Updating an existing entry keeps its id and createdAt and moves updatedAt.
    const second = await post([entry("weapon", "ak", { displayName: "AK-74", metadata: { dmg: 2 } })]);
    expect(await dataOf(second)).toEqual({ imported: 1 });
    const after = (await listByPath()).find((e) => e.contentType === "weapon" && e.contentId === "ak");
    expect(after).toEqual({
      ...ak,
      displayName: "AK-74",
      category: null,
      metadata: { dmg: 2 },
      updatedAt: after?.updatedAt,
    });
    expect(Date.parse(after?.updatedAt ?? "")).toBeGreaterThan(Date.parse(ak.updatedAt));
    expect((await tableRows()).length).toBe(3);

    expect(await dataOf(await post([]))).toEqual({ imported: 0 });
  });

  it("accepts every bound exactly, counting characters and metadata bytes", async () => {
    const astral = (n: number) => "𝔸".repeat(n);
    // {"k":"é…é"} is 8 bytes of framing plus 2 bytes per é.
    const metadata = { k: "é".repeat(5116) };
    expect(new TextEncoder().encode(JSON.stringify(metadata)).byteLength).toBe(10_240);
    const edge = {
      contentType: astral(100),
      contentId: astral(255),
      displayName: astral(255),
      description: astral(2000),
      category: astral(255),
      metadata,
    };
    expect(await dataOf(await post([edge]))).toEqual({ imported: 1 });
    const stored = (await listByPath(astral(100)))[0];
    expect(stored).toMatchObject(edge);
  });

  it("400 naming the field for every bound violated, and the table is unchanged", async () => {
    const before = await tableRows();
    const ok = entry("weapon", "x");
    const bad: Array<[Input | unknown, string]> = [
      [{ ...ok, contentType: "t".repeat(101) }, "contentType"],
      [{ ...ok, contentType: "" }, "contentType"],
      [{ ...ok, contentId: "i".repeat(256) }, "contentId"],
      [{ ...ok, contentId: "" }, "contentId"],
      [{ ...ok, displayName: "d".repeat(256) }, "displayName"],
      [{ ...ok, displayName: "" }, "displayName"],
      [{ ...ok, displayName: undefined }, "displayName"],
      [{ ...ok, description: "d".repeat(2001) }, "description"],
      [{ ...ok, category: "c".repeat(256) }, "category"],
      [{ ...ok, metadata: { k: "é".repeat(5117) } }, "metadata"],
      [{ ...ok, metadata: [1, 2] }, "metadata"],
      [{ ...ok, metadata: "text" }, "metadata"],
      [{ ...ok, metadata: { "bad\u0000key": 1 } }, "metadata"],
      [{ ...ok, contentId: "nul\u0000" }, "contentId"],
    ];
    // Each bad entry comes after a valid one, so a half-applied request would show in the table.
    for (const [e, field] of bad) {
      await expectBadField(await post([entry("weapon", "valid-first"), e]), `json.entries.1.${field}`);
    }
    await expectBadField(await post([{ ...ok, colour: "red" }]), "json.entries.0");
    const tooMany = Array.from({ length: 501 }, (_, i) => entry("bulk", `b${i}`));
    await expectBadField(await post(tooMany), "json.entries");
    await expectBadField(
      await sendJson(
        "POST",
        "/v1/content",
        { key: t.keys.readwrite.key },
        {},
        { "X-Project-Id": t.projectId },
      ),
      "json.entries",
    );
    expect(await tableRows()).toEqual(before);
  });

  it("413 naming the body for a body over 16 MiB, before it is parsed", async () => {
    const before = await tableRows();
    const padded = JSON.stringify({ entries: [entry("weapon", "pad")], pad: "x".repeat(16 * 1024 * 1024) });
    const res = await sendJson("POST", "/v1/content", { key: t.keys.readwrite.key }, padded, {
      "X-Project-Id": t.projectId,
    });
    expect(res.status).toBe(413);
    expect((await problemOf(res)).field).toBe("body");
    expect(await tableRows()).toEqual(before);
  });

  it("500 entries are accepted in one request", async () => {
    const many = Array.from({ length: 500 }, (_, i) => entry("bulk", `b${String(i).padStart(3, "0")}`));
    expect(await dataOf(await post(many))).toEqual({ imported: 500 });
    const bulk = await listByPath("bulk");
    expect(bulk.length).toBe(500);
    expect(bulk[0]?.contentId).toBe("b000");
  });

  it("X-Project-Id must be a UUID of a project the caller reaches", async () => {
    const e = [entry("weapon", "hdr")];
    for (const headers of [{}, { "X-Project-Id": "not-a-uuid" }] as Array<Record<string, string>>) {
      const res = await sendJson(
        "POST",
        "/v1/content",
        { key: t.keys.readwrite.key },
        { entries: e },
        headers,
      );
      await expectBadField(res, "header.X-Project-Id");
      const get = await api("/v1/content", { key: t.keys.read.key }, { headers });
      await expectBadField(get, "header.X-Project-Id");
    }
    // A key reaches only its own project, a token its whole tenant.
    const viaKey = await post(e, { key: t.keys.readwrite.key }, t.siblingProjectId);
    expect(viaKey.status).toBe(404);
    expect((await problemOf(viaKey)).error_category).toBe("not_found");
    expect(await dataOf(await post(e, { token: t.token }, t.siblingProjectId))).toEqual({ imported: 1 });
    const siblingPath = `/v1/projects/${t.siblingProjectId}/content`;
    expect((await api(siblingPath, { key: t.keys.read.key })).status).toBe(404);
    const viaToken = await dataOf<Entry[]>(await api(siblingPath, { token: t.token }));
    expect(viaToken.map((x) => [x.projectId, x.contentId])).toEqual([[t.siblingProjectId, "hdr"]]);
  });
});

describe("GET content lists", () => {
  it("order by content type then display name in code-point order; type filters; both variants agree", async () => {
    const fresh = await seedTenant("pro", "Ordering Studio");
    const names = ["beta", "Alpha", "alpha", "Zulu", "éclair", "_under", "10", "9"];
    const types = ["weapon", "Map", "event_type"];
    const input = types.flatMap((type, i) =>
      names.map((n, j) => ({ contentType: type, contentId: `${i}-${j}`, displayName: n })),
    );
    const res = await sendJson(
      "POST",
      "/v1/content",
      { key: fresh.keys.readwrite.key },
      { entries: input },
      {
        "X-Project-Id": fresh.projectId,
      },
    );
    expect(await dataOf(res)).toEqual({ imported: input.length });

    const expected = [...input].sort(
      (a, b) =>
        codePointCompare(a.contentType, b.contentType) ||
        codePointCompare(a.displayName, b.displayName) ||
        codePointCompare(a.contentId, b.contentId),
    );
    const read = { key: fresh.keys.read.key };
    const byPath = await dataOf<Entry[]>(await api(`/v1/projects/${fresh.projectId}/content`, read));
    const byHeader = await dataOf<Entry[]>(
      await api("/v1/content", read, { headers: { "X-Project-Id": fresh.projectId } }),
    );
    const key = (e: Input) => [e.contentType, e.displayName, e.contentId];
    expect(byPath.map(key)).toEqual(expected.map(key));
    expect(byHeader).toEqual(byPath);

    const maps = await dataOf<Entry[]>(await api(`/v1/projects/${fresh.projectId}/content?type=Map`, read));
    expect(maps.map(key)).toEqual(expected.filter((e) => e.contentType === "Map").map(key));
    const mapsByHeader = await dataOf<Entry[]>(
      await api("/v1/content?type=Map", read, { headers: { "X-Project-Id": fresh.projectId } }),
    );
    expect(mapsByHeader).toEqual(maps);
    expect(await dataOf(await api(`/v1/projects/${fresh.projectId}/content?type=map`, read))).toEqual([]);
    await expectBadField(await api(`/v1/projects/${fresh.projectId}/content?type=`, read), "query.type");
  });

  it("needs analytics:read to list and resources:write to import", async () => {
    const list = await api(`/v1/projects/${t.projectId}/content`, { key: t.keys.ingest.key });
    expect(list.status).toBe(403);
    const write = await post([entry("weapon", "ro")], { key: t.keys.read.key });
    expect(write.status).toBe(403);
    expect((await problemOf(write)).detail).toContain("resources:write");
  });
});
