import { beforeAll, describe, expect, it } from "vitest";
import { type GenEvent, generateDataset, withDeviceContext } from "../support/analytics-dataset.js";
import { clocked, getData, ingestAll } from "../support/analytics-ingest.js";
import { type CellParams, circularMedianRef, refCell, refHeatmap } from "../support/analytics-reference.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import { insertProfile } from "../support/records.js";

// The cell drill-down against the reference (test/support/analytics-reference.ts refCell) over the
// generated dataset with device context on two sessions in three, plus a cell of scripted hitches.

/** The file's clock: the data is generated around this instant and every read and reference is at it. */
const NOW = Date.now();

let t: Tenant;
let events: GenEvent[];
let anchorMs: number;
let profileId: string;
const PROFILE_MARKS = {
  fps: { good: 60, warn: 30 },
  frame_time: { good: 16.5, warn: 33 },
  memory: { good: null, warn: 4096 },
  gpu_time: { good: null, warn: null },
};

/** A cell of its own on dust (x, y in [300, 325)): frame times from 1 ms to beyond 1 s. */
function hitches(nowMs: number): GenEvent[] {
  const frameTimes = [1, 0.5, 16, 16.5, 33, 250, 900, 1023.9, 1024, 1500, 4000, 12.25];
  return frameTimes.map((ms, i) => ({
    tsUs: (nowMs - (i + 1) * 60_000) * 1000 + i,
    eventName: "frame_sample",
    sessionId: `hitch-${i % 3}`,
    playerId: i % 3 === 2 ? "" : `hitcher-${i % 3}`,
    buildId: i < 6 ? "2.0.0" : "2.0.1",
    mapId: "dust",
    platform: i % 2 ? "ps5" : "windows",
    engineVersion: "5.4.2",
    pos: { x: Math.fround(300 + i * 2.03), y: Math.fround(324.5 - i), z: Math.fround(10 + i) },
    perf: { fps: Math.fround(Math.min(1000, 1000 / ms)), frameTimeMs: Math.fround(ms) },
    ...(i % 4 === 0 ? {} : { camera: { yaw: Math.fround(i * 30), pitch: Math.fround(-45 + i * 5) } }),
    ...(i % 3 === 0 ? {} : { device: { gpu: i % 2 ? "RTX 4070" : "RX 6700", deviceModel: "Desktop" } }),
  }));
}

/**
 * A cell of its own on dust (x, y in [400, 425)): five slow frames looking around north (yaws 340° to
 * 20°, straddling 0°) and three fast ones looking south. The slow five are the frame-time tail.
 */
const NORTH_YAWS = [10, 340, 355, 20, 350];
function northFacing(nowMs: number): GenEvent[] {
  const yaws = [...NORTH_YAWS, 180, 190, 200];
  return yaws.map((yaw, i) => ({
    tsUs: (nowMs - (i + 1) * 45_000) * 1000 + i,
    eventName: "frame_sample",
    sessionId: `north-${i % 2}`,
    playerId: `looker-${i % 2}`,
    buildId: "2.0.1",
    mapId: "dust",
    platform: "windows",
    engineVersion: "5.4.2",
    pos: { x: Math.fround(401 + i), y: Math.fround(420 - i) },
    perf: i < NORTH_YAWS.length ? { fps: 10, frameTimeMs: 100 } : { fps: 100, frameTimeMs: 10 },
    camera: { yaw, pitch: Math.fround(-10 + i) },
  }));
}

