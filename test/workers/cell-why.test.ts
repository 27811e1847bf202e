import { beforeAll, describe, expect, it } from "vitest";
import type { GenEvent, Perf } from "../support/analytics-dataset.js";
import { clocked, getData, ingestAll } from "../support/analytics-ingest.js";
import { type CellParams, refCell } from "../support/analytics-reference.js";
import { REF_BOUNDS, refBound } from "../support/frame-causes-reference.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { bucketFloor } from "../support/quantize.js";
import { insertProfile } from "../support/records.js";

// Why a cell is slow (docs/analytics.md, "Why a cell is slow"), on sessions whose causes are known: a
// GPU-bound bog on one GPU with a few game-thread-bound frames on another, a game-thread-bound town, a
// cave whose first entry stalls on disk reads, a cell under memory pressure beside an SDK that sends only
// fps. Each answer is checked against the hand-computed figures and the reference (refCell's `why`).

const NOW = Date.now();
const BUILD = "3.1.0";
const MAP = "wetlands";
const HEARTBEAT_MS = 10_000;

let t: Tenant;
let events: GenEvent[];
let frameProfile: string;
let fpsProfile: string;
let memoryProfile: string;

const FRAME_MARKS = {
  fps: { good: null, warn: null },
  frame_time: { good: 16.7, warn: 33 },
  memory: { good: null, warn: null },
  gpu_time: { good: null, warn: null },
};
const FPS_MARKS = { ...FRAME_MARKS, fps: { good: 60, warn: 30 }, frame_time: { good: null, warn: null } };
/** A profile that marks neither frame time nor fps. */
const MEMORY_MARKS = {
  ...FRAME_MARKS,
  frame_time: { good: null, warn: null },
  memory: { good: null, warn: 3072 },
};

/** Cell origins (cell size 25) of each place. */
const CELLS = {
  bog: { x: 0, y: 0 },
  town: { x: 50, y: 0 },
  cave: { x: 150, y: 0 },
  attic: { x: 250, y: 0 },
  field: { x: 400, y: 0 },
  arena: { x: 550, y: 0 },
} as const;

let clock = 0;
/** One heartbeat of `session` in `place`, HEARTBEAT_MS after the previous one of the file. */
function beat(
  session: string,
  place: keyof typeof CELLS,
  perf: Perf,
  extra: Partial<GenEvent> = {},
): GenEvent {
  clock += 1;
  const c = CELLS[place];
  return {
    tsUs: (NOW - 3_600_000 + clock * HEARTBEAT_MS) * 1000,
    eventName: "perf_heartbeat",
    sessionId: session,
    playerId: `player-${session}`,
    buildId: BUILD,
    mapId: MAP,
    platform: "windows",
    pos: { x: c.x + 5 + (clock % 10), y: c.y + 7 },
    perf,
    ...extra,
  };
}

/** A frame's times in ms: the frame, its GPU, game-thread and render-thread times (fps 1000 / frame). */
type Times = [frame: number, gpu: number, game: number, render: number];
const perfOf = ([frame, gpu, game, render]: Times): Perf => ({
  frameTimeMs: frame,
  fps: 1000 / frame,
  gpuTimeMs: gpu,
  gameThreadMs: game,
  renderThreadMs: render,
});

/** `n` heartbeats of `session` in `place` with the same times. */
const beats = (
  n: number,
  session: string,
  place: keyof typeof CELLS,
  times: Times,
  extra: Partial<GenEvent> = {},
) => Array.from({ length: n }, () => beat(session, place, perfOf(times), extra));

/** A session's ordinary frames elsewhere on the map: its median frame time is 16 ms. */
const ordinary = (session: string, n: number, extra: Partial<GenEvent> = {}) =>
  beats(n, session, "field", [16, 9, 8, 6], extra);

