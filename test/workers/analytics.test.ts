import { beforeAll, describe, expect, it } from "vitest";
import {
  type Dataset,
  type GenEvent,
  generateDataset,
  SOAK_BUILDS,
  scriptedFunnels,
} from "../support/analytics-dataset.js";
import { clocked, getData, ingestAll } from "../support/analytics-ingest.js";
import {
  type HeatmapParams,
  type InsightParams,
  refBuilds,
  refDashboard,
  refFunnel,
  refHeatmap,
  refInsights,
  refRetention,
} from "../support/analytics-reference.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import { insertMap } from "../support/records.js";
import type { Ok } from "../support/schema.js";

/** The file's clock: the data is generated around this instant and every read and reference is at it. */
const NOW = Date.now();

let t: Tenant;
let ds: Dataset;

beforeAll(async () => {
  t = clocked(await seedTenant("enterprise", "Analytics Studio"), NOW);
  ds = generateDataset(20261121, NOW);
  await ingestAll(t, ds.events);
}, 240_000);

type Cell = Record<string, number | null>;

/** Float32 metrics come back in their shortest spelling: equal to the reference within float32 precision. */
function expectCells(actual: Cell[], expected: Cell[]) {
  const at = (c: Cell) => [c.x, c.y, c.z, c.weight, c.event_count];
  expect(actual.map(at)).toEqual(expected.map(at));
  // No field more or fewer than the reference's (z only with includeZ).
  expect(actual.map((c) => Object.keys(c).sort())).toEqual(expected.map((c) => Object.keys(c).sort()));
  actual.forEach((cell, i) => {
    for (const [k, want] of Object.entries(expected[i] as Cell)) {
      const got = cell[k];
      if (want === null || got === null) {
        expect([k, got]).toEqual([k, want]);
      } else {
        expect(Math.abs((got as number) - want), `${k} of cell ${cell.x},${cell.y}`).toBeLessThanOrEqual(
          Math.abs(want) * 1e-6,
        );
      }
    }
  });
}

describe("the generated dataset", () => {
  it("covers the edge cases it is meant to", () => {
    const anonymous = ds.events.filter((e) => e.playerId === "");
    expect(anonymous.length).toBeGreaterThan(50);
    expect(ds.events.some((e) => e.pos && (e.pos.x < 0 || e.pos.y < 0))).toBe(true);
    // The oldest day of a 30-day window holds events (unless the run began in the day's last hour).
    const oldest = new Date(ds.anchorMs - 29 * 86_400_000).toISOString().slice(0, 10);
    if (ds.anchorMs % 86_400_000 < 23 * 3_600_000) {
      expect(ds.events.some((e) => new Date(e.tsUs / 1000).toISOString().startsWith(oldest))).toBe(true);
    }
    expect(ds.events.length).toBeGreaterThan(2000);
    // Thread times alone (not performance-bearing), and memory of whole and fractional megabytes.
    expect(ds.events.some((e) => e.perf?.gameThreadMs !== undefined && e.perf.fps === undefined)).toBe(true);
    expect(ds.events.some((e) => (e.perf?.memoryUsedBytes ?? 0) % 1_048_576 > 0)).toBe(true);
    expect(ds.events.some((e) => (e.perf?.memoryUsedBytes ?? 1) % 1_048_576 === 0)).toBe(true);
  });
});

describe("dashboard", () => {
  it.each([7, 30, 90])("days=%i matches the reference", async (days) => {
    const data = await getData<Ok<"/v1/projects/{id}/dashboard">>(t, `/dashboard?days=${days}`);
    expect(data).toEqual(refDashboard(ds.events, days, data.kpis.fetchedAt));
  });

  it("defaults to 30 days", async () => {
    const data = await getData<Ok<"/v1/projects/{id}/dashboard">>(t, "/dashboard");
    expect(data.dailyActiveUsers).toHaveLength(30);
  });
});

/** Every field the Unity, UE5 and Godot overlays read, and how strictly (their Editor/*Logic parsers). */
const OVERLAY_NUMBERS = ["x", "y", "weight", "event_count", "avg_fps", "avg_frame_time", "avg_memory"];
const OVERLAY_NULLABLE = ["avg_gpu_time", "avg_mem_vram"];
/** The fields only tails=1 computes. */
const TAILS = ["p05_fps", "p95_frame_time", "max_memory", "p95_gpu_time", "p95_mem_vram"];

