import { beforeAll, describe, expect, it } from "vitest";
import { REGRESSION_GROUPINGS } from "../../workers/api/analytics/regressions.js";
import {
  SETTLE_MS,
  storeSessionMedianDay,
  usableStoredDays,
} from "../../workers/api/analytics/session-medians.js";
import { addDays, DAY_MS, dateOf } from "../../workers/api/window.js";
import type { GenEvent } from "../support/analytics-dataset.js";
import { clocked, getData, ingestAll } from "../support/analytics-ingest.js";
import { testClickHouse } from "../support/events.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import { insertMap } from "../support/records.js";
import { buildPairEvents, type GroupSpec, HOTSPOT } from "../support/regressions-dataset.js";
import { type RegressionParams, refRegressions } from "../support/regressions-reference.js";

// builds/regressions end to end: events through ingest, the session rollups, the endpoint, against the
// reference (test/support/regressions-reference.ts) and against the truth the data was drawn with.

type Answer = ReturnType<typeof refRegressions>;

const BASE = "2.0.0";
const CAND = "2.1.0";

const groups: GroupSpec[] = [
  // A real +12 % shift.
  {
    gpu: "RTX 3060",
    platform: "windows",
    sessions: 30,
    frameTimeMs: 16,
    shift: 1.12,
    sessionSd: 0.06,
    sampleSd: 0.1,
    samplesPerSession: 8,
  },
  // Noisy, no shift.
  {
    gpu: "RTX 4070",
    platform: "windows",
    sessions: 30,
    frameTimeMs: 10,
    shift: 1,
    sessionSd: 0.25,
    sampleSd: 0.2,
    samplesPerSession: 8,
  },
  // Too few sessions to judge, however large the change.
  {
    gpu: "Adreno 740",
    platform: "android",
    sessions: 5,
    frameTimeMs: 30,
    shift: 1.3,
    sessionSd: 0.05,
    sampleSd: 0.1,
    samplesPerSession: 8,
  },
  // No device context: the null group.
  {
    platform: "ps5",
    sessions: 24,
    frameTimeMs: 20,
    shift: 1,
    sessionSd: 0.1,
    sampleSd: 0.1,
    samplesPerSession: 8,
  },
  // An engine SDK's sessions: their GPU only in a device_info sent after every sample.
  {
    deviceInfoGpu: "Arc A770",
    platform: "windows",
    sessions: 25,
    frameTimeMs: 14,
    shift: 1,
    sessionSd: 0.1,
    sampleSd: 0.1,
    samplesPerSession: 8,
  },
];

let t: Tenant & { now: number };
let events: GenEvent[];
let arenaUuid: string;
const nowMs = Date.now();

beforeAll(async () => {
  t = clocked(await seedTenant("pro", "Regressions Studio"), nowMs) as Tenant & { now: number };
  const startUs = (nowMs - 6 * 3_600_000) * 1000;
  events = [
    // An older build: the default baseline is the candidate's latest predecessor, not this one.
    ...buildPairEvents(1, {
      baseline: "1.9.0",
      candidate: "1.9.1",
      groups: [{ ...(groups[3] as GroupSpec), sessions: 3 }],
      hotspotShift: 1,
      startUs: startUs - 4 * 3_600_000_000,
    }),
    ...buildPairEvents(45, { baseline: BASE, candidate: CAND, groups, hotspotShift: 1, startUs }),
    // The map's pair: no build-wide change, but every sample in one cell is 30 % slower.
    ...buildPairEvents(7, {
      baseline: "3.0.0",
      candidate: "3.1.0",
      groups: [
        { ...(groups[1] as GroupSpec), frameTimeMs: 16, sessionSd: 0.1, sampleSd: 0.1, sessions: 25 },
        { ...(groups[3] as GroupSpec), frameTimeMs: 16, sessions: 25 },
      ],
      hotspotShift: 1.3,
      startUs: startUs + 2 * 3_600_000_000,
    }),
    // Cells of 200 sessions a build (each session has a sample in each cell): enough that only the
    // central ranks of each cell's medians leave ClickHouse, the hotspot 8 % slower.
    ...buildPairEvents(11, {
      baseline: "6.0.0",
      candidate: "6.1.0",
      groups: [
        {
          platform: "ps5",
          sessions: 200,
          frameTimeMs: 16,
          shift: 1,
          sessionSd: 0.15,
          sampleSd: 0.1,
          samplesPerSession: 4,
        },
      ],
      hotspotShift: 1.08,
      startUs: startUs + 3 * 3_600_000_000,
    }),
  ];
  await ingestAll(t, events);
  arenaUuid = await insertMap(t.projectId, "arena", {
    name: "Arena",
    imageWidth: 2,
    imageHeight: 2,
    worldMinX: 0,
    worldMinY: 0,
    worldMaxX: 200,
    worldMaxY: 200,
  });
}, 180_000);