function scenario(): GenEvent[] {
  const rtx3060 = { device: { gpu: "RTX 3060" } };
  const rtx4070 = { device: { gpu: "RTX 4070" } };
  const out: GenEvent[] = [];
  // The bog: six GPU-bound 40 ms frames on an RTX 3060; on an RTX 4070, three 20 ms frames (not slow)
  // and two game-thread-bound 36 ms frames.
  out.push(...ordinary("bog-a", 10, rtx3060), ...beats(6, "bog-a", "bog", [40, 38, 12, 9], rtx3060));
  out.push(...ordinary("bog-b", 10, rtx4070), ...beats(3, "bog-b", "bog", [20, 17, 10, 8], rtx4070));
  out.push(...beats(2, "bog-b", "bog", [36, 14, 34, 20], rtx4070));
  // The town: game-thread bound, 48 ms frames of 45 ms on the game thread.
  out.push(...ordinary("town-a", 6), ...beats(4, "town-a", "town", [48, 11, 45, 12]));
  // The cave: three sessions, each stalling 120 ms on its first heartbeat there (400 ms of disk reads in
  // the window, neither thread nor GPU near the frame), then four ordinary frames.
  for (const s of ["cave-1", "cave-2", "cave-3"]) {
    out.push(
      ...ordinary(s, 8),
      ...beats(1, s, "cave", [120, 6, 14, 5], {
        metrics: { "io.read_time_ms": 400, "io.read_bytes": 52_428_800 },
      }),
      ...beats(4, s, "cave", [16, 9, 8, 6], { metrics: { "io.read_time_ms": 0.5, "io.read_bytes": 4096 } }),
    );
  }
  // The arena: the same 12 ms GPU-bound frames on a 120 Hz phone (over its 8.3 ms budget) and a 60 Hz
  // TV (within its 16.7 ms), each sending its refresh rate as the web SDK does.
  out.push(
    ...beats(4, "phone-1", "arena", [12, 11, 5, 4], {
      device: { gpu: "Adreno 740" },
      metrics: { "display.hz": 120 },
    }),
    ...beats(3, "tv-1", "arena", [12, 11, 5, 4], {
      device: { gpu: "Mali-G52" },
      metrics: { "display.hz": 60 },
    }),
  );
  // The attic: a 4 GB device (its session's device_info) using 3.9 GB, 50 ms frames with idle stages;
  // and an SDK sending only fps (20) beside it: nothing collected explains its frames.
  out.push({
    tsUs: (NOW - 3_700_000) * 1000,
    eventName: "device_info",
    sessionId: "attic-1",
    playerId: "player-attic-1",
    buildId: BUILD,
    mapId: MAP,
    platform: "android",
    attributes: { memory_total_mb: "4096" },
  });
  for (let i = 0; i < 3; i++) {
    out.push(
      beat("attic-1", "attic", {
        frameTimeMs: 50,
        fps: 20,
        gpuTimeMs: 10,
        gameThreadMs: 12,
        memoryUsedBytes: 3900 * 1_048_576,
      }),
    );
  }
  for (let i = 0; i < 2; i++) {
    out.push(beat("fps-1", "attic", { fps: 20 }));
  }
  return out;
}

beforeAll(async () => {
  t = clocked(await seedTenant("enterprise", "Why Studio"), NOW);
  events = scenario();
  await ingestAll(t, events);
  frameProfile = await insertProfile(t.projectId, { name: "PC 30", frameTimeGood: 16.7, frameTimeWarn: 33 });
  fpsProfile = await insertProfile(t.projectId, { name: "Mobile 30", fpsGood: 60, fpsWarn: 30 });
  memoryProfile = await insertProfile(t.projectId, { name: "Memory only", memoryWarn: 3072 });
}, 240_000);

type Why = ReturnType<typeof refCell>["why"];
type Group = ReturnType<typeof refCell>["breakdowns"][string][number];

async function cell(place: keyof typeof CELLS, profile: "frame" | "fps" | "memory" | null) {
  const q: CellParams = { mapId: MAP, cellSize: 25, days: 7, metric: "frame_time", ...CELLS[place] };
  const params = new URLSearchParams({
    mapId: MAP,
    cellSize: "25",
    days: "7",
    metric: "frame_time",
    x: String(q.x),
    y: String(q.y),
  });
  if (profile) {
    params.set(
      "profileId",
      profile === "frame" ? frameProfile : profile === "fps" ? fpsProfile : memoryProfile,
    );
  }
  const got = await getData<{ why: Why; breakdowns: Record<string, Group[]> }>(t, `/heatmap/cell?${params}`);
  const marks = profile === "frame" ? FRAME_MARKS : profile === "fps" ? FPS_MARKS : MEMORY_MARKS;
  const want = refCell(events, { ...q, ...(profile ? { profile: { id: "", name: "", marks } } : {}) }, NOW);
  // The whole `why` and every group's new fields equal the reference's.
  expect(got.why).toEqual(JSON.parse(JSON.stringify(want.why)));
  for (const [dim, groups] of Object.entries(want.breakdowns)) {
    const pick = (g: Group) => [g.key, g.slow, g.bounds, g.hitchJudged, g.hitches, g.hitchesPerMinute];
    expect(got.breakdowns[dim]?.map(pick), dim).toEqual(JSON.parse(JSON.stringify(groups.map(pick))));
  }
  return got;
}

