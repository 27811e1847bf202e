import { beforeAll, describe, expect, it } from "vitest";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import { dataOf, expectBadField, sendJson } from "../support/resources.js";

type Profile = Record<string, unknown> & { id: string; createdAt: string; updatedAt: string };

const FIELDS = [
  "id",
  "name",
  "platform",
  "resolution",
  "buildConfig",
  "gpu",
  "storage",
  "fpsGood",
  "fpsWarn",
  "frameTimeGood",
  "frameTimeWarn",
  "memoryGood",
  "memoryWarn",
  "gpuTimeGood",
  "gpuTimeWarn",
  "budgetShareGood",
  "budgetShareWarn",
  "createdAt",
  "updatedAt",
].sort();

const FULL = {
  name: "Low-end PC",
  platform: "windows",
  resolution: "1920x1080",
  buildConfig: "release",
  gpu: "GTX 1060",
  storage: "hdd",
  fpsGood: 60,
  fpsWarn: 30.5,
  frameTimeGood: 16.6,
  frameTimeWarn: 33.3,
  memoryGood: 2048,
  memoryWarn: 4096,
  gpuTimeGood: 8,
  gpuTimeWarn: 14.25,
  budgetShareGood: 0.9,
  budgetShareWarn: 0.75,
};
const NULLS = Object.fromEntries(Object.keys(FULL).map((k) => [k, null]));

let t: Tenant;
const base = () => `/v1/projects/${t.projectId}/threshold-profiles`;
const create = (body: unknown) => sendJson("POST", base(), { key: t.keys.readwrite.key }, body);
const patch = (id: string, body: unknown) =>
  sendJson("PATCH", `${base()}/${id}`, { key: t.keys.readwrite.key }, body);
const list = async (key = t.keys.read.key) => dataOf<Profile[]>(await api(base(), { key }));

beforeAll(async () => {
  t = await seedTenant("pro", "Profiles Studio");
});

function expectTimestamps(p: Profile) {
  expect(new Date(p.createdAt).toISOString()).toBe(p.createdAt);
  expect(new Date(p.updatedAt).toISOString()).toBe(p.updatedAt);
}

describe("threshold profiles CRUD", () => {
  it("creates with every field, lists newest first, updates, clears with null, and deletes", async () => {
    const full = await dataOf<Profile>(await create(FULL), 201);
    expect(Object.keys(full).sort()).toEqual(FIELDS);
    expect(full).toEqual({
      ...FULL,
      id: expect.any(String),
      createdAt: full.createdAt,
      updatedAt: full.updatedAt,
    });
    expectTimestamps(full);

    // Only a name: every other member is present and null.
    const bare = await dataOf<Profile>(await create({ name: "Anything" }), 201);
    expect(Object.keys(bare).sort()).toEqual(FIELDS);
    expect(bare).toEqual({
      ...NULLS,
      name: "Anything",
      id: bare.id,
      createdAt: bare.createdAt,
      updatedAt: bare.updatedAt,
    });

    const listed = await list();
    expect(listed).toEqual([bare, full]);

    // Partial update: one threshold changed, one filter and one threshold cleared, the rest kept.
    const updated = await dataOf<Profile>(
      await patch(full.id, { fpsWarn: 25, platform: null, gpuTimeGood: null, budgetShareGood: "0.95" }),
    );
    expect(updated).toEqual({
      ...full,
      fpsWarn: 25,
      platform: null,
      gpuTimeGood: null,
      budgetShareGood: 0.95,
      updatedAt: updated.updatedAt,
    });
    expect(Date.parse(updated.updatedAt)).toBeGreaterThan(Date.parse(full.updatedAt));
    expect(updated.createdAt).toBe(full.createdAt);

    // An empty patch changes nothing, not even updatedAt.
    expect(await dataOf<Profile>(await patch(full.id, {}))).toEqual(updated);
    // Renaming keeps the rest.
    const renamed = await dataOf<Profile>(await patch(full.id, { name: "Mid PC" }));
    expect(renamed).toEqual({ ...updated, name: "Mid PC", updatedAt: renamed.updatedAt });
    expect((await list()).find((p) => p.id === full.id)).toEqual(renamed);

    const del = await api(`${base()}/${full.id}`, { key: t.keys.readwrite.key }, { method: "DELETE" });
    expect(await dataOf(del)).toEqual({ id: full.id });
    expect(await list()).toEqual([bare]);
    const again = await api(`${base()}/${full.id}`, { key: t.keys.readwrite.key }, { method: "DELETE" });
    expect(again.status).toBe(404);
    expect((await patch(full.id, { name: "ghost" })).status).toBe(404);
  });

  it("keeps projects apart: another project's profile is 404 to patch or delete, and not listed", async () => {
    const mine = await dataOf<Profile>(await create({ name: "Mine" }), 201);
    const sibling = `/v1/projects/${t.siblingProjectId}/threshold-profiles`;
    // A token reaches the sibling project, but the profile is not in it.
    const viaSibling = await sendJson("PATCH", `${sibling}/${mine.id}`, { token: t.token }, { name: "x" });
    expect(viaSibling.status).toBe(404);
    const delSibling = await api(`${sibling}/${mine.id}`, { token: t.token }, { method: "DELETE" });
    expect(delSibling.status).toBe(404);
    expect(await dataOf(await api(sibling, { token: t.token }))).toEqual([]);
    expect((await list()).map((p) => p.id)).toContain(mine.id);
  });
});

