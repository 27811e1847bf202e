import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { GenEvent } from "../support/analytics-dataset.js";
import { ingestAll } from "../support/analytics-ingest.js";
import { BASE, seedTenant, type Tenant } from "../support/harness.js";
import { api } from "../support/http.js";
import { insertMap } from "../support/records.js";

const MB = 1_048_576;

let t: Tenant;
let arenaUuid: string;

/**
 * What the Unity, UE5 and Godot editor overlays accept (their Editor/ parsers): `success: true` and a
 * `data` array; per cell x and y numbers, z absent, null or a number, weight and event_count numbers
 * or numeric strings, avg_fps, avg_frame_time and avg_memory numbers, avg_gpu_time and avg_mem_vram
 * absent, null or numbers. Anything else rejects the whole answer ("Malformed cell entry").
 */
function overlayParse(text: string) {
  const root = JSON.parse(text) as { success?: unknown; data?: unknown };
  if (root.success !== true || !Array.isArray(root.data)) {
    throw new Error("Malformed heatmap response.");
  }
  const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
  const numOrString = (v: unknown) => isNum(v) || (typeof v === "string" && Number.isFinite(Number(v)));
  const optional = (v: unknown) => v === undefined || v === null || isNum(v);
  return root.data.map((entry: Record<string, unknown>) => {
    const ok =
      typeof entry === "object" &&
      entry !== null &&
      isNum(entry.x) &&
      isNum(entry.y) &&
      optional(entry.z) &&
      numOrString(entry.weight) &&
      numOrString(entry.event_count) &&
      isNum(entry.avg_fps) &&
      isNum(entry.avg_frame_time) &&
      isNum(entry.avg_memory) &&
      optional(entry.avg_gpu_time) &&
      optional(entry.avg_mem_vram);
    if (!ok) {
      throw new Error(`Malformed cell entry in heatmap response: ${JSON.stringify(entry)}`);
    }
    return entry;
  });
}

/** The overlays' request: their path builder, their two headers, redirects refused. */
function overlayFetch(
  key: string,
  mapSlug: string,
  cellSize: number,
  days: number,
  eventName = "",
  tails = false,
) {
  let path = `/api/v1/projects/${encodeURIComponent(t.projectId)}/heatmap?mapId=${encodeURIComponent(mapSlug)}`;
  path += `&cellSize=${cellSize}&days=${days}&includeZ=true`;
  if (eventName) {
    path += `&eventName=${encodeURIComponent(eventName)}`;
  }
  // Not the overlays' request: the same one asking for the tails.
  if (tails) {
    path += "&tails=1";
  }
  return SELF.fetch(`${BASE}${path}`, {
    headers: { "X-API-Key": key, Accept: "application/json, application/problem+json" },
    redirect: "manual",
  });
}

function at(x: number, y: number, z: number, over: Partial<GenEvent>): GenEvent {
  return {
    tsUs: (Date.now() - 3_600_000) * 1000 + Math.round((x + 100) * 1000 + y * 10 + z),
    eventName: "frame_sample",
    sessionId: "overlay-s",
    playerId: "overlay-p",
    buildId: "1.0.0",
    mapId: "arena",
    platform: "windows",
    pos: { x, y, z },
    ...over,
  };
}

beforeAll(async () => {
  t = await seedTenant("pro", "Overlay Studio");
  await ingestAll(t, [
    // Cell (0, 0, 0) at 25 world units.
    at(1, 2, 3, {
      perf: { fps: 60, frameTimeMs: 16, memoryUsedBytes: 1024 * MB },
      metrics: { "mem.vram": 512 * MB },
    }),
    at(10, 20, 5, { perf: { fps: 30, frameTimeMs: 33, memoryUsedBytes: 2048 * MB } }),
    at(24.5, 0, 24, { perf: { memoryUsedBytes: 3072 * MB } }),
    at(4, 4, 4, { eventName: "level_up", perf: { fps: 90 } }),
    at(2, 2, 2, { eventName: "level_up", metrics: { "mem.vram": 256 * MB } }),
    // Cell (-25, 25, 25).
    at(-1, 30, 26, { perf: { fps: 120, frameTimeMs: 8, gpuTimeMs: 4 } }),
  ]);
  arenaUuid = await insertMap(t.projectId, "arena", {
    name: "Arena",
    imageWidth: 2,
    imageHeight: 2,
    worldMinX: -50,
    worldMinY: -50,
    worldMaxX: 50,
    worldMaxY: 50,
  });
}, 120_000);