const boundsOf = (why: Why) =>
  Object.fromEntries(why.bounds.filter((b) => b.slow > 0).map((b) => [b.bound, [b.slow, b.pct]]));

describe("why a cell is slow", () => {
  it("the bog: 75 % of its slow frames GPU-bound, all of them on the RTX 3060", async () => {
    const got = await cell("bog", "frame");
    expect(got.why.basis).toBe("frame_time");
    expect(got.why.threshold).toBe(33);
    expect(got.why.heartbeats).toBe(11);
    expect(got.why.slow).toBe(8);
    expect(boundsOf(got.why)).toEqual({ gpu: [6, 75], game_thread: [2, 25] });
    const byGpu = Object.fromEntries((got.breakdowns.gpu ?? []).map((g) => [g.key, g]));
    expect(byGpu["RTX 3060"]?.slow).toBe(6);
    expect(byGpu["RTX 3060"]?.bounds.gpu).toBe(6);
    expect(byGpu["RTX 4070"]?.slow).toBe(2);
    expect(byGpu["RTX 4070"]?.bounds.game_thread).toBe(2);
    // Hitches: the session medians are 16 ms; 40 and 36 ms frames are over twice that, 20 ms ones not.
    expect(got.why.hitches.judged).toBe(11);
    expect(got.why.hitches.hitches).toBe(8);
  });

  it("the town: game-thread bound", async () => {
    const got = await cell("town", "frame");
    expect(boundsOf(got.why)).toEqual({ game_thread: [4, 100] });
  });

  it("the cave: disk reads on first entry, and the hitches are the first visits'", async () => {
    const got = await cell("cave", "frame");
    expect(boundsOf(got.why)).toEqual({ io: [3, 100] });
    expect(got.why.hitches).toEqual({
      judged: 15,
      hitches: 3,
      pct: 20,
      heartbeatIntervalMs: HEARTBEAT_MS,
      minutesPlayed: 2.5,
      perMinute: 1.2,
      firstVisit: { judged: 3, hitches: 3, pct: 100 },
      laterVisits: { judged: 12, hitches: 0, pct: 0 },
    });
  });

  it("the attic: memory pressure from the session's device_info, and unknown where only fps was sent", async () => {
    // By frame time, the fps-only heartbeats cannot be slow: they carry none.
    const byFrame = await cell("attic", "frame");
    expect(byFrame.why.slow).toBe(3);
    expect(boundsOf(byFrame.why)).toEqual({ memory: [3, 100] });
    // By fps (the profile marks only fps), they are slow and nothing explains them.
    const byFps = await cell("attic", "fps");
    expect(byFps.why.basis).toBe("fps");
    expect(byFps.why.threshold).toBe(30);
    expect(byFps.why.slow).toBe(5);
    expect(boundsOf(byFps.why)).toEqual({ memory: [3, 60], unknown: [2, 40] });
    // No median frame time for the fps-only session: its heartbeats are not judged for hitches.
    expect(byFps.why.hitches.judged).toBe(3);
  });

  it("without a profile mark, each display's own budget: the 120 Hz phone's 12 ms frames are slow, the 60 Hz TV's not", async () => {
    for (const profile of [null, "memory"] as const) {
      const got = await cell("arena", profile);
      expect(got.why.basis).toBe("budget");
      expect(got.why.threshold).toBeNull();
      expect(got.why.heartbeats).toBe(7);
      expect(got.why.slow).toBe(4);
      expect(boundsOf(got.why)).toEqual({ gpu: [4, 100] });
      const byGpu = Object.fromEntries((got.breakdowns.gpu ?? []).map((g) => [g.key, g.slow]));
      expect(byGpu).toEqual({ "Adreno 740": 4, "Mali-G52": 0 });
    }
    // A profile's frame-time mark still rules: 12 ms is within 33.
    const marked = await cell("arena", "frame");
    expect(marked.why.basis).toBe("frame_time");
    expect(marked.why.slow).toBe(0);
  });

  it("without a profile every heartbeat counts", async () => {
    const got = await cell("bog", null);
    expect(got.why.basis).toBe("all");
    expect(got.why.threshold).toBeNull();
    expect(got.why.slow).toBe(11);
    expect(boundsOf(got.why)).toEqual({ gpu: [9, 81.82], game_thread: [2, 18.18] });
  });
});