function parsesInOverlay(cell: Cell, includeZ: boolean) {
  for (const k of [...OVERLAY_NUMBERS, ...(includeZ ? ["z"] : [])]) {
    expect(Number.isFinite(cell[k]), `${k} of ${JSON.stringify(cell)}`).toBe(true);
  }
  for (const k of OVERLAY_NULLABLE) {
    expect(cell[k] === null || Number.isFinite(cell[k]), k).toBe(true);
  }
}

describe("heatmap", () => {
  const perf: HeatmapParams[] = [
    { mapId: "dust", cellSize: 25, days: 7 },
    { mapId: "dust", cellSize: 5, days: 30 },
    { mapId: "harbor", cellSize: 50, days: 14 },
    { mapId: "harbor", cellSize: 10, days: 1 },
    { mapId: "dust", cellSize: 10, days: 30, includeZ: true },
    { mapId: "harbor", cellSize: 25, days: 7, includeZ: true },
  ];
  it.each(perf)("performance mode $mapId cellSize=$cellSize days=$days includeZ=$includeZ", async (q) => {
    const z = q.includeZ ? "&includeZ=true" : "";
    const data = await getData<Cell[]>(
      t,
      `/heatmap?mapId=${q.mapId}&cellSize=${q.cellSize}&days=${q.days}${z}`,
    );
    // The default answer: the reference's cells without the tail fields (expectCells holds the keys).
    expectCells(data, refHeatmap(ds.events, q, NOW));
    for (const cell of data) {
      parsesInOverlay(cell, q.includeZ === true);
      expect(Object.keys(cell).filter((k) => TAILS.includes(k))).toEqual([]);
    }
  });

  it.each(perf)("tails=1 $mapId cellSize=$cellSize days=$days includeZ=$includeZ", async (q) => {
    const z = q.includeZ ? "&includeZ=true" : "";
    const data = await getData<Cell[]>(
      t,
      `/heatmap?mapId=${q.mapId}&cellSize=${q.cellSize}&days=${q.days}${z}&tails=1`,
    );
    expectCells(data, refHeatmap(ds.events, { ...q, tails: true }, NOW));
    expect(data.some((c) => TAILS.every((k) => c[k] !== null))).toBe(true);
    for (const cell of data) {
      parsesInOverlay(cell, q.includeZ === true);
    }
    // The same cells and means as without tails: the tails add fields, they change none.
    const plain = await getData<Cell[]>(
      t,
      `/heatmap?mapId=${q.mapId}&cellSize=${q.cellSize}&days=${q.days}${z}&tails=0`,
    );
    expect(
      data.map((c) => Object.fromEntries(Object.entries(c).filter(([k]) => !TAILS.includes(k)))),
    ).toEqual(plain);
  });

  it("places negative coordinates in cells with negative origins; numbers where the overlays need them", async () => {
    const data = await getData<Cell[]>(t, "/heatmap?mapId=dust&cellSize=25&days=30&tails=1");
    expect(data.some((c) => (c.x as number) < 0 && (c.y as number) < 0)).toBe(true);
    // The fps-only region: frame time, memory, GPU time and VRAM have no sample there.
    const fpsOnly = data.filter((c) => (c.x as number) >= 200);
    expect(fpsOnly.length).toBeGreaterThan(0);
    for (const c of fpsOnly) {
      expect(c).toMatchObject({ avg_frame_time: 0, avg_memory: 0, avg_gpu_time: null, avg_mem_vram: null });
      expect(c).toMatchObject({ p95_frame_time: null, max_memory: null, p95_gpu_time: null });
      expect(c.avg_fps).toBeGreaterThan(0);
      expect(c.weight).toBe(c.event_count);
    }
    // VRAM: megabytes, from metrics["mem.vram"], wherever GPU time was sampled.
    expect(data.some((c) => c.avg_mem_vram !== null && !Number.isInteger(c.avg_mem_vram))).toBe(true);
    expectCells(data, refHeatmap(ds.events, { mapId: "dust", cellSize: 25, days: 30, tails: true }, NOW));
  });

  it("3-D cells: the same events as the 2-D ones, split by height", async () => {
    const flat = await getData<Cell[]>(t, "/heatmap?mapId=dust&cellSize=50&days=30");
    const cubes = await getData<Cell[]>(t, "/heatmap?mapId=dust&cellSize=50&days=30&includeZ=true");
    expect(cubes.length).toBeGreaterThan(flat.length);
    expect(cubes.some((c) => (c.z as number) < 0) && cubes.some((c) => (c.z as number) > 0)).toBe(true);
    const total = (cs: Cell[]) => cs.reduce((n, c) => n + (c.event_count as number), 0);
    expect(total(cubes)).toBe(total(flat));
    expect(flat.every((c) => !("z" in c))).toBe(true);
  });

  it.each([
    { mapId: "dust", cellSize: 10, days: 30, eventName: "level_up" },
    { mapId: "harbor", cellSize: 25, days: 7, eventName: "frame_sample" },
    { mapId: "dust", cellSize: 25, days: 30, eventName: "frame_sample", includeZ: true },
    { mapId: "dust", cellSize: 50, days: 14, eventName: "no_such_event" },
    { mapId: "harbor", cellSize: 10, days: 30, eventName: "frame_sample", tails: true },
  ])("events mode $eventName on $mapId includeZ=$includeZ tails=$tails", async (q) => {
    const z = `${q.includeZ ? "&includeZ=true" : ""}${q.tails ? "&tails=1" : ""}`;
    const data = await getData<Cell[]>(
      t,
      `/heatmap?mapId=${q.mapId}&cellSize=${q.cellSize}&days=${q.days}&eventName=${q.eventName}${z}`,
    );
    expectCells(data, refHeatmap(ds.events, q, NOW));
    for (const cell of data) {
      parsesInOverlay(cell, q.includeZ === true);
    }
    if (q.eventName === "level_up") {
      // Events without performance fields: the overlays' numbers are 0, the nullable ones null.
      expect(data.length).toBeGreaterThan(0);
      expect(data.every((c) => c.avg_fps === 0 && c.avg_memory === 0 && c.avg_gpu_time === null)).toBe(true);
    }
    if (q.eventName === "frame_sample") {
      expect(data.some((c) => (c.avg_fps as number) > 0 && c.avg_mem_vram !== null)).toBe(true);
    }
  });

  it("mapId may be the internal map UUID of the project's map", async () => {
    const mapUuid = await insertMap(t.projectId, "dust", {
      name: "Dust",
      imageWidth: 2,
      imageHeight: 2,
      worldMinX: -200,
      worldMinY: -200,
      worldMaxX: 300,
      worldMaxY: 200,
    });
    const byUserId = await getData<Cell[]>(t, "/heatmap?mapId=dust&cellSize=25&days=30&includeZ=true");
    expect(byUserId.length).toBeGreaterThan(0);
    expect(await getData(t, `/heatmap?mapId=${mapUuid}&cellSize=25&days=30&includeZ=true`)).toEqual(byUserId);
    // Another project's map UUID is not resolved: it is taken as a user map id nobody played.
    const sibling = { ...t, projectId: t.siblingProjectId };
    expect(await getData(sibling, `/heatmap?mapId=${mapUuid}`, { token: t.token })).toEqual([]);
  });

  it.each([
    { mapId: "dust", cellSize: 25, days: 30, buildId: "1.1.0" },
    { mapId: "dust", cellSize: 25, days: 30, platform: "ps5" },
    { mapId: "dust", cellSize: 10, days: 30, buildId: "1.0.0", platform: "windows" },
    { mapId: "dust", cellSize: 25, days: 30, buildId: "1.2.0", eventName: "frame_sample" },
    { mapId: "dust", cellSize: 50, days: 30, buildId: "1.1.0", tails: true },
  ])("one build or platform: buildId=$buildId platform=$platform tails=$tails", async (q) => {
    const params = new URLSearchParams({
      mapId: q.mapId,
      cellSize: String(q.cellSize),
      days: String(q.days),
      ...(q.tails ? { tails: "1" } : {}),
    });
    for (const k of ["buildId", "platform", "eventName"] as const) {
      if (q[k] !== undefined) {
        params.set(k, q[k] as string);
      }
    }
    const data = await getData<Cell[]>(t, `/heatmap?${params}`);
    expect(data.length).toBeGreaterThan(0);
    expectCells(data, refHeatmap(ds.events, q, NOW));
    // Fewer events than the unfiltered map: the filter narrowed, it did not just pass through.
    const all = await getData<Cell[]>(t, `/heatmap?mapId=${q.mapId}&cellSize=${q.cellSize}&days=30`);
    const total = (cs: Cell[]) => cs.reduce((n, c) => n + (c.event_count as number), 0);
    expect(total(data)).toBeLessThan(total(all));
  });

  it("a map nobody played answers no cells", async () => {
    expect(await getData(t, "/heatmap?mapId=maps/unknown")).toEqual([]);
  });
});