/** The arena's two cells as the overlays draw them, in performance mode. */
const ARENA_CELLS = [
  {
    x: -25,
    y: 25,
    z: 25,
    weight: 1,
    event_count: 1,
    avg_fps: 120,
    avg_frame_time: 8,
    avg_memory: 0,
    avg_gpu_time: 4,
    avg_mem_vram: null,
  },
  {
    x: 0,
    y: 0,
    z: 0,
    weight: 4,
    event_count: 4,
    // Means over the events carrying each metric: fps of 3, frame time of 2, memory of 3, VRAM of 1.
    avg_fps: 60,
    avg_frame_time: 24.5,
    avg_memory: 2048,
    avg_gpu_time: null,
    avg_mem_vram: 512,
  },
];

describe("the editor overlays' heatmap request", () => {
  it("performance mode: every cell parses, with the values the overlay draws", async () => {
    const res = await overlayFetch(t.keys.read.key, "arena", 25, 7);
    expect(res.status).toBe(200);
    // The overlays send no tails=1: the answer holds what they read and no tail field.
    expect(overlayParse(await res.text())).toEqual(ARENA_CELLS);
  });

  it("tails=1 adds the tail fields to the same cells, and the overlays still parse it", async () => {
    const res = await overlayFetch(t.keys.read.key, "arena", 25, 7, "", true);
    expect(res.status).toBe(200);
    expect(overlayParse(await res.text())).toEqual([
      {
        ...ARENA_CELLS[0],
        p05_fps: 120,
        p95_frame_time: 8,
        max_memory: null,
        p95_gpu_time: 4,
        p95_mem_vram: null,
      },
      {
        ...ARENA_CELLS[1],
        p05_fps: 30,
        p95_frame_time: 33,
        max_memory: 3072,
        p95_gpu_time: null,
        p95_mem_vram: 512,
      },
    ]);
  });

  it("events mode: the same shape, 0 where the overlays need a number and no event carries it", async () => {
    const res = await overlayFetch(t.keys.read.key, "arena", 25, 7, "level_up");
    expect(res.status).toBe(200);
    expect(overlayParse(await res.text())).toEqual([
      {
        x: 0,
        y: 0,
        z: 0,
        weight: 2,
        event_count: 2,
        avg_fps: 90,
        avg_frame_time: 0,
        avg_memory: 0,
        avg_gpu_time: null,
        avg_mem_vram: 256,
      },
    ]);
  });

  it("a refused request is a problem whose detail the overlay shows", async () => {
    const res = await overlayFetch(`${t.keys.read.key}x`, "arena", 25, 7);
    expect(res.status).toBe(401);
    const body = (await res.json()) as { detail?: unknown; title?: unknown };
    expect(typeof body.detail === "string" || typeof body.title === "string").toBe(true);
  });
});

describe("the MCP server's get_heatmap (API client headers), by the map's internal UUID", () => {
  it("answers the cells of the map's user id", async () => {
    const get = (mapId: string) =>
      api(
        `/v1/projects/${t.projectId}/heatmap?mapId=${mapId}&cellSize=25&days=7`,
        { token: t.token },
        {
          headers: { Accept: "application/problem+json, application/json;q=0.9" },
        },
      );
    const byUuid = await get(arenaUuid);
    expect(byUuid.status).toBe(200);
    const cells = overlayParse(await byUuid.text());
    expect(cells.map((c) => [c.x, c.y, c.weight])).toEqual([
      [-25, 25, 1],
      [0, 0, 4],
    ]);
    expect(cells.every((c) => !("z" in c))).toBe(true);
    expect(cells).toEqual(overlayParse(await (await get("arena")).text()));
  });
});