/** A performance-bearing event with a position. */
const isPerf = (e: GenEvent) => {
  const p = e.perf ?? {};
  return !!(p.fps || p.frameTimeMs || p.memoryUsedBytes || p.gpuTimeMs);
};

/** The map's samples a heatmap of `build` (all without) draws: positioned and performance-bearing. */
const mapSamples = (build?: string) =>
  events.filter((e) => e.pos && isPerf(e) && e.mapId === MAP && (!build || e.buildId === build));

/** The "x,y" of the cell of `size` holding the sample. */
const cellOf = (e: GenEvent, size: number) => {
  const pos = e.pos as { x: number; y: number };
  return `${Math.floor(pos.x / size) * size},${Math.floor(pos.y / size) * size}`;
};

/** The "bound by" fields of every cell of `size`, from the events: the documented rule, in plain code. */
function refBoundCells(size: number, build?: string) {
  const cells = new Map<string, { heartbeats: number; slow: number; bounds: Record<string, number> }>();
  for (const e of mapSamples(build)) {
    const p = e.perf ?? {};
    const key = cellOf(e, size);
    const c = cells.get(key) ?? {
      heartbeats: 0,
      slow: 0,
      bounds: Object.fromEntries(REF_BOUNDS.map((b) => [b, 0])),
    };
    cells.set(key, c);
    const frame = p.frameTimeMs ? Math.fround(p.frameTimeMs) : p.fps ? 1000 / Math.fround(p.fps) : null;
    if (frame === null) {
      continue;
    }
    c.heartbeats++;
    const hz = e.metrics?.["display.hz"] ?? 60;
    if (frame > 1000 / hz) {
      c.slow++;
      // The map decides memory by the heartbeat's own device total: these heartbeats carry none.
      const b = refBound(e, 0);
      c.bounds[b] = (c.bounds[b] ?? 0) + 1;
    }
  }
  return Object.fromEntries(cells);
}

describe("the heatmap's bound-by mode", () => {
  it.each([
    { size: 25, build: undefined },
    { size: 50, build: undefined },
    { size: 10, build: undefined },
    { size: 25, build: BUILD },
  ])("each cell's slow heartbeats by bound, as the rule gives them: %o", async ({ size, build }) => {
    const params = new URLSearchParams({ mapId: MAP, cellSize: String(size), days: "7", why: "1" });
    if (build) {
      params.set("buildId", build);
    }
    const got = await getData<
      Array<{ x: number; y: number; heartbeats: number; slow: number; bounds: object }>
    >(t, `/heatmap?${params}`);
    const byCell = Object.fromEntries(
      got.map((c) => [`${c.x},${c.y}`, { heartbeats: c.heartbeats, slow: c.slow, bounds: c.bounds }]),
    );
    expect(byCell).toEqual(refBoundCells(size, build));
    if (size === 25) {
      // The bog: nine GPU-bound, two game-thread-bound; the arena: the phone's four; the attic: its
      // memory total only in device_info, so unknown on the map (the panel reads device_info).
      expect(byCell["0,0"]).toMatchObject({ slow: 11, bounds: { gpu: 9, game_thread: 2 } });
      expect(byCell["550,0"]).toMatchObject({ heartbeats: 7, slow: 4, bounds: { gpu: 4 } });
      expect(byCell["250,0"]).toMatchObject({ slow: 5, bounds: { memory: 0, unknown: 5 } });
    }
  });

  it("without why=1 the cells keep the overlays' shape", async () => {
    const got = await getData<Array<Record<string, unknown>>>(t, `/heatmap?mapId=${MAP}&cellSize=25&days=7`);
    expect(got[0]).not.toHaveProperty("bounds");
    expect(got[0]).not.toHaveProperty("slow");
  });
});