describe("retention", () => {
  it.each([7, 30, 90])("days=%i matches the reference", async (days) => {
    const data = await getData<Ok<"/v1/projects/{id}/retention">>(t, `/retention?days=${days}`);
    expect(data).toEqual(refRetention(ds.events, days, NOW));
  });

  it("has empty cohorts and cohorts whose day 30 has not ended", async () => {
    const data = await getData<Ok<"/v1/projects/{id}/retention">>(t, "/retention?days=90");
    expect(data).toHaveLength(90);
    // Cohorts of the last 30 days: day 30 has not ended, null even where the cohort is empty.
    expect(data.slice(-30).every((c) => c.day30 === null)).toBe(true);
    expect(data.slice(-30).some((c) => c.cohort_size === 0)).toBe(true);
    // Older, empty cohorts whose day 30 has ended: 0.
    expect(data[0]).toMatchObject({ cohort_size: 0, day1: 0, day30: 0 });
    expect(data.some((c) => c.cohort_size > 0 && (c.day1 ?? 0) > 0)).toBe(true);
  });
});

describe("retention and funnels with late events and day edges, on a project of their own", () => {
  let p: Tenant;
  const DAY_US = 86_400_000_000;
  const today = Math.floor(NOW / 86_400_000) * DAY_US;
  // Day d before today, plus an offset in microseconds.
  const at = (d: number, us = 0) => today - d * DAY_US + us;
  const ev = (playerId: string, eventName: string, tsUs: number, sessionId = `s-${playerId}`): GenEvent => ({
    tsUs,
    eventName,
    sessionId,
    playerId,
    buildId: "1.0.0",
    mapId: "dust",
    platform: "windows",
  });
  // First batches: a player seen from day 5 ago on, the next midnight exactly; a funnel whose first step
  // is still missing; a player whose first event is the last microsecond of a day, and whose day 1 and
  // day 7 begin at midnight; the window's oldest cohort returning on its day 7 (the ingest takes 30 days);
  // an anonymous player.
  const first: GenEvent[] = [
    ev("late-a", "match_start", at(5, 12 * 3_600_000_000)),
    ev("late-a", "level_up", at(5, 12.5 * 3_600_000_000)),
    ev("late-a", "session_start", at(4)),
    ev("late-b", "level_up", at(3, 10 * 3_600_000_000)),
    ev("late-b", "match_end", at(3, 10.3 * 3_600_000_000)),
    ev("edge-c", "match_start", at(10, -1)),
    ev("edge-c", "session_start", at(9)),
    ev("edge-c", "session_start", at(3)),
    // Two hours into its day: ingest takes 30 days by the real clock, which runs on past NOW.
    ev("old-d", "session_start", at(29, 2 * 3_600_000_000)),
    ev("old-d", "session_start", at(22)),
    ev("", "match_start", at(8, 7_000_000), "anon-late"),
  ];
  // Arriving later: late-a's true first event, the last microsecond of day 6 ago (so day 5 becomes
  // their day 1), and late-b's first step, 30 minutes before the rest.
  const late: GenEvent[] = [
    ev("late-a", "session_start", at(5, -1)),
    ev("late-b", "match_start", at(3, 9.8 * 3_600_000_000)),
  ];

  beforeAll(async () => {
    p = clocked(await seedTenant("pro", "Late Events Studio"), NOW);
  }, 60_000);

  async function expectReference(sent: GenEvent[]) {
    const retention = await getData(p, "/retention?days=90");
    expect(retention).toEqual(refRetention(sent, 90, NOW));
    expect(await getData(p, "/retention?days=7")).toEqual(refRetention(sent, 7, NOW));
    const funnel = await getData(p, "/funnels?steps=match_start,level_up,match_end&window=3600&days=7");
    expect(funnel).toEqual(refFunnel(sent, ["match_start", "level_up", "match_end"], 3600, 7, NOW));
    const repeated = "/funnels?steps=session_start,match_start,session_start&window=604800&days=14";
    expect(await getData(p, repeated)).toEqual(
      refFunnel(sent, ["session_start", "match_start", "session_start"], 604800, 14, NOW),
    );
    return { retention, funnel };
  }

  it("match the reference before and after a late batch, which moves a cohort and completes a funnel", async () => {
    await ingestAll(p, first);
    const before = await expectReference(first);
    await ingestAll(p, late);
    const after = await expectReference([...first, ...late]);
    // The late events changed both answers: the checks above are not vacuous.
    expect(after.retention).not.toEqual(before.retention);
    expect(after.funnel).not.toEqual(before.funnel);
  });
});