beforeAll(async () => {
  t = clocked(await seedTenant("enterprise", "Cell Studio"), NOW);
  anchorMs = NOW;
  events = [
    ...withDeviceContext(generateDataset(20261124, anchorMs).events),
    ...hitches(anchorMs),
    ...northFacing(anchorMs),
  ];
  await ingestAll(t, events);
  profileId = await insertProfile(t.projectId, {
    name: "Console 30",
    fpsGood: 60,
    fpsWarn: 30,
    frameTimeGood: 16.5,
    frameTimeWarn: 33,
    memoryWarn: 4096,
  });
}, 240_000);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Equal to the reference; means (sums of float32 values) within 1e-9 relative, everything else exact. */
function expectSame(actual: Json, expected: Json, path = "data") {
  if (typeof expected === "number" && typeof actual === "number" && !Number.isInteger(expected)) {
    expect(Math.abs(actual - expected), path).toBeLessThanOrEqual(Math.abs(expected) * 1e-9);
    return;
  }
  if (expected === null || typeof expected !== "object") {
    expect(actual, path).toEqual(expected);
    return;
  }
  expect(actual !== null && typeof actual === "object", path).toBe(true);
  if (Array.isArray(expected)) {
    expect((actual as Json[]).length, `${path}.length`).toBe(expected.length);
    expected.forEach((v, i) => {
      expectSame((actual as Json[])[i] as Json, v, `${path}[${i}]`);
    });
    return;
  }
  expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
  for (const [k, v] of Object.entries(expected)) {
    expectSame((actual as Record<string, Json>)[k] as Json, v, `${path}.${k}`);
  }
}

function query(q: Omit<CellParams, "profile"> & { profileId?: string }): string {
  const params = new URLSearchParams({
    mapId: q.mapId,
    x: String(q.x),
    y: String(q.y),
    cellSize: String(q.cellSize),
    days: String(q.days),
    metric: q.metric,
  });
  for (const k of ["z", "buildId", "platform", "profileId"] as const) {
    if (q[k] !== undefined) {
      params.set(k, String(q[k]));
    }
  }
  return `/heatmap/cell?${params}`;
}

async function check(q: CellParams, withProfile: boolean) {
  const profile = withProfile ? { id: profileId, name: "Console 30", marks: PROFILE_MARKS } : undefined;
  const got = await getData<Json>(t, query({ ...q, ...(withProfile ? { profileId } : {}) }));
  const want = refCell(events, { ...q, profile }, anchorMs);
  expectSame(got, JSON.parse(JSON.stringify(want)) as Json);
  return { got: got as unknown as ReturnType<typeof refCell>, want };
}

/** The busiest cells of the reference's heatmap: real cells with many samples. */
function busiest(mapId: string, cellSize: number, days: number, n: number) {
  return refHeatmap(events, { mapId, cellSize, days, tails: true }, anchorMs)
    .sort((a, b) => b.event_count - a.event_count || a.x - b.x || a.y - b.y)
    .slice(0, n);
}

describe("the dataset", () => {
  it("has events with and without device context in the cells compared", () => {
    const cells = busiest("dust", 25, 30, 3);
    expect(cells.length).toBe(3);
    const inCell = (e: GenEvent, c: { x: number; y: number }) =>
      e.mapId === "dust" &&
      e.pos !== undefined &&
      Math.floor(Math.fround(e.pos.x) / 25) * 25 === c.x &&
      Math.floor(Math.fround(e.pos.y) / 25) * 25 === c.y;
    const first = cells[0] as { x: number; y: number };
    expect(events.some((e) => inCell(e, first) && e.device)).toBe(true);
    expect(events.some((e) => inCell(e, first) && !e.device)).toBe(true);
  });
});

