import { beforeAll, describe, expect, it } from "vitest";
import type { GenEvent, Perf } from "../support/analytics-dataset.js";
import { getData, ingestAll } from "../support/analytics-ingest.js";
import { type CompareParams, REF_COMPARE_METRICS, refCompare } from "../support/analytics-reference.js";
import { samplesOnly } from "../support/compare.js";
import { testClickHouse } from "../support/events.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import { insertMap } from "../support/records.js";
import type { OkBody } from "../support/schema.js";

const MB = 1_048_576;
const HOUR_US = 3_600_000_000;

let t: Tenant;
let events: GenEvent[];
let arenaUuid: string;

/** Events of one build, an hour apart from `startUs` on, as the SDKs send them. */
function series(
  buildId: string,
  startUs: number,
  shape: Partial<GenEvent>,
  rows: Array<{ perf?: Perf; metrics?: Record<string, number> }>,
): GenEvent[] {
  return rows.map((row, i) => ({
    tsUs: startUs + i * 1_000_000 + (buildId.length % 7),
    eventName: "frame_sample",
    sessionId: `${buildId}-s${i % 3}`,
    playerId: i % 4 === 0 ? "" : `${buildId}-p${i % 2}`,
    buildId,
    mapId: "arena",
    platform: "windows",
    ...shape,
    ...row,
  }));
}

const frames = (ms: number[]) => ms.map((frameTimeMs) => ({ perf: { frameTimeMs, fps: 60 } }));

/**
 * Two builds with known distributions, plus what each filter must leave out: another build, another
 * platform, another map, an older day, events carrying no compared metric, and io.* absent (not 0).
 */