describe("funnels", () => {
  const cases: Array<[string, number, number]> = [
    ["match_start,level_up,match_end", 3600, 30],
    ["match_start,level_up,match_end", 86400, 30],
    ["match_start,match_start,match_end", 3600, 30],
    ["match_end,level_up,match_start", 604800, 7],
    ["session_start,purchase,match_start,purchase", 21600, 14],
    ["level_up,level_up,level_up,match_end,session_start,ui_click,purchase,match_start", 604800, 90],
    ["ui_click,no_such_event", 86400, 30],
  ];
  it.each(cases)("steps=%s window=%i days=%i matches the reference", async (steps, window, days) => {
    const data = await getData(t, `/funnels?steps=${steps}&window=${window}&days=${days}`);
    expect(data).toEqual(refFunnel(ds.events, steps.split(","), window, days, NOW));
  });

  describe("edge cases, on a project holding only the scripted players", () => {
    let f: Tenant;
    const scripted: GenEvent[] = [];
    beforeAll(async () => {
      f = clocked(await seedTenant("pro", "Funnel Studio"), NOW);
      scriptedFunnels(scripted, (NOW - 2 * 86_400_000) * 1000);
      await ingestAll(f, scripted);
    }, 120_000);

    async function funnel(steps: string, window: number) {
      const data = await getData<Ok<"/v1/projects/{id}/funnels">>(
        f,
        `/funnels?steps=${steps}&window=${window}&days=7`,
      );
      expect(data).toEqual(refFunnel(scripted, steps.split(","), window, 7, NOW));
      return data;
    }

    it("counts a step exactly `window` seconds after step 1, not a microsecond later", async () => {
      // Five players started; fx-exact and fx-late reach level_up; only fx-exact's match_end is inside the hour.
      const data = await funnel("match_start,level_up,match_end", 3600);
      expect(data.map((s) => s.count)).toEqual([5, 2, 1]);
    });

    it("needs a repeated event for a repeated step name", async () => {
      // fx-repeat has two match_start events; fx-single, fx-exact, fx-late, fx-reverse one each.
      const data = await funnel("match_start,match_start,match_end", 3600);
      expect(data.map((s) => s.count)).toEqual([5, 1, 1]);
      expect(data.map((s) => s.drop_off_pct)).toEqual([0, 80, 0]);
    });

    it("steps out of order do not count", async () => {
      // fx-reverse did match_end, level_up, match_start: in that order only it goes past step 1 …
      expect((await funnel("match_end,level_up,match_start", 3600)).map((s) => s.count)).toEqual([5, 1, 1]);
      // … and asked the other way round, only match_start (fx-exact, fx-late reach further).
      const data = await funnel("match_start,level_up", 3600);
      expect(data.map((s) => s.count)).toEqual([5, 2]);
    });
  });

  it("defaults to a one-day window over 30 days", async () => {
    const data = await getData(t, "/funnels?steps=match_start,match_end");
    expect(data).toEqual(refFunnel(ds.events, ["match_start", "match_end"], 86400, 30, NOW));
  });
});