describe("GET /heatmap/cell equals the reference", () => {
  it("the busiest cells over 30 days, with a profile, for each metric", async () => {
    const metrics = ["fps", "frame_time", "memory"] as const;
    type Tails = { x: number; y: number } & Record<string, number | null>;
    const heatmap = await getData<Tails[]>(t, "/heatmap?mapId=dust&cellSize=25&days=30&tails=1");
    for (const [i, c] of busiest("dust", 25, 30, 3).entries()) {
      const { got } = await check(
        { mapId: "dust", cellSize: 25, days: 30, x: c.x, y: c.y, metric: metrics[i] ?? "fps" },
        true,
      );
      // The heatmap's tail figures and the cell's percentiles are the same function: the dashboard
      // shows the cell's p05, p95 and max where the heatmap's answer no longer carries them.
      expect(got.distributions.frame_time.p95).toBe(c.p95_frame_time);
      const served = heatmap.find((h) => h.x === c.x && h.y === c.y);
      expect(served).toBeDefined();
      expect([
        got.distributions.fps.p05,
        got.distributions.frame_time.p95,
        got.distributions.memory.max,
        got.distributions.gpu_time.p95,
      ]).toEqual([served?.p05_fps, served?.p95_frame_time, served?.max_memory, served?.p95_gpu_time]);
      expect(got.distributions.fps.samples).toBeGreaterThan(0);
      // Events without a device context are their own group.
      expect(got.breakdowns.gpu?.some((g) => g.key === null)).toBe(true);
    }
  });

  it("p05, p95 and max are the heatmap's tails=1 figures, on cells where every metric has samples", async () => {
    type Tails = { x: number; y: number; event_count: number } & Record<string, number | null>;
    const heatmap = await getData<Tails[]>(t, "/heatmap?mapId=dust&cellSize=25&days=7&tails=1");
    const full = heatmap
      .filter((c) => c.p05_fps !== null && c.max_memory !== null && c.p95_gpu_time !== null)
      .sort((a, b) => b.event_count - a.event_count)
      .slice(0, 3);
    expect(full.length).toBe(3);
    for (const c of full) {
      const got = await getData<ReturnType<typeof refCell>>(
        t,
        query({ mapId: "dust", cellSize: 25, days: 7, x: c.x, y: c.y, metric: "memory" }),
      );
      expect([
        got.distributions.fps.p05,
        got.distributions.frame_time.p95,
        got.distributions.memory.max,
        got.distributions.gpu_time.p95,
      ]).toEqual([c.p05_fps, c.p95_frame_time, c.max_memory, c.p95_gpu_time]);
    }
  });

  it("cells of harbor at sizes 5, 10 and 50 without a profile, and over 7 days", async () => {
    for (const [cellSize, days] of [
      [5, 30],
      [10, 7],
      [50, 14],
    ] as const) {
      const [c] = busiest("harbor", cellSize, days, 1);
      expect(c).toBeDefined();
      const { got } = await check(
        { mapId: "harbor", cellSize, days, x: c?.x ?? 0, y: c?.y ?? 0, metric: "frame_time" },
        false,
      );
      expect(got.profile).toBeNull();
      expect(got.breakdowns.build_id?.every((g) => g.failingPct === null)).toBe(true);
    }
  });

  it("a 3-D cell with build and platform filters", async () => {
    const [platform, c] = ["windows", "ps5", "switch"]
      .map((p) => {
        const cells = refHeatmap(
          events,
          { mapId: "dust", cellSize: 25, days: 30, includeZ: true, buildId: "1.1.0", platform: p },
          anchorMs,
        );
        return [p, cells.sort((a, b) => b.event_count - a.event_count)[0]] as const;
      })
      .find(([, cell]) => cell !== undefined) ?? ["", undefined];
    expect(c?.z).toBeDefined();
    await check(
      {
        mapId: "dust",
        cellSize: 25,
        days: 30,
        x: c?.x ?? 0,
        y: c?.y ?? 0,
        z: c?.z,
        buildId: "1.1.0",
        platform,
        metric: "fps",
      },
      true,
    );
  });

  it("the hitch cell: every bucket, the tail beyond 1 s, worst sessions and the repro", async () => {
    const { got } = await check(
      { mapId: "dust", cellSize: 25, days: 7, x: 300, y: 300, metric: "frame_time" },
      true,
    );
    const ft = got.distributions.frame_time;
    expect(ft.samples).toBe(12);
    expect(ft.edges[0]).toBe(1);
    expect(ft.edges.at(-1)).toBe(1024);
    // 0.5 ms below the first edge; 1 ms in [1, 2^0.25); 1024, 1500 and 4000 at or above the last edge.
    expect(ft.counts[0]).toBe(1);
    expect(ft.counts[1]).toBe(1);
    expect(ft.counts.at(-1)).toBe(3);
    // 900 and 1023.9 ms in [2^(39/4), 1024).
    expect(ft.counts.at(-2)).toBe(2);
    expect(ft.counts.reduce((a, b) => a + b, 0)).toBe(12);
    expect(ft.p50).toBe(33);
    // Worst sessions by p95 frame time, three sessions.
    expect(got.worstSessions.map((s) => s.sessionId)).toHaveLength(3);
    expect(got.repro.bounds).toEqual({ minX: 300, maxX: 325, minY: 300, maxY: 325 });
    expect(got.repro.worstSamples).toBeGreaterThan(0);
    const marks = got.profile?.marks.find((m) => m.metric === "frame_time");
    // Worse than 16.5 ms: 33, 250, 900, 1023.9, 1024, 1500, 4000 of 12; than 33 ms: all but 33 of those.
    expect(marks).toMatchObject({
      good: 16.5,
      warn: 33,
      samples: 12,
      failingGoodPct: 58.33,
      failingWarnPct: 50,
    });
  });

  it("the worst samples' yaw straddling 0° has its circular median", async () => {
    const { got } = await check(
      { mapId: "dust", cellSize: 25, days: 7, x: 400, y: 400, metric: "frame_time" },
      true,
    );
    expect(got.repro.worstSamples).toBe(NORTH_YAWS.length);
    // Read around from the widest gap (20° → 340°): 340, 350, 355, 10, 20; the third is 355. A plain
    // median of the sorted 10, 20, 340, 350, 355 would be 340, the edge of the group.
    expect(got.repro.camera?.yaw).toBe(355);
    expect(circularMedianRef(NORTH_YAWS)).toBe(355);
    // The pitch stays a plain median: -10 … -6 for the five slow frames.
    expect(got.repro.camera?.pitch).toBe(-8);
  });

  it("a cell without samples answers zeros and nulls", async () => {
    const { got } = await check(
      { mapId: "dust", cellSize: 10, days: 7, x: 9000, y: -9000, metric: "fps" },
      true,
    );
    expect(got.samples).toBe(0);
    expect(got.distributions.fps.counts.every((n) => n === 0)).toBe(true);
    expect(got.distributions.fps.p95).toBeNull();
    expect(got.worstSessions).toEqual([]);
    expect(got.repro.position).toBeNull();
    expect(got.repro.buildId).toBeNull();
  });

  it("takes the map's internal id as the heatmap does", async () => {
    const res = await api(
      `/v1/projects/${t.projectId}${query({ mapId: "dust", cellSize: 25, days: 1, x: 300, y: 300, metric: "fps" })}`,
      { key: t.keys.read.key },
    );
    expect(res.status).toBe(200);
  });
});