/**
 * The hitches fields of every cell of `size`, from the events: each session's median frame time on the
 * map (the lower median of its quantized frame times, over its performance-bearing events of the builds
 * drawn), a hitch over twice it, and each session's first heartbeat in a cell its first visit.
 */
function refHitchCells(size: number, build?: string) {
  const samples = mapSamples(build);
  const builds = new Set(samples.map((e) => e.buildId));
  const frames = new Map<string, number[]>();
  for (const e of events) {
    if (e.mapId === MAP && isPerf(e) && e.perf?.frameTimeMs && builds.has(e.buildId) && e.buildId !== "") {
      frames.set(e.sessionId, [
        ...(frames.get(e.sessionId) ?? []),
        bucketFloor(Math.fround(e.perf.frameTimeMs)),
      ]);
    }
  }
  const typical = new Map(
    [...frames].map(([s, vs]) => [s, [...vs].sort((a, b) => a - b)[Math.ceil(vs.length / 2) - 1] as number]),
  );
  const cells = new Map<
    string,
    { hitch_heartbeats: number; hitches: number; first_visit_heartbeats: number; first_visit_hitches: number }
  >();
  const seen = new Set<string>();
  for (const e of [...samples].sort((a, b) => a.tsUs - b.tsUs)) {
    const key = cellOf(e, size);
    const c = cells.get(key) ?? {
      hitch_heartbeats: 0,
      hitches: 0,
      first_visit_heartbeats: 0,
      first_visit_hitches: 0,
    };
    cells.set(key, c);
    const first = !seen.has(`${e.sessionId} ${key}`);
    seen.add(`${e.sessionId} ${key}`);
    const median = typical.get(e.sessionId) ?? 0;
    if (!e.perf?.frameTimeMs || median <= 0) {
      continue;
    }
    const hitch = Math.fround(e.perf.frameTimeMs) > 2 * median;
    c.hitch_heartbeats++;
    c.hitches += hitch ? 1 : 0;
    c.first_visit_heartbeats += first ? 1 : 0;
    c.first_visit_hitches += first && hitch ? 1 : 0;
  }
  return Object.fromEntries(cells);
}

describe("the heatmap's hitches mode", () => {
  it.each([
    { size: 25, build: undefined },
    { size: 10, build: undefined },
    { size: 50, build: BUILD },
  ])("each cell's hitches and first visits' hitches, as the rule gives them: %o", async ({ size, build }) => {
    const params = new URLSearchParams({ mapId: MAP, cellSize: String(size), days: "7", hitches: "1" });
    if (build) {
      params.set("buildId", build);
    }
    const got = await getData<Array<Record<string, number>>>(t, `/heatmap?${params}`);
    const byCell = Object.fromEntries(
      got.map((c) => [
        `${c.x},${c.y}`,
        {
          hitch_heartbeats: c.hitch_heartbeats,
          hitches: c.hitches,
          first_visit_heartbeats: c.first_visit_heartbeats,
          first_visit_hitches: c.first_visit_hitches,
        },
      ]),
    );
    expect(byCell).toEqual(refHitchCells(size, build));
    if (size === 25) {
      // The cave: each of its three sessions stalls on entering it, and only then.
      expect(byCell["150,0"]).toEqual({
        hitch_heartbeats: 15,
        hitches: 3,
        first_visit_heartbeats: 3,
        first_visit_hitches: 3,
      });
    }
  });

  it("without hitches=1, and in events mode, the cells carry no hitches fields", async () => {
    const plain = await getData<Array<Record<string, unknown>>>(
      t,
      `/heatmap?mapId=${MAP}&cellSize=25&days=7`,
    );
    expect(plain[0]).not.toHaveProperty("hitches");
    const named = await getData<Array<Record<string, unknown>>>(
      t,
      `/heatmap?mapId=${MAP}&cellSize=25&days=7&hitches=1&eventName=perf_heartbeat`,
    );
    expect(named.length).toBeGreaterThan(0);
    expect(named[0]).not.toHaveProperty("hitch_heartbeats");
  });
});