describe("insights", () => {
  // The interface spec's seven groupings, listed here so a grouping dropped from the code fails the test.
  const groupings = ["day", "week", "month", "event_name", "map_id", "platform", "build_id"] as const;
  const cases: InsightParams[] = [
    ...groupings.flatMap((groupBy) =>
      (["count", "unique_players"] as const).map((metric) => ({ metric, groupBy, days: 30, limit: 10 })),
    ),
    { metric: "count", groupBy: "day", days: 90, limit: 50 },
    { metric: "unique_players", groupBy: "week", days: 90, limit: 20 },
    { metric: "unique_players", groupBy: "month", days: 90, limit: 10 },
    { metric: "count", groupBy: "platform", days: 7, limit: 10, eventName: "frame_sample" },
    { metric: "unique_players", groupBy: "day", days: 14, limit: 10, eventName: "match_start" },
    // By a dimension, of one event name (its rows of that name) and of every event (of all names).
    { metric: "unique_players", groupBy: "map_id", days: 30, limit: 10, eventName: "frame_sample" },
    { metric: "unique_players", groupBy: "platform", days: 7, limit: 10, eventName: "match_start" },
    { metric: "count", groupBy: "build_id", days: 30, limit: 20 },
  ];
  it.each(cases)("$metric by $groupBy days=$days limit=$limit eventName=$eventName", async (q) => {
    const filter = q.eventName ? `&eventName=${q.eventName}` : "";
    const data = await getData(
      t,
      `/insights?metric=${q.metric}&groupBy=${q.groupBy}&days=${q.days}&limit=${q.limit}${filter}`,
    );
    expect(data).toEqual(refInsights(ds.events, q, NOW));
  });

  it("counts a player once in the total, not once per group", async () => {
    const data = await getData<Ok<"/v1/projects/{id}/insights">>(
      t,
      "/insights?metric=unique_players&groupBy=event_name",
    );
    expect(data.groups.reduce((s, g) => s + g.value, 0)).toBeGreaterThan(data.total);
  });
});

