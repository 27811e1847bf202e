import { env, SELF } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { contentEntries, maps } from "../../schema/pg/schema.js";
import { batch, event, gzip } from "../support/batches.js";
import { BASE, seedTenant, type Tenant, withDb } from "../support/harness.js";
import { ingest, problemOf } from "../support/http.js";
import { png } from "../support/images.js";
import type { Ok } from "../support/schema.js";
import { waitFor } from "../support/wait.js";

/**
 * The requests the public clients send, byte for byte where it matters, and the fields they read back
 * (crane-valley/framedash-cli with framedash-api-client, and the MCP server). Their JSON client sends
 * `Accept: application/problem+json, application/json;q=0.9`, one credential (X-API-Key, or Bearer),
 * `X-Project-Id` on every path without `/projects/` in it, and `Content-Type: application/json` only
 * with a body; it never follows redirects and reads `data` only when `success === true`.
 */
type Credential = { apiKey: string } | { accessToken: string };

const ACCEPT = "application/problem+json, application/json;q=0.9";

function clientHeaders(cred: Credential, projectId: string, path: string, hasBody: boolean) {
  const headers: Record<string, string> = { Accept: ACCEPT };
  if ("apiKey" in cred) {
    headers["X-API-Key"] = cred.apiKey;
  } else {
    headers.Authorization = `Bearer ${cred.accessToken}`;
  }
  if (!path.includes("/projects/")) {
    headers["X-Project-Id"] = projectId;
  }
  if (hasBody) {
    headers["Content-Type"] = "application/json";
  }
  return headers;
}