describe("threshold profile validation", () => {
  it("400 naming the field, and nothing is written", async () => {
    const before = await list();
    const cases: Array<[unknown, string]> = [
      [{}, "json.name"],
      [{ name: "" }, "json.name"],
      [{ name: "n".repeat(256) }, "json.name"],
      [{ name: null }, "json.name"],
      [{ name: "ok", platform: "p".repeat(65) }, "json.platform"],
      [{ name: "ok", resolution: "r".repeat(33) }, "json.resolution"],
      [{ name: "ok", buildConfig: "b".repeat(65) }, "json.buildConfig"],
      [{ name: "ok", gpu: "g".repeat(257) }, "json.gpu"],
      [{ name: "ok", storage: "" }, "json.storage"],
      [{ name: "ok", fpsGood: -1 }, "json.fpsGood"],
      // Numeric strings are numbers ("512"), any other string or type is not.
      [{ name: "ok", memoryWarn: "512MB" }, "json.memoryWarn"],
      [{ name: "ok", memoryWarn: "" }, "json.memoryWarn"],
      [{ name: "ok", memoryWarn: " 512" }, "json.memoryWarn"],
      [{ name: "ok", memoryWarn: "0x10" }, "json.memoryWarn"],
      [{ name: "ok", memoryWarn: "Infinity" }, "json.memoryWarn"],
      [{ name: "ok", gpuTimeGood: "-1" }, "json.gpuTimeGood"],
      [{ name: "ok", gpuTimeGood: true }, "json.gpuTimeGood"],
      // A share of heartbeats: 0 to 1.
      [{ name: "ok", budgetShareGood: 1.01 }, "json.budgetShareGood"],
      [{ name: "ok", budgetShareWarn: -0.1 }, "json.budgetShareWarn"],
      [{ name: "ok", budgetShareWarn: "90%" }, "json.budgetShareWarn"],
      [{ name: "bad\u0000name" }, "json.name"],
      [{ name: "\ud800" }, "json.name"],
      [{ name: "ok", fpsgood: 60 }, "json"],
    ];
    for (const [body, field] of cases) {
      await expectBadField(await create(body), field);
    }
    // JSON has no Infinity, but 1e400 parses to it.
    await expectBadField(await create('{"name":"ok","frameTimeWarn":1e400}'), "json.frameTimeWarn");
    expect(await list()).toEqual(before);
  });

  it("413 naming the body for a body over 64 KiB", async () => {
    const res = await create({ name: "big", gpu: "g".repeat(70 * 1024) });
    expect(res.status).toBe(413);
    expect((await problemOf(res)).field).toBe("body");
  });

  it("counts characters, not UTF-16 units: 255 emoji make a valid name", async () => {
    const name = "🎮".repeat(255);
    const p = await dataOf<Profile>(await create({ name }), 201);
    expect(p.name).toBe(name);
    await expectBadField(await create({ name: `${name}x` }), "json.name");
  });

  it("PATCH refuses null for the name and unknown fields, and 400 for a malformed profile id", async () => {
    const p = await dataOf<Profile>(await create({ name: "Patch me", fpsGood: 50 }), 201);
    await expectBadField(await patch(p.id, { name: null }), "json.name");
    await expectBadField(await patch(p.id, { fpsWarn: true }), "json.fpsWarn");
    await expectBadField(await patch(p.id, { colour: "red" }), "json");
    await expectBadField(await patch("nope", { name: "x" }), "param.profileId");
    expect((await list()).find((x) => x.id === p.id)).toEqual(p);
  });
});