type Build = {
  build_id: string;
  session_count: number;
  player_count: number;
  pinned_baseline?: boolean;
  verdict?: unknown;
};

function expectBuilds(actual: Build[], expected: Build[]) {
  // The verdict fields (docs/analytics.md, "Verdicts per build"): no pin in this data, so no verdict
  // judged against a pinned baseline. Whether a build has a verdict yet is the cron's doing: any
  // scheduled() run judges every project's builds, and other test files' runs share this database
  // (build-verdicts.test.ts checks the verdicts themselves).
  for (const b of actual) {
    expect(b.pinned_baseline).toBe(false);
    if (b.verdict !== null) {
      expect(b.verdict).toMatchObject({ baseline_pinned: false, baseline_build_id: expect.any(String) });
    }
  }
  // Every field exact, the session and player counts too (bitmaps of dense numbers, docs/analytics.md
  // "The Build counts").
  const fields = ({ pinned_baseline: _p, verdict: _v, ...b }: Build) => b;
  expect(actual.map(fields)).toEqual(expected.map(fields));
}

describe("builds", () => {
  it.each([7, 30])("days=%i: newest 50 by first_seen", async (days) => {
    const data = await getData<Build[]>(t, `/builds?days=${days}&fresh=1`);
    expectBuilds(data, refBuilds(ds.events, days, NOW));
    expect(data).toHaveLength(50);
  });

  it("buildId fetches one build outside the newest 50", async () => {
    const listed = (await getData<Build[]>(t, "/builds?fresh=1")).map((b) => b.build_id);
    for (const id of ["soak-00", "1.0.0"]) {
      expect(listed).not.toContain(id);
      const data = await getData<Build[]>(t, `/builds?buildId=${id}`);
      expect(data).toHaveLength(1);
      expectBuilds(data, refBuilds(ds.events, 30, NOW, id));
    }
    expect(listed).toContain(`soak-${SOAK_BUILDS - 1}`);
    expect(await getData(t, "/builds?buildId=never-shipped")).toEqual([]);
  });
});