/** One request as the API client makes it; `path` is absolute (`/api/v1/…`), as the client's are. */
async function send(cred: Credential, projectId: string, method: string, path: string, body?: unknown) {
  const res = await SELF.fetch(`${BASE}${path}`, {
    method,
    headers: clientHeaders(cred, projectId, path, body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: "manual",
  });
  expect(res.status < 300 || res.status >= 400, `${method} ${path} redirected`).toBe(true);
  return res;
}

/** What the client returns on success: `data`, after checking `success === true` as it does. */
async function dataOf<T>(res: Response, status = 200): Promise<T> {
  const json = (await res.json()) as { success?: boolean; data: T };
  expect(res.status, JSON.stringify(json)).toBe(status);
  expect(json.success).toBe(true);
  return json.data;
}

let t: Tenant;
let projectPath: (suffix: string) => string;
let key: Credential;
let token: Credential;
beforeAll(async () => {
  t = await seedTenant("pro", "Client Compat Studio");
  projectPath = (suffix) => `/api/v1/projects/${encodeURIComponent(t.projectId)}/${suffix}`;
  key = { apiKey: t.keys.full.key };
  token = { accessToken: t.token };
});

/** The multipart body `map-capture --upload` builds from a capture's sidecar metadata. */
function captureForm(meta: {
  map_id: string;
  min: [number, number];
  max: [number, number];
  width: number;
  height: number;
  image: Uint8Array;
}): FormData {
  const form = new FormData();
  form.set("mapId", meta.map_id);
  form.set("name", meta.map_id);
  form.set("worldMinX", String(meta.min[0]));
  form.set("worldMinY", String(meta.min[1]));
  form.set("worldMaxX", String(meta.max[0]));
  form.set("worldMaxY", String(meta.max[1]));
  form.set("imageWidth", String(meta.width));
  form.set("imageHeight", String(meta.height));
  form.set("image", new Blob([meta.image], { type: "image/png" }), `${meta.map_id}.png`);
  return form;
}

/** The uploader's request: its own fetch, credential and X-Project-Id only (no Accept). */
function upload(cred: Credential, form: FormData): Promise<Response> {
  const auth: Record<string, string> =
    "apiKey" in cred ? { "X-API-Key": cred.apiKey } : { Authorization: `Bearer ${cred.accessToken}` };
  return SELF.fetch(`${BASE}/api/v1/maps/upload`, {
    method: "POST",
    headers: { ...auth, "X-Project-Id": t.projectId },
    body: form,
    redirect: "manual",
  });
}

type MapRow = Ok<"/v1/projects/{id}/maps">[number];

async function listMaps(): Promise<MapRow[]> {
  return dataOf<MapRow[]>(await send(key, t.projectId, "GET", projectPath("maps")));
}

describe("framedash map-capture --upload", () => {
  it("uploads with imageWidth/imageHeight and reads {success, mapId, action}; created, then updated", async () => {
    const meta = { map_id: "arena_01", min: [-512, -256], max: [512, 256], width: 64, height: 32 } as const;
    const image = await png(64, 32);
    for (const [cred, action] of [
      [key, "created"],
      [token, "updated"],
    ] as const) {
      const res = await upload(cred, captureForm({ ...meta, min: [...meta.min], max: [...meta.max], image }));
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      // The uploader returns the body as {success, mapId, action}; `id` is the one additive member.
      expect(Object.keys(body).sort()).toEqual(["action", "id", "mapId", "success"]);
      expect(body).toMatchObject({ success: true, mapId: "arena_01", action });
    }
    const [arena] = (await listMaps()).filter((m) => m.mapId === "arena_01");
    expect(arena).toMatchObject({ imageWidth: 64, imageHeight: 32, worldMaxX: 512 });
  });

  it("a size that disagrees with the image's own header is a 400 naming the field, and changes nothing", async () => {
    const image = await png(64, 32);
    const first = await upload(
      key,
      captureForm({ map_id: "mismatch", min: [0, 0], max: [10, 10], width: 64, height: 32, image }),
    );
    expect(first.status).toBe(200);
    const before = await listMaps();
    for (const [width, height, field, rule] of [
      [128, 32, "form.imageWidth", "must equal the image's own size (64), not 128"],
      [64, 31, "form.imageHeight", "must equal the image's own size (32), not 31"],
    ] as const) {
      const res = await upload(
        key,
        captureForm({ map_id: "mismatch", min: [0, 0], max: [99, 99], width, height, image }),
      );
      expect(res.status).toBe(400);
      const p = await problemOf(res);
      expect(p.field).toBe(field);
      expect(p.detail).toBe(`${field}: ${rule}`);
    }
    // Not a whole number of pixels: the field and the rule.
    const form = captureForm({
      map_id: "mismatch",
      min: [0, 0],
      max: [99, 99],
      width: 64,
      height: 32,
      image,
    });
    form.set("imageWidth", "64.5");
    const bad = await problemOf(await upload(key, form));
    expect(bad.detail).toBe("form.imageWidth: must be a positive whole number of pixels");
    expect(await listMaps()).toEqual(before);
  });
});

describe("framedash threshold-profiles create (numbers as JSON strings)", () => {
  it("creates from the flag values as strings and answers numbers; PATCH takes strings too", async () => {
    const body = {
      name: "Console budget",
      "fps-good": "60",
      "fps-warn": "30",
      "frame-time-good": "16.6",
      "frame-time-warn": "33.3",
      "memory-good": "2048",
      "memory-warn": "4096.5",
      "gpu-time-good": "8",
      "gpu-time-warn": "1.5e1",
      platform: "ps5",
    };
    // The CLI maps its flags onto the field names and sends the strings as given.
    const fields: Record<string, string> = {
      "fps-good": "fpsGood",
      "fps-warn": "fpsWarn",
      "frame-time-good": "frameTimeGood",
      "frame-time-warn": "frameTimeWarn",
      "memory-good": "memoryGood",
      "memory-warn": "memoryWarn",
      "gpu-time-good": "gpuTimeGood",
      "gpu-time-warn": "gpuTimeWarn",
      platform: "platform",
    };
    const sent = Object.fromEntries(Object.entries(body).map(([k, v]) => [fields[k] ?? k, v]));
    const created = await dataOf<Record<string, unknown>>(
      await send(token, t.projectId, "POST", projectPath("threshold-profiles"), sent),
      201,
    );
    expect(created).toMatchObject({
      name: "Console budget",
      platform: "ps5",
      fpsGood: 60,
      fpsWarn: 30,
      frameTimeGood: 16.6,
      frameTimeWarn: 33.3,
      memoryGood: 2048,
      memoryWarn: 4096.5,
      gpuTimeGood: 8,
      gpuTimeWarn: 15,
    });
    const patched = await dataOf<Record<string, unknown>>(
      await send(key, t.projectId, "PATCH", projectPath(`threshold-profiles/${created.id}`), {
        fpsWarn: "45",
        gpuTimeGood: null,
      }),
    );
    expect(patched).toMatchObject({ fpsWarn: 45, gpuTimeGood: null, fpsGood: 60 });
  });

  it("a string that is not a number stays a 400 naming the field, and nothing is written", async () => {
    const list = async () =>
      dataOf<unknown[]>(await send(key, t.projectId, "GET", projectPath("threshold-profiles")));
    const before = await list();
    const res = await send(key, t.projectId, "POST", projectPath("threshold-profiles"), {
      name: "Typo",
      fpsGood: "sixty",
    });
    expect(res.status).toBe(400);
    const p = await problemOf(res);
    expect(p.field).toBe("json.fpsGood");
    expect(p.detail).toBe('json.fpsGood: must be a number or a numeric string such as "16.6"');
    expect(await list()).toEqual(before);
  });
});

describe("framedash content delete", () => {
  async function seedEntries() {
    await dataOf(
      await send(key, t.projectId, "POST", "/api/v1/content", {
        entries: [
          { contentType: "weapon", contentId: "rifle", displayName: "Rifle" },
          { contentType: "weapon", contentId: "bow", displayName: "Bow" },
          { contentType: "map", contentId: "rifle", displayName: "Rifle Range" },
        ],
      }),
    );
    return dataOf<Ok<"/v1/content">>(await send(key, t.projectId, "GET", "/api/v1/content"));
  }

  it("deletes by <uuid> and by --type with --content-id, naming the project by X-Project-Id", async () => {
    const entries = await seedEntries();
    const bow = entries.find((e) => e.contentId === "bow");
    const byId = `/api/v1/content?${new URLSearchParams({ id: bow?.id ?? "" })}`;
    expect(await dataOf(await send(token, t.projectId, "DELETE", byId))).toEqual({
      id: bow?.id,
      contentType: "weapon",
      contentId: "bow",
    });
    const byPair = `/api/v1/content?${new URLSearchParams({ contentType: "weapon", contentId: "rifle" })}`;
    const rifle = entries.find((e) => e.contentType === "weapon" && e.contentId === "rifle");
    expect(await dataOf(await send(key, t.projectId, "DELETE", byPair))).toEqual({
      id: rifle?.id,
      contentType: "weapon",
      contentId: "rifle",
    });
    const left = await dataOf<Ok<"/v1/content">>(await send(key, t.projectId, "GET", "/api/v1/content"));
    expect(left.map((e) => [e.contentType, e.contentId])).toEqual([["map", "rifle"]]);
    // Gone: 404 for both forms.
    for (const path of [byId, byPair]) {
      const res = await send(key, t.projectId, "DELETE", path);
      expect(res.status).toBe(404);
      expect((await problemOf(res)).error_category).toBe("not_found");
    }
  });

  it("400 problem+json when neither form, both, or half a pair is given; nothing is deleted", async () => {
    await seedEntries();
    const before = await withDb((db) =>
      db.select().from(contentEntries).where(eq(contentEntries.projectId, t.projectId)),
    );
    const cases: Array<[string, string, string]> = [
      ["", "query", "query: required: give id, or contentType and contentId"],
      [
        `?id=${before[0]?.id}&contentType=map&contentId=rifle`,
        "query",
        "query: give id, or contentType and contentId, not both",
      ],
      ["?contentType=map", "query.contentId", "query.contentId: required with contentType"],
      ["?contentId=rifle", "query.contentType", "query.contentType: required with contentId"],
      ["?id=rifle", "query.id", "query.id: Invalid UUID"],
    ];
    for (const [qs, field, detail] of cases) {
      const res = await send(key, t.projectId, "DELETE", `/api/v1/content${qs}`);
      expect(res.status, qs).toBe(400);
      const p = await problemOf(res);
      expect(p.field).toBe(field);
      expect(p.detail).toBe(detail);
    }
    // Without X-Project-Id (a caller that forgot it): the header is named.
    const res = await SELF.fetch(`${BASE}/api/v1/content?contentType=map&contentId=rifle`, {
      method: "DELETE",
      headers: { Accept: ACCEPT, "X-API-Key": t.keys.full.key },
    });
    expect(res.status).toBe(400);
    expect((await problemOf(res)).field).toBe("header.X-Project-Id");
    const after = await withDb((db) =>
      db.select().from(contentEntries).where(eq(contentEntries.projectId, t.projectId)),
    );
    expect(after).toEqual(before);
  });
});

describe("framedash maps delete <map-id>", () => {
  it("takes the user map id (URL-encoded) as well as the internal id", async () => {
    const image = await png(8, 8);
    const ids: Record<string, string> = {};
    for (const mapId of ["Level 1/Arena", "desert"]) {
      const res = await upload(
        key,
        captureForm({ map_id: mapId, min: [0, 0], max: [1, 1], width: 8, height: 8, image }),
      );
      ids[mapId] = ((await res.json()) as { id: string }).id;
    }
    const keyOf = async (id: string) =>
      (await withDb((db) => db.select({ k: maps.imageKey }).from(maps).where(eq(maps.id, id))))[0]?.k ?? "";
    const levelKey = await keyOf(ids["Level 1/Arena"] ?? "");

    const byUserId = projectPath(`maps/${encodeURIComponent("Level 1/Arena")}`);
    expect(await dataOf(await send(token, t.projectId, "DELETE", byUserId))).toEqual({
      id: ids["Level 1/Arena"],
    });
    expect(await env.MAPS.head(levelKey)).toBeNull();
    expect(await dataOf(await send(key, t.projectId, "DELETE", projectPath(`maps/${ids.desert}`)))).toEqual({
      id: ids.desert,
    });
    const left = (await listMaps()).map((m) => m.mapId);
    expect(left).not.toContain("Level 1/Arena");
    expect(left).not.toContain("desert");
    expect((await send(key, t.projectId, "DELETE", byUserId)).status).toBe(404);
  });

  it("an internal id wins over a user map id that spells another map's UUID", async () => {
    const image = await png(8, 8);
    const first = (await (
      await upload(
        key,
        captureForm({ map_id: "first", min: [0, 0], max: [1, 1], width: 8, height: 8, image }),
      )
    ).json()) as { id: string };
    // A second map whose user id is the first map's internal id.
    const second = (await (
      await upload(
        key,
        captureForm({ map_id: first.id, min: [0, 0], max: [1, 1], width: 8, height: 8, image }),
      )
    ).json()) as { id: string };
    expect(await dataOf(await send(key, t.projectId, "DELETE", projectPath(`maps/${first.id}`)))).toEqual({
      id: first.id,
    });
    const left = await listMaps();
    expect(left.find((m) => m.id === second.id)?.mapId).toBe(first.id);
    // Now only the user id matches: the second map goes.
    expect(await dataOf(await send(key, t.projectId, "DELETE", projectPath(`maps/${first.id}`)))).toEqual({
      id: second.id,
    });
  });
});

describe("framedash query --format table, and the MCP query tool", () => {
  it("answers rows with rowCount beside them", async () => {
    const cases: Array<[Record<string, unknown>, number]> = [
      // The CLI: {sql, project_id}, limit only when given.
      [
        {
          sql: "SELECT count() AS n, 'all' AS k FROM events UNION ALL SELECT countIf(fps > 30), 'fast' FROM events",
          project_id: t.projectId,
        },
        2,
      ],
      // The MCP tool: {project_id, sql, limit: 100}.
      [{ project_id: t.projectId, sql: "SELECT count() AS n FROM events", limit: 100 }, 1],
      [{ project_id: t.projectId, sql: "SELECT event_name FROM events WHERE 0" }, 0],
    ];
    for (const [body, rows] of cases) {
      const res = await send(key, t.projectId, "POST", "/api/v1/query", body);
      const data = await dataOf<Ok<"/v1/query", "post">>(res);
      expect(data.rows).toHaveLength(rows);
      expect(data.rowCount).toBe(rows);
    }
  });
});

describe("framedash status [--fresh], and the MCP get_project_status tool", () => {
  type Status = Ok<"/v1/projects/{id}/status">;

  it("carries kpis.fetchedAt; answers from a ~60 s cache; fresh=1 recomputes and refreshes it", async () => {
    const s = await seedTenant("pro", "Status Cache Studio");
    const cred = { apiKey: s.keys.read.key };
    const status = async (suffix: string) =>
      dataOf<Status>(await send(cred, s.projectId, "GET", `/api/v1/projects/${s.projectId}/${suffix}`));
    const sqlCount = async () => {
      const res = await send({ apiKey: s.keys.full.key }, s.projectId, "POST", "/api/v1/query", {
        project_id: s.projectId,
        sql: "SELECT count() AS n FROM events",
      });
      return Number((await dataOf<Ok<"/v1/query", "post">>(res)).rows[0]?.n);
    };

    const first = await status("status");
    expect(first.project.id).toBe(s.projectId);
    expect(first.kpis.totalEvents).toBe(0);
    expect(Number.isInteger(first.kpis.fetchedAt)).toBe(true);
    expect(Math.abs(first.kpis.fetchedAt - Date.now())).toBeLessThan(60_000);

    const res = await ingest(await gzip(batch([event(1), event(2), event(3)])), s.keys.ingest.key, {
      gzip: true,
    });
    expect(res.status).toBe(202);
    // Wait on the SQL endpoint, which has no cache, so the status cache is left as it was.
    await waitFor(sqlCount, (n) => n >= 3, { intervalMs: 200, message: "3 events stored" });

    // Cached: the same answer, and fetchedAt says how old it is.
    expect((await status("status")).kpis).toEqual(first.kpis);
    // --fresh: recomputed now. It counts settled inserts only (the batch's claim given back once every
    // rollup holds its rows: docs/analytics.md), a moment after the events are visible to SQL; each fresh
    // read recomputes, so wait on it for the state.
    const fresh = await waitFor(
      () => status("status?fresh=1"),
      (s) => s.kpis.totalEvents === 3,
      { intervalMs: 200, message: "a fresh status counting the 3 settled events" },
    );
    expect(fresh.kpis.totalEvents).toBe(3);
    expect(fresh.kpis.fetchedAt).toBeGreaterThanOrEqual(first.kpis.fetchedAt);
    // And the cache now holds that answer.
    expect((await status("status")).kpis).toEqual(fresh.kpis);
    // Anything but 0 or 1 is refused, naming the parameter.
    const bad = await send(cred, s.projectId, "GET", `/api/v1/projects/${s.projectId}/status?fresh=yes`);
    expect((await problemOf(bad)).field).toBe("query.fresh");
  });
});
