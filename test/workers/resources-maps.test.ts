import { env } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { maps } from "../../schema/pg/schema.js";
import { seedTenant, type Tenant, withDb } from "../support/harness.js";
import { type Auth, api, problemOf } from "../support/http.js";
import { concat, jpeg, multipart, type Part, png, webp } from "../support/images.js";
import { dataOf, expectBadField } from "../support/resources.js";
import type { Schemas } from "../support/schema.js";

type MapItem = Schemas["Map"];

const MAX_IMAGE = 10 * 1024 * 1024;
const BOUNDS = { worldMinX: "-512.5", worldMinY: "-256", worldMaxX: "512.5", worldMaxY: "1e3" };

let t: Tenant;
const rw = (): Auth => ({ key: t.keys.readwrite.key });

function fieldsOf(fields: Record<string, string>): Part[] {
  return Object.entries(fields).map(([name, value]) => ({ name, value }));
}

function upload(parts: Part[], auth: Auth = rw(), projectId: string | null = t.projectId) {
  const { body, contentType } = multipart(parts);
  const headers: Record<string, string> = { "Content-Type": contentType };
  if (projectId) {
    headers["X-Project-Id"] = projectId;
  }
  return api("/v1/maps/upload", auth, { method: "POST", headers, body });
}

const uploadMap = (fields: Record<string, string>, image: Uint8Array, auth?: Auth, projectId?: string) =>
  upload([...fieldsOf(fields), { name: "image", filename: "map.bin", bytes: image }], auth, projectId);

const listMaps = async (projectId = t.projectId, auth: Auth = { key: t.keys.read.key }) =>
  dataOf<MapItem[]>(await api(`/v1/projects/${projectId}/maps`, auth));

/** GET through the map's own imageUrl (which carries the /api prefix). */
function fetchImage(imageUrl: string, auth: Auth = { key: t.keys.read.key }) {
  expect(imageUrl.startsWith("/api/")).toBe(true);
  return api(imageUrl.slice("/api".length), auth);
}

const storedObjects = async (projectId = t.projectId) =>
  (await env.MAPS.list({ prefix: `maps/${projectId}/` })).objects.map((o) => o.key);

/** A stream of unknown length, so the request goes without Content-Length. */
function chunksOf(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.byteLength) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

