import { beforeAll, describe, expect, it } from "vitest";
import type { GenEvent, Perf } from "../support/analytics-dataset.js";
import { clocked, getData, ingestAll } from "../support/analytics-ingest.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import { type RegressionParams, refRegressions } from "../support/regressions-reference.js";
import type { Ok } from "../support/schema.js";

// Session verdicts and the causes of slow heartbeats per build and hardware group (docs/analytics.md,
// "Session verdicts"), end to end: events through ingest and session_values, builds/regressions, against
// the reference (test/support/session-verdicts-reference.ts) and against the verdicts the sessions were
// built to have.

/** The answer as the OpenAPI document types it (each side's verdict and frame fields included). */
type Answer = Ok<"/v1/projects/{id}/builds/regressions">;

const BASE = "5.0.0";
const CAND = "5.1.0";
const MiB = 1_048_576;

let t: Tenant & { now: number };
let events: GenEvent[];
const nowMs = Date.now();
// Two hours before now: every session lies on the window's days whatever the hour.
const startUs = (nowMs - 2 * 3_600_000) * 1000;
let clock = startUs;

type Beat = { perf: Perf; metrics?: Record<string, number> };

/** One session: its heartbeats 10 s apart (and a device_info after them when `memoryTotalMb` is given). */
function session(
  id: string,
  build: string,
  platform: string,
  beats: Beat[],
  memoryTotalMb?: number,
): GenEvent[] {
  const out: GenEvent[] = beats.map((b, k) => ({
    tsUs: clock + k * 10_000_000,
    eventName: "perf_heartbeat",
    sessionId: id,
    playerId: `p-${id}`,
    buildId: build,
    mapId: "arena",
    platform,
    perf: b.perf,
    ...(b.metrics ? { metrics: b.metrics } : {}),
  }));
  if (memoryTotalMb !== undefined) {
    out.push({
      tsUs: clock + beats.length * 10_000_000,
      eventName: "device_info",
      sessionId: id,
      playerId: `p-${id}`,
      buildId: build,
      mapId: "",
      platform,
      attributes: { memory_total_mb: String(memoryTotalMb), gpu: "Test GPU" },
    });
  }
  clock += 3_000_000;
  return out;
}

const times = (n: number, b: Beat): Beat[] => Array.from({ length: n }, () => b);
const frame = (ms: number, over: Perf = {}): Beat => ({ perf: { frameTimeMs: ms, ...over } });

/** The zoo: one session of each kind, every verdict and bound, on the baseline only. */
function zoo(): GenEvent[] {
  const z = (name: string, beats: Beat[], total?: number) =>
    session(`zoo-${name}`, BASE, "zoo", beats, total);
  return [
    // Good: every frame within 60 Hz's 16.7 ms.
    ...z("smooth", times(12, frame(10, { gpuTimeMs: 5 }))),
    // Poor: every frame slow, the GPU taking 88 % of it.
    ...z("gpu", times(12, frame(25, { gpuTimeMs: 22 }))),
    // Poor: one frozen frame (800 ms), nothing explains it; also a hitch.
    ...z("frozen", [...times(11, frame(10)), frame(800)]),
    // Acceptable: 2 of 20 slow (10 %), both hitches (10 % > 5 %), bound by the game thread.
    ...z("hitchy", [...times(18, frame(10)), ...times(2, frame(30, { gameThreadMs: 28 }))]),
    // Poor: 12 ms frames on a 120 Hz phone (budget 8.3 ms), bound by the render thread.
    ...z(
      "phone",
      times(12, { perf: { frameTimeMs: 12, renderThreadMs: 11 }, metrics: { "display.hz": 120 } }),
    ),
    // Good: the same frames on a 60 Hz TV.
    ...z("tv", times(12, { perf: { frameTimeMs: 12, renderThreadMs: 11 }, metrics: { "display.hz": 60 } })),
    // Acceptable: 4 of 12 slow (33 %) on disk reads longer than the frame; 4 hitches.
    ...z("io", [
      ...times(8, frame(10)),
      ...times(4, { perf: { frameTimeMs: 40 }, metrics: { "io.read_time_ms": 50, "io.read_bytes": 4096 } }),
    ]),
    // Poor: slow frames with 7.5 of the device's 8 GiB in use (its device_info says so).
    ...z("memory", times(12, frame(20, { memoryUsedBytes: 7680 * MiB })), 8192),
    // Poor: the same without a memory total: unknown.
    ...z("memory-unknown", times(12, frame(20, { memoryUsedBytes: 7680 * MiB }))),
    // Not judged: three heartbeats.
    ...z("short", times(3, frame(10))),
    // Poor: fps only, 30 fps (33.3 ms frames).
    ...z("fps", times(12, { perf: { fps: 30 } })),
  ];
}