describe("GET /heatmap/cell refuses bad input", () => {
  const cases: Array<[string, string, number]> = [
    ["mapId=dust&x=3&y=0&cellSize=25", "query.x", 400],
    ["mapId=dust&x=0&y=0&z=7&cellSize=5", "query.z", 400],
    ["mapId=dust&x=abc&y=0", "query.x", 400],
    ["x=0&y=0", "query.mapId", 400],
    ["mapId=dust&x=0", "query.y", 400],
    ["mapId=dust&x=0&y=0&metric=speed", "query.metric", 400],
    ["mapId=dust&x=0&y=0&days=3", "query.days", 400],
    ["mapId=dust&x=0&y=0&profileId=nope", "query.profileId", 400],
    ["mapId=dust&x=0&y=0&profileId=00000000-0000-4000-8000-000000000000", "query.profileId", 404],
  ];
  for (const [qs, field, status] of cases) {
    it(`${qs} → ${status} naming ${field}`, async () => {
      const res = await api(`/v1/projects/${t.projectId}/heatmap/cell?${qs}`, { key: t.keys.read.key });
      expect(res.status).toBe(status);
      const p = await problemOf(res);
      expect(p.detail).toContain(field);
    });
  }

  it("needs analytics:read", async () => {
    const res = await api(`/v1/projects/${t.projectId}/heatmap/cell?mapId=dust&x=0&y=0`, {
      key: t.keys.ingest.key,
    });
    expect(res.status).toBe(403);
  });
});