function comparisonDataset(nowMs: number): GenEvent[] {
  // The series below reach 5 hours past `recent`: all of them must lie before now, or after 22:00 UTC
  // some would fall on tomorrow, outside every window.
  const recent = (nowMs - 6 * 3_600_000) * 1000;
  const old = (nowMs - 10 * 86_400_000) * 1000;
  const heartbeat = { eventName: "perf_heartbeat" };
  const mapLoad = { eventName: "map_load", mapId: "" };
  return [
    // Percentiles are nearest-rank (the k-th smallest, k = ceil(level · n)) of samples kept at the lower
    // bound of their bucket (8 mantissa bits: docs/analytics.md, percentiles.ts).
    // frame_time: p50 18 → 20 (+11.11 %), p95 40 → 50, all exact in their buckets.
    ...series("1.4.0", recent, {}, frames([16, 16.5, 17, 17.5, 18, 18.5, 19, 19.5, 20, 40])),
    ...series("1.5.0", recent, {}, frames([18, 18.5, 19, 19.5, 20, 21, 22, 23, 24, 50])),
    // memory (MB, whole and fractional): p50 2050 → 1950 and p95 2200 → 2010, reported at the lower
    // bound of their buckets, 8 MB wide from 2048 MB and 4 MB below: 2048 → 1948 and 2200 → 2008.
    // Lower is better: no regression.
    ...series("1.4.0", recent + HOUR_US, {}, [
      { perf: { memoryUsedBytes: 2048 * MB } },
      { perf: { memoryUsedBytes: 2200 * MB } },
      { perf: { memoryUsedBytes: 2100 * MB + MB / 2 } },
      { perf: { memoryUsedBytes: 2050 * MB } },
    ]),
    ...series("1.5.0", recent + HOUR_US, {}, [
      { perf: { memoryUsedBytes: 1900 * MB } },
      { perf: { memoryUsedBytes: 2010 * MB } },
      { perf: { memoryUsedBytes: 2000 * MB } },
      { perf: { memoryUsedBytes: 1950 * MB } },
    ]),
    // gpu_time: only the candidate has samples.
    ...series("1.5.0", recent + 2 * HOUR_US, {}, [{ perf: { gpuTimeMs: 8 } }, { perf: { gpuTimeMs: 9.5 } }]),
    // io.* and VRAM on heartbeats; a zero read is a sample. VRAM p50 640 → 768 MB (+20 %).
    ...series("1.4.0", recent + 3 * HOUR_US, heartbeat, [
      { perf: { fps: 60 }, metrics: { "io.read_bytes": 0, "io.read_time_ms": 2, "io.read_ops": 10 } },
      { perf: { fps: 60 }, metrics: { "io.read_bytes": 0, "io.read_time_ms": 2.5, "io.read_ops": 14 } },
      { perf: { fps: 60 }, metrics: { "io.read_bytes": 0, "io.read_time_ms": 1.5, "io.read_ops": 12 } },
      { perf: { fps: 60 }, metrics: { "mem.vram": 512 * MB } },
      { perf: { fps: 60 }, metrics: { "mem.vram": 640 * MB } },
      { perf: { fps: 60 }, metrics: { "mem.vram": 640 * MB } },
      // Carries none of the compared keys: neither a sample nor a counted event.
      { metrics: { "mem.heap": 100 * MB } },
    ]),
    ...series("1.5.0", recent + 3 * HOUR_US, heartbeat, [
      { perf: { fps: 60 }, metrics: { "io.read_bytes": 4096, "io.read_time_ms": 2, "io.read_ops": 9 } },
      { perf: { fps: 60 }, metrics: { "io.read_bytes": 0, "io.read_time_ms": 2.5, "io.read_ops": 13 } },
      { perf: { fps: 60 }, metrics: { "io.read_bytes": 8192, "io.read_time_ms": 1.5, "io.read_ops": 11 } },
      { perf: { fps: 60 }, metrics: { "mem.vram": 512 * MB } },
      { perf: { fps: 60 }, metrics: { "mem.vram": 768 * MB } },
      { perf: { fps: 60 }, metrics: { "mem.vram": 768 * MB } },
    ]),
    // Map loads carry no map id and no performance field: only load_time_ms.
    ...series("1.4.0", recent + 4 * HOUR_US, mapLoad, [
      { metrics: { load_time_ms: 1200 } },
      { metrics: { load_time_ms: 1500 } },
      { metrics: { load_time_ms: 1600 } },
    ]),
    ...series("1.5.0", recent + 4 * HOUR_US, mapLoad, [
      { metrics: { load_time_ms: 1100 } },
      { metrics: { load_time_ms: 1800 } },
      { metrics: { load_time_ms: 1400 } },
    ]),
    // What the filters leave out.
    ...series("1.3.0", recent, {}, frames([100, 100])),
    ...series("1.4.0", recent + 5 * HOUR_US, { platform: "ps5" }, frames([99, 99, 99])),
    ...series("1.4.0", recent + 5 * HOUR_US, { mapId: "harbor" }, frames([98, 98, 98])),
    ...series("1.4.0", old, {}, frames([97, 97, 97, 97])),
    ...series("1.5.0", recent + 5 * HOUR_US, { eventName: "ui_click" }, [{ perf: { gameThreadMs: 3 } }]),
  ];
}

beforeAll(async () => {
  t = await seedTenant("pro", "Compare Studio");
  events = comparisonDataset(Date.now());
  await ingestAll(t, events);
  arenaUuid = await insertMap(t.projectId, "arena", {
    name: "Arena",
    imageWidth: 2,
    imageHeight: 2,
    worldMinX: 0,
    worldMinY: 0,
    worldMaxX: 100,
    worldMaxY: 100,
  });
}, 180_000);

type Diff = ReturnType<typeof refCompare>["diffs"][number];
type Comparison = ReturnType<typeof refCompare>;

const path = (q: Record<string, string>) => `/builds/compare?${new URLSearchParams({ ...q, fresh: "1" })}`;