describe("an empty project", () => {
  it("answers zeros and empty lists, with a token", async () => {
    const empty = { ...t, projectId: t.siblingProjectId };
    const auth = { token: t.token };
    const dash = await getData<Ok<"/v1/projects/{id}/dashboard">>(empty, "/dashboard?days=7", auth);
    expect({ ...dash, kpis: { ...dash.kpis, fetchedAt: 0 } }).toEqual({
      kpis: { dau: 0, mau: 0, sessions: 0, events: 0, fetchedAt: 0 },
      dailyActiveUsers: refDashboard([], 7, NOW).dailyActiveUsers,
      topEvents: [],
    });
    expect(await getData(empty, "/heatmap?mapId=dust", auth)).toEqual([]);
    expect(await getData(empty, "/retention?days=7", auth)).toEqual(refRetention([], 7, NOW));
    expect(await getData(empty, "/funnels?steps=a,b", auth)).toEqual([
      { step: 1, event_name: "a", count: 0, pct: 0, drop_off_pct: 0 },
      { step: 2, event_name: "b", count: 0, pct: 0, drop_off_pct: 0 },
    ]);
    const insights = await getData<Ok<"/v1/projects/{id}/insights">>(
      empty,
      "/insights?metric=count&groupBy=day&days=7",
      auth,
    );
    expect(insights.groups).toHaveLength(7);
    expect(insights.groups.every((g) => g.value === 0) && insights.total === 0).toBe(true);
    expect(await getData(empty, "/insights?metric=count&groupBy=map_id", auth)).toMatchObject({ groups: [] });
    expect(await getData(empty, "/builds", auth)).toEqual([]);
  });
});

describe("bad parameters", () => {
  it.each([
    ["/dashboard?days=8", "query.days"],
    ["/retention?days=1", "query.days"],
    ["/heatmap", "query.mapId"],
    [`/heatmap?mapId=${"m".repeat(256)}`, "query.mapId"],
    ["/heatmap?mapId=dust&cellSize=20", "query.cellSize"],
    ["/heatmap?mapId=dust&days=90", "query.days"],
    ["/heatmap?mapId=dust&includeZ=yes", "query.includeZ"],
    ["/heatmap?mapId=dust&tails=true", "query.tails"],
    [`/heatmap?mapId=dust&buildId=${"b".repeat(257)}`, "query.buildId"],
    ["/heatmap?mapId=dust&platform=", "query.platform"],
    ["/funnels?steps=only_one", "query.steps"],
    ["/funnels?steps=a,b,c,d,e,f,g,h,i", "query.steps"],
    ["/funnels?steps=a,,b", "query.steps"],
    ["/funnels?steps=a,b&window=60", "query.window"],
    ["/funnels", "query.steps"],
    ["/insights?metric=sum&groupBy=day", "query.metric"],
    ["/insights?metric=count&groupBy=hour", "query.groupBy"],
    ["/insights?metric=count&groupBy=day&limit=5", "query.limit"],
    [`/builds?buildId=${"b".repeat(257)}`, "query.buildId"],
    ["/builds?buildId=", "query.buildId"],
    ["/builds?fresh=yes", "query.fresh"],
  ])("%s answers 400 naming %s", async (path, field) => {
    const res = await api(`/v1/projects/${t.projectId}${path}`, { key: t.keys.read.key });
    expect(res.status).toBe(400);
    const problem = await problemOf(res);
    expect(problem.field).toBe(field);
    expect(problem.detail.startsWith(`${field}:`)).toBe(true);
  });
});

describe("builds cache", () => {
  it("serves the cached answer within the minute; fresh=1 sees new data and refreshes it", async () => {
    const c = clocked(await seedTenant("pro", "Cache Studio"), NOW);
    const sample = (buildId: string, i: number): GenEvent => ({
      tsUs: (NOW - 3_600_000) * 1000 + i,
      eventName: "frame_sample",
      sessionId: `cache-${i}`,
      playerId: "",
      buildId,
      mapId: "dust",
      platform: "windows",
      perf: { fps: 30 },
    });
    await ingestAll(c, [sample("cache-1", 1), sample("cache-1", 2)]);
    const first = await getData<Build[]>(c, "/builds");
    expect(first.map((b) => [b.build_id, b.session_count])).toEqual([["cache-1", 2]]);

    await ingestAll(c, [sample("cache-2", 3)]);
    expect(await getData(c, "/builds")).toEqual(first);
    // Other parameters are other cache entries.
    expect((await getData<Build[]>(c, "/builds?days=7")).map((b) => b.build_id).sort()).toEqual([
      "cache-1",
      "cache-2",
    ]);
    // Another project with the very same parameters never sees this project's entry.
    expect(await getData(t, "/builds")).not.toEqual(first);

    const fresh = await getData<Build[]>(c, "/builds?fresh=1");
    expect(fresh.map((b) => b.build_id).sort()).toEqual(["cache-1", "cache-2"]);
    expect(await getData(c, "/builds")).toEqual(fresh);
  });
});