async function flat(res: Response) {
  const body = (await res.json()) as Record<string, unknown>;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

beforeAll(async () => {
  t = await seedTenant("pro", "Maps Studio");
});

describe("map upload", () => {
  it("creates, then updates in place by mapId; the image is served back byte for byte", async () => {
    const first = await png(320, 200);
    const created = await flat(
      await uploadMap(
        { mapId: "dust", name: "Dust", ...BOUNDS, worldMinZ: "-10", worldMaxZ: "90.25" },
        first,
      ),
    );
    expect(created).toEqual({ success: true, mapId: "dust", id: expect.any(String), action: "created" });
    const id = created.id as string;

    const [map] = await listMaps();
    expect(map).toEqual({
      id,
      name: "Dust",
      mapId: "dust",
      imageUrl: `/api/v1/projects/${t.projectId}/maps/${id}/image`,
      worldMinX: -512.5,
      worldMinY: -256,
      worldMaxX: 512.5,
      worldMaxY: 1000,
      worldMinZ: -10,
      worldMaxZ: 90.25,
      imageWidth: 320,
      imageHeight: 200,
      createdAt: map?.createdAt,
      updatedAt: map?.updatedAt,
    });
    const served = await fetchImage(map?.imageUrl ?? "");
    expect(served.status).toBe(200);
    expect(served.headers.get("Content-Type")).toBe("image/png");
    expect(served.headers.get("X-RateLimit-Limit")).toBe("10000");
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(first);
    // A token of the tenant reads it too.
    expect((await fetchImage(map?.imageUrl ?? "", { token: t.token })).status).toBe(200);

    // Same mapId, another image type, no vertical bounds: the record is replaced, the id kept.
    const second = jpeg(1024, 768, { app1Bytes: 2000 });
    const updated = await flat(
      await uploadMap({ mapId: "dust", name: "Dust II", ...BOUNDS, worldMaxX: "600" }, second),
    );
    expect(updated).toEqual({ success: true, mapId: "dust", id, action: "updated" });
    const [after] = await listMaps();
    expect(after).toEqual({
      ...map,
      name: "Dust II",
      worldMaxX: 600,
      worldMinZ: null,
      worldMaxZ: null,
      imageWidth: 1024,
      imageHeight: 768,
      updatedAt: after?.updatedAt,
    });
    expect(Date.parse(after?.updatedAt ?? "")).toBeGreaterThan(Date.parse(map?.updatedAt ?? ""));
    const servedAgain = await fetchImage(after?.imageUrl ?? "");
    expect(servedAgain.headers.get("Content-Type")).toBe("image/jpeg");
    expect(new Uint8Array(await servedAgain.arrayBuffer())).toEqual(second);
    // The replaced image is gone from R2: one object per map.
    expect((await storedObjects()).length).toBe(1);
  });

  it("accepts WebP (VP8, VP8L, VP8X) and lists newest first", async () => {
    const fresh = await seedTenant("pro", "WebP Studio");
    const auth = { key: fresh.keys.readwrite.key };
    const kinds = [
      ["VP8", 300, 150],
      ["VP8L", 2048, 1024],
      ["VP8X", 20000, 9000],
    ] as const;
    for (const [kind, w, h] of kinds) {
      const res = await uploadMap(
        { mapId: kind, name: kind, ...BOUNDS },
        webp(w, h, kind),
        auth,
        fresh.projectId,
      );
      expect((await flat(res)).action).toBe("created");
    }
    const listed = await listMaps(fresh.projectId, { key: fresh.keys.read.key });
    expect(listed.map((m) => [m.mapId, m.imageWidth, m.imageHeight])).toEqual([
      ["VP8X", 20000, 9000],
      ["VP8L", 2048, 1024],
      ["VP8", 300, 150],
    ]);
    const img = await fetchImage(listed[0]?.imageUrl ?? "", { key: fresh.keys.read.key });
    expect(img.headers.get("Content-Type")).toBe("image/webp");
    expect(new Uint8Array(await img.arrayBuffer())).toEqual(webp(20000, 9000, "VP8X"));
  });

  it("refuses bad or unsupported images and bad fields, naming the field; nothing is stored", async () => {
    const before = await listMaps();
    const objects = await storedObjects();
    const good = await png(8, 8);
    const fields = { mapId: "bad", name: "Bad", ...BOUNDS };
    const badImages: Array<[Uint8Array, RegExp]> = [
      [new TextEncoder().encode("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), /unrecognized/],
      [good.slice(0, 20), /PNG/],
      [jpeg(64, 64).slice(0, 40), /truncated JPEG/],
      [webp(64, 64, "VP8X").slice(0, 26), /truncated WebP/],
      [concat(good.slice(0, 16), [0, 0, 0, 0], good.slice(20)), /empty image/],
      [new Uint8Array(), /unrecognized/],
    ];
    for (const [bytes, rule] of badImages) {
      expect(await expectBadField(await uploadMap(fields, bytes), "form.image")).toMatch(rule);
    }
    // The image sent as a plain field instead of a file part.
    await expectBadField(
      await upload([...fieldsOf(fields), { name: "image", value: "not a file" }]),
      "form.image",
    );
    await expectBadField(await upload(fieldsOf(fields)), "form.image");

    const badFields: Array<[Record<string, string>, string]> = [
      [{ ...fields, worldMinX: "600" }, "form.worldMaxX"],
      [{ ...fields, worldMaxY: "-256" }, "form.worldMaxY"],
      [{ ...fields, worldMinZ: "5", worldMaxZ: "5" }, "form.worldMaxZ"],
      [{ ...fields, worldMinX: "abc" }, "form.worldMinX"],
      [{ ...fields, worldMinY: "1e400" }, "form.worldMinY"],
      [{ ...fields, worldMaxX: "Infinity" }, "form.worldMaxX"],
      [{ ...fields, worldMaxZ: "" }, "form.worldMaxZ"],
      [{ ...fields, mapId: "" }, "form.mapId"],
      [{ ...fields, mapId: "m".repeat(256) }, "form.mapId"],
      [{ mapId: "bad", ...BOUNDS }, "form.name"],
      [{ ...fields, colour: "red" }, "form"],
    ];
    for (const [f, field] of badFields) {
      await expectBadField(await uploadMap(f, good), field);
    }
    // 255 characters is the most a mapId may have (counted in code points).
    const longest = "🗺".repeat(255);
    expect((await flat(await uploadMap({ ...fields, mapId: longest }, good))).mapId).toBe(longest);
    const after = await listMaps();
    expect(after.filter((m) => m.mapId !== longest)).toEqual(before);
    expect((await storedObjects()).length).toBe(objects.length + 1);
  });

  it("413 for an image over 10 MB and for a body over the cap; 415 for a body that is not multipart", async () => {
    const objects = await storedObjects();
    const header = await png(4, 4);
    const fields = { mapId: "huge", name: "Huge", ...BOUNDS };
    const exactly = concat(header, new Uint8Array(MAX_IMAGE - header.byteLength));
    const over = concat(exactly, [0]);
    const res = await uploadMap(fields, over);
    expect(res.status).toBe(413);
    expect((await problemOf(res)).field).toBe("form.image");
    const wayOver = concat(over, new Uint8Array(100 * 1024));
    const res2 = await uploadMap(fields, wayOver);
    expect(res2.status).toBe(413);
    expect((await problemOf(res2)).field).toBe("body");
    // Without Content-Length (a streamed, chunked body) the cap is enforced while reading.
    const streamed = multipart([...fieldsOf(fields), { name: "image", filename: "m.png", bytes: wayOver }]);
    const chunked = await api("/v1/maps/upload", rw(), {
      method: "POST",
      headers: { "Content-Type": streamed.contentType, "X-Project-Id": t.projectId },
      body: chunksOf(streamed.body, 1 << 20),
    });
    expect(chunked.status).toBe(413);
    expect((await problemOf(chunked)).field).toBe("body");
    // Exactly 10 MB is accepted.
    expect((await flat(await uploadMap(fields, exactly))).action).toBe("created");

    const json = await api("/v1/maps/upload", rw(), {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Project-Id": t.projectId },
      body: JSON.stringify(fields),
    });
    expect(json.status).toBe(415);
    expect((await storedObjects()).length).toBe(objects.length + 1);
  });

  it("X-Project-Id: 400 naming the header when missing or malformed, 404 for a project out of reach", async () => {
    const image = await png(2, 2);
    const fields = { mapId: "hdr", name: "Hdr", ...BOUNDS };
    const parts = [...fieldsOf(fields), { name: "image", filename: "m.png", bytes: image }];
    await expectBadField(await upload(parts, rw(), null), "header.X-Project-Id");
    await expectBadField(await upload(parts, rw(), "123"), "header.X-Project-Id");
    const sibling = await upload(parts, rw(), t.siblingProjectId);
    expect(sibling.status).toBe(404);
    // Authorization comes before the body is read: an oversized body for someone else's project is 404.
    const big = [
      ...fieldsOf(fields),
      { name: "image", filename: "m.png", bytes: new Uint8Array(MAX_IMAGE + 100_000) },
    ];
    expect((await upload(big, rw(), t.siblingProjectId)).status).toBe(404);
    // A token reaches every project of its tenant.
    expect((await flat(await upload(parts, { token: t.token }, t.siblingProjectId))).action).toBe("created");
    expect((await listMaps(t.siblingProjectId, { token: t.token })).map((m) => m.mapId)).toEqual(["hdr"]);
    const readOnly = await upload(parts, { key: t.keys.read.key });
    expect(readOnly.status).toBe(403);
  });
});

describe("map delete", () => {
  it("deletes the record and its image; 404 afterwards and from another project", async () => {
    const image = await png(16, 16);
    const { id } = (await flat(await uploadMap({ mapId: "gone", name: "Gone", ...BOUNDS }, image))) as {
      id: string;
    };
    const map = (await listMaps()).find((m) => m.id === id);
    const url = `/v1/projects/${t.projectId}/maps/${id}`;
    const [row] = await withDb((db) =>
      db.select({ imageKey: maps.imageKey }).from(maps).where(eq(maps.id, id)),
    );
    const key = row?.imageKey ?? "";
    expect(await env.MAPS.head(key)).not.toBeNull();

    // Another project of the same tenant, through a token that reaches it: not found there.
    const elsewhere = await api(
      `/v1/projects/${t.siblingProjectId}/maps/${id}`,
      { token: t.token },
      { method: "DELETE" },
    );
    expect(elsewhere.status).toBe(404);
    expect((await api(url, { key: t.keys.read.key }, { method: "DELETE" })).status).toBe(403);

    expect(await dataOf(await api(url, rw(), { method: "DELETE" }))).toEqual({ id });
    expect((await listMaps()).find((m) => m.id === id)).toBeUndefined();
    expect(await env.MAPS.head(key)).toBeNull();
    expect((await fetchImage(map?.imageUrl ?? "")).status).toBe(404);
    expect((await api(url, rw(), { method: "DELETE" })).status).toBe(404);
    // Not a UUID: a user map id, and there is none such.
    expect((await api(`/v1/projects/${t.projectId}/maps/xyz`, rw(), { method: "DELETE" })).status).toBe(404);
    await expectBadField(
      await api(`/v1/projects/${t.projectId}/maps/${"m".repeat(256)}`, rw(), { method: "DELETE" }),
      "param.map",
    );
  });

  it("409 while a restricting foreign key still refers to the map, and nothing is deleted", async () => {
    const { id } = (await flat(
      await uploadMap({ mapId: "used", name: "Used", ...BOUNDS }, await png(4, 4)),
    )) as {
      id: string;
    };
    // Stands in for a table that references maps without ON DELETE: the delete must answer, not crash.
    await withDb(async (db) => {
      await db.execute(
        sql`create table if not exists test_map_refs (map_id uuid not null references maps(id))`,
      );
      await db.execute(sql`insert into test_map_refs values (${id})`);
    });
    const res = await api(`/v1/projects/${t.projectId}/maps/${id}`, rw(), { method: "DELETE" });
    expect(res.status).toBe(409);
    expect((await problemOf(res)).error_category).toBe("conflict");
    const still = (await listMaps()).find((m) => m.id === id);
    expect(still).toBeDefined();
    expect((await fetchImage(still?.imageUrl ?? "")).status).toBe(200);
    await withDb((db) => db.execute(sql`delete from test_map_refs where map_id = ${id}`));
    expect(
      await dataOf(await api(`/v1/projects/${t.projectId}/maps/${id}`, rw(), { method: "DELETE" })),
    ).toEqual({
      id,
    });
  });
});