describe("builds/compare", () => {
  it("answers the nearest-rank p50 and p95, diffPct and isRegression of every metric", async () => {
    const data = await getData<Comparison>(
      t,
      path({ baseline: "1.4.0", candidate: "1.5.0", days: "7", platform: "windows", mapId: "arena" }),
    );
    const row = (m: string) => {
      const d = data.diffs.find((x) => x.metric === m) as Diff;
      return [d.baselineP50, d.candidateP50, d.diffPct, d.isRegression, d.baselineTail, d.candidateTail];
    };
    expect(data.diffs.map((d) => d.metric)).toEqual([...REF_COMPARE_METRICS]);
    expect(row("frame_time")).toEqual([18, 20, 11.11, true, 40, 50]);
    expect(row("memory")).toEqual([2048, 1948, -4.88, false, 2200, 2008]);
    expect(row("gpu_time")).toEqual([null, 8, null, false, null, 9.5]);
    // A zero baseline has no percentage, and 0 → 4096 is still a regression.
    expect(row("io.read_bytes")).toEqual([0, 4096, null, true, 0, 8192]);
    expect(row("io.read_time_ms")).toEqual([2, 2, 0, false, 2.5, 2.5]);
    expect(row("io.read_ops")).toEqual([12, 11, -8.33, false, 14, 13]);
    // Map loads carry no map id: a map-filtered comparison has no load-time sample.
    expect(row("load_time_ms")).toEqual([null, null, null, false, null, null]);
    expect(row("mem.vram")).toEqual([640, 768, 20, true, 640, 768]);
    expect(data.baseline).toMatchObject({ build_id: "1.4.0", event_count: 10 + 4 + 6 });
    expect(data.candidate).toMatchObject({ build_id: "1.5.0", event_count: 10 + 4 + 2 + 6 });
  });

  it.each<Omit<CompareParams, "baseline" | "candidate">>([
    { days: 30 },
    { days: 7 },
    { days: 30, platform: "windows" },
    { days: 7, platform: "ps5" },
    { days: 30, mapId: "arena" },
    { days: 14, mapId: "harbor", platform: "windows" },
  ])("matches the reference with %o", async (filters) => {
    const q = { baseline: "1.4.0", candidate: "1.5.0", ...filters };
    const query = Object.fromEntries(Object.entries(q).map(([k, v]) => [k, String(v)]));
    expect(samplesOnly(await getData(t, path(query)))).toEqual(refCompare(events, q, Date.now()));
  });

  it("without a map filter, map loads count: load_time_ms 1500 → 1400", async () => {
    const data = await getData<Comparison>(t, path({ baseline: "1.4.0", candidate: "1.5.0", days: "7" }));
    const load = data.diffs.find((d) => d.metric === "load_time_ms") as Diff;
    expect([load.baselineP50, load.candidateP50, load.diffPct, load.isRegression]).toEqual([
      1500,
      1400,
      -6.67,
      false,
    ]);
  });

  it("mapId may be the internal UUID of the project's map", async () => {
    const byUserId = await getData(t, path({ baseline: "1.4.0", candidate: "1.5.0", mapId: "arena" }));
    expect(await getData(t, path({ baseline: "1.4.0", candidate: "1.5.0", mapId: arenaUuid }))).toEqual(
      byUserId,
    );
  });

  it("an unknown build is a build without samples: nulls, no regression", async () => {
    const data = await getData<Comparison>(t, path({ baseline: "1.4.0", candidate: "9.9.9" }));
    expect(data.candidate).toEqual({
      build_id: "9.9.9",
      event_count: 0,
      session_count: 0,
      player_count: 0,
      first_seen: null,
      last_seen: null,
    });
    expect(data.diffs.every((d) => d.candidateP50 === null && d.diffPct === null && !d.isRegression)).toBe(
      true,
    );
    expect(samplesOnly(data)).toEqual(
      refCompare(events, { baseline: "1.4.0", candidate: "9.9.9", days: 30 }, Date.now()),
    );
    // Nothing to judge: the session-level verdict says so instead of guessing.
    expect(
      data.diffs
        .filter((d) => ["frame_time", "memory", "gpu_time"].includes(d.metric))
        .map((d) => (d as { verdict?: string }).verdict),
    ).toEqual(["insufficient_data", "insufficient_data", "insufficient_data"]);
  });

  it.each([
    ["candidate=1.5.0", "query.baseline"],
    ["baseline=1.4.0", "query.candidate"],
    ["baseline=1.4.0&candidate=1.4.0", "query.candidate"],
    // Surrounding spaces are not part of a build id, so these are the same build.
    ["baseline=1.4.0&candidate=%201.4.0%20", "query.candidate"],
    ["baseline=&candidate=1.5.0", "query.baseline"],
    [`baseline=${"b".repeat(257)}&candidate=1.5.0`, "query.baseline"],
    ["baseline=1.4.0&candidate=1.5.0&days=8", "query.days"],
    ["baseline=1.4.0&candidate=1.5.0&fresh=yes", "query.fresh"],
    [`baseline=1.4.0&candidate=1.5.0&mapId=${"m".repeat(256)}`, "query.mapId"],
    ["baseline=1.4.0&candidate=1.5.0&platform=", "query.platform"],
  ])("%s answers 400 naming %s", async (query, field) => {
    const res = await api(`/v1/projects/${t.projectId}/builds/compare?${query}`, { key: t.keys.read.key });
    expect(res.status).toBe(400);
    const problem = await problemOf(res);
    expect(problem.field).toBe(field);
    expect(problem.detail.startsWith(`${field}:`)).toBe(true);
  });
});