/** A group of `good` smooth and `poor` GPU-bound sessions of a build. */
function crowd(build: string, platform: string, good: number, poor: number): GenEvent[] {
  return [
    ...Array.from({ length: good }, (_, i) =>
      session(
        `${build}-${platform}-good-${i}`,
        build,
        platform,
        times(8, frame(9 + (i % 5), { gpuTimeMs: 4 })),
      ),
    ),
    ...Array.from({ length: poor }, (_, i) =>
      session(
        `${build}-${platform}-poor-${i}`,
        build,
        platform,
        times(8, frame(24 + (i % 3), { gpuTimeMs: 22 })),
      ),
    ),
  ].flat();
}

beforeAll(async () => {
  t = clocked(await seedTenant("pro", "Verdicts Studio"), nowMs) as Tenant & { now: number };
  events = [
    ...zoo(),
    // Windows: 2 of 24 sessions poor before, 14 of 24 after.
    ...crowd(BASE, "windows", 22, 2),
    ...crowd(CAND, "windows", 10, 14),
    // Android: 2 of 16 poor on both builds.
    ...crowd(BASE, "android", 14, 2),
    ...crowd(CAND, "android", 14, 2),
  ];
  await ingestAll(t, events);
}, 180_000);

const query = (q: Partial<RegressionParams> & Record<string, unknown>) =>
  `/builds/regressions?${new URLSearchParams(
    Object.entries(q).flatMap(([k, v]) => (v === undefined ? [] : [[k, v === true ? "1" : String(v)]])),
  )}`;

const DEFAULTS: RegressionParams = {
  candidate: CAND,
  baseline: BASE,
  metric: "poor_session_share",
  by: "platform",
  days: 7,
  minEffectPct: 3,
  minSessions: 10,
};

describe("session verdicts", () => {
  it("each session's verdict and each slow heartbeat's bound, as the sessions were built", async () => {
    const data = await getData<Answer>(t, query(DEFAULTS));
    const zooGroup = data.groups.find((g) => g.key === "zoo");
    expect(zooGroup?.baseline).toEqual({
      sessions: 10,
      median: 0.6,
      sessionVerdicts: { good: 2, acceptable: 2, poor: 6, unjudged: 1, poorShare: 0.6 },
      frames: {
        heartbeats: 131,
        slow: 67,
        bounds: { gpu: 12, game_thread: 2, render_thread: 12, io: 4, memory: 12, unknown: 25 },
        hitches: 7,
        // Each session from its first to its last heartbeat: 9 of 12 beats (110 s), 20 (190 s), 3 (20 s).
        minutesPlayed: 20,
        hitchesPerMinute: 0.35,
      },
    });
    // The zoo played on the baseline only: nothing to compare.
    expect(zooGroup?.verdict).toBe("insufficient_data");
    expect(zooGroup?.candidate.sessionVerdicts).toEqual({
      good: 0,
      acceptable: 0,
      poor: 0,
      unjudged: 0,
      poorShare: null,
    });
  });

  it("poor_session_share: the group whose poor sessions grew is regressed, in points, worst first", async () => {
    const data = await getData<Answer>(t, query(DEFAULTS));
    expect(data).toEqual(refRegressions(events, DEFAULTS, nowMs));
    expect(data.metric).toBe("poor_session_share");
    expect(data.groups.map((g) => [g.key, g.verdict])).toEqual([
      ["windows", "regressed"],
      ["android", "no_change"],
      ["zoo", "insufficient_data"],
    ]);
    const windows = data.groups[0];
    expect(windows?.baseline).toMatchObject({ sessions: 24, median: 0.0833 });
    expect(windows?.candidate).toMatchObject({ sessions: 24, median: 0.5833 });
    expect(windows?.diffPct).toBe(50);
    expect(windows?.ci95?.[0]).toBeGreaterThan(0);
    expect(windows?.candidate.frames?.bounds.gpu).toBe(14 * 8);
    expect(data.cells).toEqual([]);
  });

  it.each([
    { by: "gpu" as const },
    { by: "gpu_tier" as const, minSessions: 2 },
    { metric: "frame_time" as const, sessionVerdicts: true },
    { metric: "fps" as const, by: "gpu" as const, minSessions: 2, sessionVerdicts: true },
    { metric: "frame_time" as const },
    { mapId: "arena" },
    { minEffectPct: 60 },
  ])("agrees with the reference: %o", async (over) => {
    const q = { ...DEFAULTS, ...over };
    expect(await getData<Answer>(t, query(q))).toEqual(refRegressions(events, q, nowMs));
  });

  it("an unknown metric is a 400 naming query.metric", async () => {
    const res = await api(
      `/v1/projects/${t.projectId}${query({ ...DEFAULTS, metric: "poor_share" as never })}`,
      {
        key: t.keys.read.key,
      },
    );
    expect(res.status).toBe(400);
    expect((await problemOf(res)).detail).toContain("query.metric");
  });
});