const query = (q: Partial<RegressionParams> & Record<string, unknown>) =>
  `/builds/regressions?${new URLSearchParams(
    Object.entries(q).flatMap(([k, v]) => (v === undefined ? [] : [[k, v === true ? "1" : String(v)]])),
  )}`;

const DEFAULTS: RegressionParams = {
  candidate: CAND,
  baseline: BASE,
  metric: "frame_time",
  by: "platform",
  days: 30,
  minEffectPct: 3,
  minSessions: 20,
};

describe("builds/regressions", () => {
  it("by gpu: the shifted group is regressed, the noisy one no_change, 5 sessions insufficient_data, no device null", async () => {
    const q = { ...DEFAULTS, by: "gpu" as const };
    const data = await getData<Answer>(t, query(q));
    expect(data).toEqual(refRegressions(events, q, nowMs));
    const verdicts = Object.fromEntries(data.groups.map((g) => [String(g.key), g.verdict]));
    expect(verdicts).toEqual({
      "RTX 3060": "regressed",
      "RTX 4070": "no_change",
      "Adreno 740": "insufficient_data",
      // Every sample of these sessions came before their device_info.
      "Arc A770": "no_change",
      null: "no_change",
    });
    // Worst first, and the regression's size where it was drawn.
    expect(data.groups[0]?.key).toBe("RTX 3060");
    expect(data.groups.at(-1)?.key).toBe("Adreno 740");
    const shifted = data.groups[0];
    expect(shifted?.diffPct).toBeGreaterThan(7);
    expect(shifted?.diffPct).toBeLessThan(17);
    expect(shifted?.ci95?.[0]).toBeGreaterThan(0);
    expect(shifted?.baseline.sessions).toBe(30);
    expect(data.groups.at(-1)).toMatchObject({
      baseline: { sessions: 5 },
      candidate: { sessions: 5 },
      ci95: null,
    });
    expect(data.overall.baseline.sessions).toBe(114);
    expect(data.groups.find((g) => g.key === "Arc A770")?.baseline.sessions).toBe(25);
    expect(data.cells).toEqual([]);
  });

  it.each([
    { by: "platform" as const },
    { by: "gpu_tier" as const },
    { by: "gpu" as const, metric: "fps" as const },
    { by: "platform" as const, metric: "memory" as const },
    { by: "gpu" as const, minEffectPct: 0, minSessions: 5 },
    { by: "resolution" as const, days: 7 },
    // Each side's sessions by verdict and frame causes, asked for.
    { by: "platform" as const, sessionVerdicts: true },
    { by: "gpu_tier" as const, sessionVerdicts: true },
  ])("agrees with the reference: %o", async (over) => {
    const q = { ...DEFAULTS, ...over };
    expect(await getData<Answer>(t, query(q))).toEqual(refRegressions(events, q, nowMs));
  });

  it("gpu_tier: tiers learned from the baseline's frame times; the rare GPU is unknown", async () => {
    const data = await getData<Answer>(t, query({ ...DEFAULTS, by: "gpu_tier" }));
    // RTX 4070 (10 ms) is faster than RTX 3060 (16 ms); Adreno's 5 sessions are too few to place.
    // Arc A770 (14 ms, known from device_info only) sits between them.
    expect(Object.fromEntries(data.groups.map((g) => [String(g.key), g.verdict]))).toEqual({
      slow: "regressed",
      mid: "no_change",
      fast: "no_change",
      unknown: "insufficient_data",
      null: "no_change",
    });
  });

  it("fps: lower is worse, so the shifted GPU is regressed with a negative change", async () => {
    const data = await getData<Answer>(t, query({ ...DEFAULTS, by: "gpu", metric: "fps" }));
    expect(data.groups[0]).toMatchObject({ key: "RTX 3060", verdict: "regressed" });
    expect(data.groups[0]?.diffPct).toBeLessThan(-6);
    expect(data.groups[0]?.ci95?.[1]).toBeLessThan(0);
  });

  it("with mapId (user id or the map's UUID): the hotspot cell is regressed, first", async () => {
    const q = { ...DEFAULTS, candidate: "3.1.0", baseline: "3.0.0", mapId: "arena" };
    const data = await getData<Answer>(t, query(q));
    expect(data).toEqual(refRegressions(events, q, nowMs));
    expect(data.cells[0]).toMatchObject({ x: HOTSPOT.x, y: HOTSPOT.y, cellSize: 25, verdict: "regressed" });
    expect(data.cells[0]?.baseline.sessions).toBe(50);
    // The other cells did not change: only significant cells are answered.
    expect(data.cells).toHaveLength(1);
    expect(await getData<Answer>(t, query({ ...q, mapId: arenaUuid }))).toEqual(data);
    // Another map: nothing.
    const none = await getData<Answer>(t, query({ ...q, mapId: "harbor" }));
    expect(none.overall).toMatchObject({
      verdict: "insufficient_data",
      baseline: { sessions: 0, median: null },
    });
    expect(none.cells).toEqual([]);
  });

  it.each([{ metric: "frame_time" as const }, { metric: "fps" as const, minEffectPct: 0 }])(
    "with mapId, cells of 200 sessions a build: the central ranks judge as every value does (%o)",
    async (over) => {
      const q = { ...DEFAULTS, candidate: "6.1.0", baseline: "6.0.0", mapId: "arena", ...over };
      const data = await getData<Answer>(t, query(q));
      expect(data).toEqual(refRegressions(events, q, nowMs));
      expect(data.cells[0]).toMatchObject({ x: HOTSPOT.x, y: HOTSPOT.y, verdict: "regressed" });
      expect(data.cells[0]?.baseline.sessions).toBe(200);
    },
  );

  it("defaults: the baseline is the build first seen before the candidate; frame_time by platform, 30 days", async () => {
    const data = await getData<Answer>(t, `/builds/regressions?candidate=${CAND}`);
    expect(data).toEqual(refRegressions(events, DEFAULTS, nowMs));
    expect(data.baseline).toBe(BASE);
  });

  it("is deterministic: the same data gives the same answer", async () => {
    const q = query({ ...DEFAULTS, by: "gpu", mapId: "arena" });
    expect(await getData(t, q)).toEqual(await getData(t, q));
  });

  it("a candidate with no predecessor and no baseline named answers 422 naming query.baseline", async () => {
    const res = await api(`/v1/projects/${t.projectId}/builds/regressions?candidate=1.9.0`, {
      key: t.keys.read.key,
      now: nowMs,
    });
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect((await problemOf(res)).field).toBe("query.baseline");
  });

  it.each([
    ["baseline=2.0.0", "query.candidate"],
    ["candidate=2.1.0&baseline=2.1.0", "query.candidate"],
    ["candidate=", "query.candidate"],
    ["candidate=2.1.0&metric=cpu_time", "query.metric"],
    ["candidate=2.1.0&by=cpu", "query.by"],
    ["candidate=2.1.0&days=3", "query.days"],
    ["candidate=2.1.0&minEffectPct=abc", "query.minEffectPct"],
    ["candidate=2.1.0&minEffectPct=101", "query.minEffectPct"],
    ["candidate=2.1.0&minEffectPct=-1", "query.minEffectPct"],
    ["candidate=2.1.0&minSessions=1", "query.minSessions"],
    ["candidate=2.1.0&minSessions=2.5", "query.minSessions"],
    [`candidate=2.1.0&mapId=${"m".repeat(256)}`, "query.mapId"],
  ])("%s answers 400 naming %s", async (q, field) => {
    const res = await api(`/v1/projects/${t.projectId}/builds/regressions?${q}`, { key: t.keys.read.key });
    expect(res.status).toBe(400);
    const problem = await problemOf(res);
    expect(problem.field).toBe(field);
    expect(problem.detail.startsWith(`${field}:`)).toBe(true);
  });

  it("is in the OpenAPI document with exactly the issue's parameters", async () => {
    const doc = (await (await api("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { operationId?: string; parameters?: Array<{ name: string }> }>>;
    };
    const op = doc.paths["/v1/projects/{id}/builds/regressions"]?.get;
    expect(op?.operationId).toBe("buildRegressions");
    expect(op?.parameters?.map((p) => p.name).sort()).toEqual(
      [
        "baseline",
        "by",
        "candidate",
        "days",
        "id",
        "mapId",
        "metric",
        "minEffectPct",
        "minSessions",
        "sessionVerdicts",
      ].sort(),
    );
  });
});

describe("builds/regressions A/A", () => {
  it("30 build pairs drawn from one distribution: ≤ 5 % of the verdicts regressed, each as the reference", async () => {
    const aa = await seedTenant("pro", "A/A Studio");
    const pairs = 30;
    const startUs = (nowMs - 5 * 3_600_000) * 1000;
    const noisy = { shift: 1, sessionSd: 0.15, sampleSd: 0.2, samplesPerSession: 5, sessions: 22 };
    const aaEvents = Array.from({ length: pairs }, (_, i) =>
      buildPairEvents(1000 + i, {
        baseline: `aa${i}-a`,
        candidate: `aa${i}-b`,
        groups: [
          { ...noisy, platform: "windows", frameTimeMs: 16 },
          { ...noisy, platform: "ps5", frameTimeMs: 12 },
        ],
        hotspotShift: 1,
        startUs: startUs + i * 2_000_000,
      }),
    ).flat();
    await ingestAll(aa, aaEvents);
    let verdicts = 0;
    let regressed = 0;
    for (let i = 0; i < pairs; i++) {
      // minEffectPct 0: the interval alone decides, the strictest test of the statistics.
      const q = { ...DEFAULTS, candidate: `aa${i}-b`, baseline: `aa${i}-a`, minEffectPct: 0 };
      const data = await getData<Answer>(clocked(aa, nowMs), query(q));
      expect(data).toEqual(refRegressions(aaEvents, q, nowMs));
      for (const g of [data.overall, ...data.groups]) {
        verdicts++;
        regressed += g.verdict === "regressed" ? 1 : 0;
      }
    }
    expect(verdicts).toBe(pairs * 3);
    console.log(`A/A through the endpoint: ${regressed} of ${verdicts} verdicts regressed`);
    expect(regressed / verdicts).toBeLessThanOrEqual(0.05);
  }, 240_000);
});

describe("builds/regressions from stored closed days", () => {
  it("answers every grouping, metric and map exactly as the reference before and after the job stored the days", async () => {
    // Noon today: the closed day (five days back) and today do not move during the run.
    const now = Math.floor(nowMs / DAY_MS) * DAY_MS + 12 * 3_600_000;
    const st = clocked(await seedTenant("pro", "Stored Regressions Studio"), now);
    const closedDay = dateOf(now - 5 * DAY_MS);
    const pair = { baseline: "5.0.0", candidate: "5.1.0", hotspotShift: 1.3 };
    const stEvents = [
      // Every group on the closed day: their sessions are single-day ones (the stored histograms)...
      ...buildPairEvents(71, { ...pair, groups, startUs: (Date.parse(closedDay) + 8 * 3_600_000) * 1000 }),
      // ...but for the first group's, which come back today (the same session ids): those are carried
      // rows, merged with today's live rows.
      ...buildPairEvents(72, {
        ...pair,
        groups: [{ ...(groups[0] as GroupSpec), sessions: 10 }],
        startUs: (now - 3 * 3_600_000) * 1000,
      }),
    ];
    await ingestAll(st, stEvents);
    const ch = testClickHouse();
    // Frame time by every grouping, with and without the map; fps (higher is better) by GPU tier, whose
    // tiers come from the frame-time histograms besides the judged metric's.
    const reads = [
      ...REGRESSION_GROUPINGS.flatMap((by) =>
        [undefined, "arena"].map((mapId) => ({ ...DEFAULTS, ...pair, days: 7, by, mapId })),
      ),
      { ...DEFAULTS, ...pair, days: 7, by: "gpu_tier" as const, metric: "fps" as const },
    ];
    const check = async () => {
      for (const q of reads) {
        expect(await getData<Answer>(st, query(q)), JSON.stringify(q)).toEqual(
          refRegressions(stEvents, q, now),
        );
      }
    };
    await check();
    // The job: the first run records the day's stamp, the settled one stores it.
    expect(await storeSessionMedianDay(ch, st.projectId, closedDay, now)).toBe("seen");
    expect(await storeSessionMedianDay(ch, st.projectId, closedDay, now + SETTLE_MS)).toBe("stored");
    const used = await usableStoredDays(ch, st.projectId, addDays(dateOf(now), -6), addDays(dateOf(now), 1));
    expect(used.map((d) => d.day)).toEqual([closedDay]);
    // Every device key has its histogram (the engine SDK's sessions' GPU from their device_info).
    const rs = await ch.query({
      query: `SELECT by_key, groupUniqArray(key_value) AS keys FROM telemetry.session_median_hist
        WHERE project_id = {p:UUID} AND by_map = 0 AND metric = 1 GROUP BY by_key ORDER BY by_key`,
      query_params: { p: st.projectId },
      format: "JSONEachRow",
    });
    const keys = Object.fromEntries(
      (await rs.json<{ by_key: number; keys: string[] }>()).map((r) => [r.by_key, [...r.keys].sort()]),
    );
    expect(keys[2]).toEqual(["", "Adreno 740", "Arc A770", "RTX 3060", "RTX 4070"]);
    expect(keys[3]).toEqual(["", "Desktop PC"]);
    await check();
  }, 240_000);
});