describe("builds/compare in the OpenAPI document", () => {
  it("is documented with its operationId, tag and parameters", async () => {
    const doc = (await (await api("/v1/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { operationId?: string; tags?: string[]; parameters?: Array<{ name: string }> }>
      >;
    };
    const op = doc.paths["/v1/projects/{id}/builds/compare"]?.get;
    expect(op?.operationId).toBe("compareBuilds");
    expect(op?.tags).toEqual(["Analytics"]);
    expect(op?.parameters?.map((p) => p.name).sort()).toEqual(
      ["baseline", "candidate", "days", "fresh", "id", "mapId", "platform"].sort(),
    );
  });
});

describe("builds/compare cache", () => {
  it("serves the cached answer within the minute; fresh=1 sees new data and refreshes it", async () => {
    const c = await seedTenant("pro", "Compare Cache Studio");
    const at = (Date.now() - 3_600_000) * 1000;
    await ingestAll(c, [...series("a", at, {}, frames([10])), ...series("b", at, {}, frames([12]))]);
    const q = "/builds/compare?baseline=a&candidate=b";
    const first = await getData<Comparison>(c, q);
    expect(first.diffs[0]).toMatchObject({
      metric: "frame_time",
      baselineP50: 10,
      candidateP50: 12,
      diffPct: 20,
    });

    await ingestAll(c, series("b", at + HOUR_US, {}, frames([30, 30])));
    expect(await getData(c, q)).toEqual(first);
    // Other parameters are other entries; another project never sees this one's.
    expect((await getData<Comparison>(c, `${q}&days=7`)).diffs[0]?.candidateP50).toBe(30);
    expect(await getData(t, q)).not.toEqual(first);

    const fresh = await getData<Comparison>(c, `${q}&fresh=1`);
    expect(fresh.diffs[0]).toMatchObject({ candidateP50: 30, diffPct: 200, isRegression: true });
    expect(await getData(c, q)).toEqual(fresh);
  });
});

describe("the CLI's request (perf-diff, run-profile-test through the API client)", () => {
  // The API client's headers: problem+json preferred, its key or its login token, and no X-Project-Id
  // on a project path. Its path builder's parameter order: baseline, candidate, days, mapId, platform, fresh.
  const cliGet = (suffix: string, auth: { key?: string; token?: string }) =>
    api(`/v1/projects/${encodeURIComponent(t.projectId)}/${suffix}`, auth, {
      method: "GET",
      headers: { Accept: "application/problem+json, application/json;q=0.9" },
    });

  it.each<[string, string, CompareParams]>([
    [
      "perf-diff",
      "builds/compare?baseline=1.4.0&candidate=1.5.0&days=30&mapId=arena&platform=windows",
      { baseline: "1.4.0", candidate: "1.5.0", days: 30, mapId: "arena", platform: "windows" },
    ],
    [
      "run-profile-test gate",
      "builds/compare?baseline=1.4.0&candidate=1.5.0&fresh=1",
      { baseline: "1.4.0", candidate: "1.5.0", days: 30 },
    ],
  ])("%s: success, and every field the gate reads", async (_, suffix, params) => {
    for (const auth of [{ key: t.keys.read.key }, { token: t.token }]) {
      const res = await cliGet(suffix, auth);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      const body = (await res.json()) as OkBody<"/v1/projects/{id}/builds/compare">;
      expect(body.success).toBe(true);
      expect(body.data.baseline.build_id).toBe("1.4.0");
      expect(body.data.candidate.build_id).toBe("1.5.0");
      expect(Array.isArray(body.data.diffs)).toBe(true);
      for (const d of body.data.diffs) {
        expect(REF_COMPARE_METRICS).toContain(d.metric);
        expect(typeof d.isRegression).toBe("boolean");
        for (const k of [
          "baselineP50",
          "candidateP50",
          "diffPct",
          "baselineTail",
          "candidateTail",
        ] as const) {
          expect(d[k] === null || Number.isFinite(d[k]), k).toBe(true);
        }
      }
      expect(samplesOnly(body.data)).toEqual(refCompare(events, params, Date.now()));
    }
  });

  it("a refused request is a problem the client reads (detail, status)", async () => {
    const res = await cliGet("builds/compare?baseline=same&candidate=same", { key: t.keys.read.key });
    expect(res.status).toBe(400);
    const p = await problemOf(res);
    expect(p.detail).toBe("query.candidate: must differ from baseline");
  });
});

describe("builds: the session and player counts", () => {
  it("equal the exact count at 100,000 distinct sessions and players", async () => {
    const s = await seedTenant("pro", "Build Counts Studio");
    const ch = testClickHouse();
    // 100,000 performance-bearing events of one build over the last two hours (inside the 7-day window at
    // any time of day): 100,000 distinct sessions and 100,000 distinct players (a tenth anonymous, counted
    // by their session as the spec says), numbered as the consumer numbers them (a number per distinct
    // player and session: k + 1). A second build beside it with 1,000 of each sending three events each,
    // which the bitmaps count once.
    await ch.command({
      query: `INSERT INTO telemetry.events (project_id, timestamp, event_name, session_id, player_id, build_id,
          map_id, platform, fps, batch_id, event_index, received_at, player_idx, session_idx)
        SELECT {p:UUID}, now64(6, 'UTC') - toIntervalSecond(1 + number % 7200), 'frame_sample',
          concat('counts-s-', toString(k)), if(k % 10 = 0, '', concat('counts-p-', toString(k))),
          if(k < 100000, 'counts-big', 'counts-small'), 'arena', 'windows', 60,
          concat('counts-', toString(intDiv(number, 1000))), toUInt32(number % 1000), now64(6, 'UTC'),
          toUInt32(k + 1), toUInt32(k + 1)
        FROM (SELECT number, if(number < 100000, number, 100000 + number % 1000) AS k
          FROM numbers(103000))`,
      query_params: { p: s.projectId },
    });
    const rs = await ch.query({
      query: `SELECT toString(build_id) AS build_id, toUInt64(count()) AS events,
          toUInt64(uniqExact(session_id)) AS sessions,
          toUInt64(uniqExact(if(empty(player_id), session_id, player_id))) AS players
        FROM telemetry.events WHERE project_id = {p:UUID} GROUP BY build_id ORDER BY build_id`,
      query_params: { p: s.projectId },
      format: "JSONEachRow",
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    });
    const exact = await rs.json<{ build_id: string; events: number; sessions: number; players: number }>();
    expect(exact).toEqual([
      { build_id: "counts-big", events: 100_000, sessions: 100_000, players: 100_000 },
      { build_id: "counts-small", events: 3000, sessions: 1000, players: 1000 },
    ]);
    type Build = { build_id: string; event_count: number; session_count: number; player_count: number };
    const builds = await getData<Build[]>(s, "/builds?days=7&fresh=1");
    expect(builds.map((b) => [b.build_id, b.event_count, b.session_count, b.player_count])).toEqual(
      expect.arrayContaining(exact.map((e) => [e.build_id, e.events, e.sessions, e.players])),
    );
    // The one build asked for reads the same bitmaps.
    const [big] = await getData<Build[]>(s, "/builds?days=7&fresh=1&buildId=counts-big");
    expect(big).toEqual(builds.find((b) => b.build_id === "counts-big"));
  }, 120_000);
});

describe("the builds rollups' granules", () => {
  // A granule of 8,192 rows held every project's rows of months: one project's read deserialized all
  // their states (0009_builds_rollups.sql).
  it.each(["build_days", "compare_rollup"])("%s is made with granules of 64 rows", async (table) => {
    const rs = await testClickHouse().query({
      query: "SELECT engine_full FROM system.tables WHERE database = 'telemetry' AND name = {t:String}",
      query_params: { t: table },
      format: "JSONEachRow",
    });
    const [row] = await rs.json<{ engine_full: string }>();
    expect(row?.engine_full).toMatch(/index_granularity = 64\b/);
  });
});
