import { beforeAll, describe, expect, it } from "vitest";
import { erasePlayer } from "../../workers/api/erasure/erase.js";
import { playerSessions } from "../../workers/api/erasure/steps.js";
import { type Dataset, type GenEvent, generateDataset } from "../support/analytics-dataset.js";
import { clocked, getData, ingestAll } from "../support/analytics-ingest.js";
import {
  playerOf,
  refBuilds,
  refCompare,
  refDashboard,
  refFunnel,
  refHeatmap,
  refInsights,
  refRetention,
} from "../support/analytics-reference.js";
import { samplesOnly } from "../support/compare.js";
import { eraseAndWait } from "../support/erasures.js";
import { testClickHouse } from "../support/events.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import type { Ok } from "../support/schema.js";

/**
 * Erasure, then every analytics read: each must equal the independent reference computed over the
 * dataset without the erased player's events, and the rollups the reads use must hold nothing of them.
 */
/** The file's clock: the data is generated around this instant and every read and reference is at it. */
const NOW = Date.now();

let t: Tenant;
let ds: Dataset;
let victim: string;
let kept: GenEvent[];

/** The erasure's contract: the player's events, and the anonymous events of sessions they signed into. */
function erasedBy(playerId: string, events: GenEvent[]): (e: GenEvent) => boolean {
  const identified = new Set(events.filter((e) => e.playerId === playerId).map((e) => e.sessionId));
  return (e) =>
    e.playerId === playerId ||
    (e.playerId === "" && (e.sessionId === playerId || identified.has(e.sessionId)));
}

async function rollupRows(table: "funnel_events", column: string, ids: string[]) {
  // The table of funnels holds the player's hash.
  const match =
    column === "player_hash" ? "arrayMap(i -> cityHash64(i), {ids:Array(String)})" : "{ids:Array(String)}";
  const rs = await testClickHouse().query({
    query: `SELECT count() AS n FROM telemetry.${table} WHERE project_id = {p:UUID} AND ${column} IN ${match}`,
    query_params: { p: t.projectId, ids },
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ n: string | number }>();
  return Number(row?.n ?? 0);
}

/** The dense numbers of the given players and sessions, as written on their events. */
async function numbersOf(players: string[], sessions: string[]) {
  const rs = await testClickHouse().query({
    query: `SELECT groupUniqArrayIf(player_idx, player IN {players:Array(String)}) AS players,
        groupUniqArrayIf(session_idx, session_id IN {sessions:Array(String)}) AS sessions
      FROM telemetry.events WHERE project_id = {p:UUID}`,
    query_params: { p: t.projectId, players, sessions },
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ players: number[]; sessions: number[] }>();
  return { players: row?.players ?? [], sessions: row?.sessions ?? [] };
}

/** The rows of a bitmap table holding any of `numbers` in `column`. */
async function bitmapRowsWith(table: string, column: string, numbers: number[]) {
  const rs = await testClickHouse().query({
    query: `SELECT countIf(bitmapHasAny(${column}, bitmapBuild({n:Array(UInt32)}))) AS n
      FROM telemetry.${table} WHERE project_id = {p:UUID}`,
    query_params: { p: t.projectId, n: numbers },
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ n: string | number }>();
  return Number(row?.n ?? 0);
}

/**
 * Each rebuilt rollup's totals: sums and counts of every kind, and the merged distinct states, over the
 * project's rows (with a condition on the level or grain where one table holds several).
 */
const ROLLUP_TOTALS: [string, string, string?][] = [
  [
    "heatmap_cells",
    "sum(events), sum(fps_n), sum(frame_n), sum(mem_n), sum(gpu_n), sum(vram_n), max(mem_max), quantileExactWeightedMerge(0.05)(fps_q), quantileExactWeightedMerge(0.95)(frame_q), quantileExactWeightedMerge(0.95)(vram_q)",
  ],
  [
    "alert_cells",
    "sum(fps_n), sum(frame_n), sum(mem_n), sum(gpu_n), round(sum(fps_sum), 3), sum(beats_n), sum(slow_n)",
  ],
  ["daily_events", "sum(events), uniqExact(event_name, map_id, platform, build_id, day)"],
  [
    "build_days",
    "sum(events), groupBitmapMerge(players), groupBitmapMerge(sessions), min(first_seen), max(last_seen)",
  ],
  [
    "compare_rollup",
    "sum(events), groupBitmapMerge(players), groupBitmapMerge(sessions), sum(n0), quantilesExactWeightedMerge(0.5, 0.95)(q0), sum(n1), quantilesExactWeightedMerge(0.5, 0.95)(q1)",
    "AND level = 'map_platform'",
  ],
  [
    "compare_rollup",
    "sum(events), groupBitmapMerge(players), groupBitmapMerge(sessions), sum(n0), quantilesExactWeightedMerge(0.5, 0.95)(q0), sum(n6), quantilesExactWeightedMerge(0.5, 0.95)(q6)",
    "AND level = 'build'",
  ],
  [
    "session_values",
    "uniqExact(build_id, session, platform, gpu, map_id), uniqExact(session), quantileExactLowMerge(0.5)(frame_q), quantileExactLowMerge(0.5)(fps_q), quantileExactLowMerge(0.5)(mem_q)",
  ],
  [
    "session_cells",
    "uniqExact(build_id, session, x, y), uniqExact(session), quantileExactLowMerge(0.5)(frame_q), quantileExactLowMerge(0.5)(gpu_q)",
  ],
  [
    "actor_buckets",
    "uniqExact(day), groupBitmapMerge(players), groupBitmapMerge(sessions)",
    "AND grain = 'day'",
  ],
  // The hours and minutes their TTLs keep (rows past it may or may not have been merged away yet).
  [
    "actor_buckets",
    "uniqExact(bucket), groupBitmapMerge(players), groupBitmapMerge(sessions)",
    "AND grain = 'hour' AND bucket >= toStartOfDay(now()) - INTERVAL 30 DAY",
  ],
  [
    "actor_buckets",
    "uniqExact(bucket), groupBitmapMerge(players), groupBitmapMerge(sessions)",
    "AND grain = 'minute' AND bucket >= now() - INTERVAL 1 DAY",
  ],
  ["player_dims", "uniqExact(day, event_name, dim, dim_value), groupBitmapMerge(players)"],
];

async function totalsOf(from: string, totals: string, where: string) {
  const rs = await testClickHouse().query({
    query: `SELECT ${totals} FROM ${from} WHERE project_id = {p:UUID} ${where}`,
    query_params: { p: t.projectId },
    format: "JSONCompact",
  });
  return (await rs.json<unknown[]>()).data;
}

/** A rollup's totals, and the same from a fresh build of the events left (its `_src` view). */
const rollupTotals = (table: string, totals: string, where: string) =>
  totalsOf(`telemetry.${table}`, totals, where);
const freshTotals = (table: string, totals: string, where: string) =>
  totalsOf(
    `telemetry.${table}_src(whole = true, project = {p:UUID}, days = [], player = '', identified = [])`,
    totals,
    where,
  );

/**
 * batch_totals by day read through its per-day projection (0044_batch_totals_by_day.sql), which the
 * status reads, and from its rows: the erasure's lightweight DELETEs must leave the two equal.
 */
async function batchTotalsBothWays(): Promise<[unknown[], unknown[]]> {
  const byDay = async (settings: string) => {
    const rs = await testClickHouse().query({
      query: `SELECT day, sum(events), max(last_event) FROM telemetry.batch_totals WHERE project_id = {p:UUID}
        GROUP BY day ORDER BY day SETTINGS ${settings}`,
      query_params: { p: t.projectId },
      format: "JSONCompact",
    });
    return (await rs.json<unknown[]>()).data;
  };
  return [await byDay("force_optimize_projection = 1"), await byDay("optimize_use_projections = 0")];
}

let erasedNumbers: { players: number[]; sessions: number[] };

beforeAll(async () => {
  t = clocked(await seedTenant("enterprise", "Erasure Analytics Studio"), NOW);
  ds = generateDataset(4242, NOW);
  // The identified player with the most events, so every read has something of theirs to lose.
  const perPlayer = new Map<string, number>();
  for (const e of ds.events.filter((e) => e.playerId !== "")) {
    perPlayer.set(e.playerId, (perPlayer.get(e.playerId) ?? 0) + 1);
  }
  victim = [...perPlayer.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? "";
  // A second player in one of the victim's sessions (couch co-op): the session keeps that player's
  // sample, so its session-keyed rows are derived again from it rather than only deleted.
  const shared = ds.events.find(
    (e) =>
      e.playerId === victim &&
      (e.perf?.frameTimeMs ?? 0) > 0 &&
      e.pos !== undefined &&
      e.buildId !== "" &&
      e.mapId !== "",
  );
  expect(shared).toBeDefined();
  ds.events.push({
    ...(shared as GenEvent),
    playerId: "co-op-player",
    tsUs: (shared as GenEvent).tsUs + 1000,
  });
  // And on a map the victim never played: rows of the shared session that no erased event fed, which
  // the erasure must leave as they are (neither lost nor counted twice: derived again on top of the
  // rows kept, its samples count twice, which the checks after the second erasure below see).
  ds.events.push({
    ...(shared as GenEvent),
    playerId: "co-op-player",
    mapId: "co-op-map",
    tsUs: (shared as GenEvent).tsUs + 2000,
  });
  await ingestAll(t, ds.events);
  const erased = erasedBy(victim, ds.events);
  kept = ds.events.filter((e) => !erased(e));
  expect(ds.events.length - kept.length).toBeGreaterThan(10);

  // Warm the builds cache before the erasure: the check below reads past it with fresh=1.
  await getData(t, "/builds?days=30");
  await getData(t, "/dashboard?days=90");
  const erasedEvents = ds.events.filter(erased);
  erasedNumbers = await numbersOf(
    [...new Set(erasedEvents.map(playerOf))],
    [...new Set(erasedEvents.map((e) => e.sessionId))].filter((s) => kept.every((e) => e.sessionId !== s)),
  );
  expect(erasedNumbers.players.length).toBeGreaterThan(0);
  expect(erasedNumbers.players).not.toContain(0);
  const audit = await eraseAndWait(t.projectId, t.keys.full.key, victim);
  expect(audit.status).toBe("completed");
  expect(audit.rowsRemoved).toBe(ds.events.length - kept.length);
  expect(audit.steps.map((s) => s.table)).toEqual([
    "telemetry.events",
    "telemetry.cell_samples",
    "telemetry.funnel_events",
    "telemetry.session_devices",
    // Rebuilt for the player's days from the events left (workers/api/erasure/rollups.ts).
    "telemetry.heatmap_cells",
    "telemetry.alert_cells",
    "telemetry.daily_events",
    "telemetry.build_days",
    "telemetry.compare_rollup",
    "telemetry.session_values",
    "telemetry.session_cells",
    "telemetry.actor_buckets",
    "telemetry.player_dims",
    "telemetry.batch_totals",
  ]);
}, 240_000);

describe("after a player's erasure, every analytics read equals the reference without them", () => {
  it("leaves no row of the player in the rollups", async () => {
    // The bitmaps of dense numbers: no day, hour, minute or dimension bitmap holds the victim's number,
    // the numbers of the anonymous players of their sessions, or those of the sessions they emptied.
    for (const table of ["actor_buckets", "player_dims"]) {
      expect(await bitmapRowsWith(table, "players", erasedNumbers.players)).toBe(0);
    }
    expect(await bitmapRowsWith("actor_buckets", "sessions", erasedNumbers.sessions)).toBe(0);
    // The victim had hours to erase: events in the 32 days actor_buckets keeps hours.
    const recentUs = (NOW - 31 * 86_400_000) * 1000;
    expect(ds.events.some((e) => erasedBy(victim, ds.events)(e) && e.tsUs > recentUs)).toBe(true);
    // The per-player table of funnels, keyed by the hash of the player (the anonymous
    // players of the victim's sessions included); and what is left equals a fresh build from the events.
    const players = [...new Set(ds.events.filter(erasedBy(victim, ds.events)).map(playerOf))];
    expect(players.length).toBeGreaterThan(0);
    expect(await rollupRows("funnel_events", "player_hash", players)).toBe(0);
    const read = async (query: string) => {
      const rs = await testClickHouse().query({
        query,
        query_params: { p: t.projectId },
        format: "JSONCompact",
      });
      return (await rs.json<unknown[]>()).data;
    };
    expect(
      await read(
        "SELECT count(), sum(player_hash), sum(toUnixTimestamp64Micro(timestamp)) FROM telemetry.funnel_events WHERE project_id = {p:UUID}",
      ),
    ).toEqual(
      await read(
        "SELECT count(), sum(cityHash64(player)), sum(toUnixTimestamp64Micro(timestamp)) FROM telemetry.events WHERE project_id = {p:UUID}",
      ),
    );
  });

  // Each day-keyed rollup must hold exactly what a fresh build from the remaining events holds: sums
  // and counts of every kind, and the merged distinct states.
  it.each(ROLLUP_TOTALS)(
    "rollup %s equals a fresh build from the events left",
    async (table, totals, where = "") => {
      expect(await rollupTotals(table, totals, where)).toEqual(await freshTotals(table, totals, where));
    },
  );

  it("the erasure's staged keys are gone once it completed", async () => {
    const rs = await testClickHouse().query({
      query: "SELECT count() AS n FROM telemetry.erasure_keys WHERE project_id = {p:UUID}",
      query_params: { p: t.projectId },
      format: "JSONEachRow",
    });
    expect((await rs.json<{ n: string | number }>()).map((r) => Number(r.n))).toEqual([0]);
  });
  it("batch_totals' per-day projection equals its rows", async () => {
    const [projected, rows] = await batchTotalsBothWays();
    expect(projected).toEqual(rows);
    expect(rows.reduce((n: number, r) => n + Number((r as unknown[])[1]), 0)).toBe(kept.length);
  });

  it("daily_events holds the events left, and none of the player's", async () => {
    const rs = await testClickHouse().query({
      query: "SELECT sum(events) AS n FROM telemetry.daily_events WHERE project_id = {p:UUID}",
      query_params: { p: t.projectId },
      format: "JSONEachRow",
    });
    const [row] = await rs.json<{ n: string | number }>();
    expect(Number(row?.n)).toBe(kept.length);
  });

  it.each([7, 30, 90])("dashboard days=%i", async (days) => {
    const data = await getData<Ok<"/v1/projects/{id}/dashboard">>(t, `/dashboard?days=${days}`);
    expect(data).toEqual(refDashboard(kept, days, data.kpis.fetchedAt));
  });

  it("heatmap, events mode (counts are exact integers)", async () => {
    const q = { mapId: "dust", cellSize: 25, days: 30, eventName: "level_up" };
    const data = await getData(t, `/heatmap?mapId=dust&cellSize=25&days=30&eventName=level_up`);
    expect(data).toEqual(refHeatmap(kept, q, NOW));
  });

  it("heatmap, performance mode: the same cells and counts", async () => {
    const data = await getData<Ok<"/v1/projects/{id}/heatmap">>(t, "/heatmap?mapId=dust&cellSize=25&days=30");
    const ref = refHeatmap(kept, { mapId: "dust", cellSize: 25, days: 30 }, NOW);
    expect(data.map((c) => [c.x, c.y, c.event_count])).toEqual(ref.map((c) => [c.x, c.y, c.event_count]));
  });

  it.each([
    { mapId: "dust", cellSize: 50, days: 30 },
    { mapId: "dust", cellSize: 10, days: 30 },
    { mapId: "harbor", cellSize: 25, days: 30, includeZ: true },
  ])("heatmap, performance mode, every field (tails=1): cellSize=$cellSize includeZ=$includeZ", async (q) => {
    const z = q.includeZ ? "&includeZ=true" : "";
    const data = await getData<Array<Record<string, number | null>>>(
      t,
      `/heatmap?mapId=${q.mapId}&cellSize=${q.cellSize}&days=${q.days}${z}&tails=1`,
    );
    const ref = refHeatmap(kept, { ...q, tails: true }, NOW) as Array<Record<string, number | null>>;
    expect(data.map((c) => Object.keys(c).sort())).toEqual(ref.map((c) => Object.keys(c).sort()));
    expect(data.map((c) => [c.x, c.y, c.z, c.event_count])).toEqual(
      ref.map((c) => [c.x, c.y, c.z, c.event_count]),
    );
    data.forEach((cell, i) => {
      for (const [k, want] of Object.entries(ref[i] ?? {})) {
        const got = cell[k];
        if (want === null || got === null || got === undefined) {
          expect([k, got]).toEqual([k, want]);
        } else {
          expect(Math.abs(got - want), k).toBeLessThanOrEqual(Math.abs(want) * 1e-6);
        }
      }
    });
  });

  it("builds/compare of the two newest builds", async () => {
    const builds = refBuilds(kept, 30, NOW);
    const [candidate, baseline] = builds.map((b) => b.build_id);
    const q = { baseline: baseline ?? "", candidate: candidate ?? "", days: 30 };
    const data = await getData(
      t,
      `/builds/compare?baseline=${q.baseline}&candidate=${q.candidate}&days=30&fresh=1`,
    );
    expect(samplesOnly(data)).toEqual(refCompare(kept, q, NOW));
  });

  it.each([30, 90])("retention days=%i", async (days) => {
    expect(await getData(t, `/retention?days=${days}`)).toEqual(refRetention(kept, days, NOW));
  });

  it("funnels", async () => {
    const steps = ["match_start", "level_up", "match_end"];
    const data = await getData(t, `/funnels?steps=${steps.join(",")}&window=86400&days=30`);
    expect(data).toEqual(refFunnel(kept, steps, 86400, 30, NOW));
  });

  it.each([
    { metric: "unique_players", groupBy: "day", days: 30, limit: 50 },
    { metric: "unique_players", groupBy: "platform", days: 30, limit: 10 },
    { metric: "count", groupBy: "event_name", days: 30, limit: 10 },
    { metric: "count", groupBy: "week", days: 90, limit: 20 },
    { metric: "unique_players", groupBy: "day", days: 30, limit: 50, eventName: "level_up" },
  ] as const)("insights $metric by $groupBy", async (q) => {
    const data = await getData(
      t,
      `/insights?metric=${q.metric}&groupBy=${q.groupBy}&days=${q.days}&limit=${q.limit}${"eventName" in q ? `&eventName=${q.eventName}` : ""}`,
    );
    expect(data).toEqual(refInsights(kept, q, NOW));
  });

  it("builds (fresh): every count exact, the erased player's sessions and player gone", async () => {
    type Build = { build_id: string; event_count: number; session_count: number; player_count: number };
    const data = await getData<Build[]>(t, "/builds?days=30&fresh=1");
    const ref = refBuilds(kept, 30, NOW) as Build[];
    const counts = (b: Build) => [b.build_id, b.event_count, b.session_count, b.player_count];
    expect(data.map(counts)).toEqual(ref.map(counts));
  });

  // Last: it erases a second player. An erasure recorded before keys were staged (no `erasure` in its
  // bound) rebuilds the player's days whole; the rollups come out the same as from the keyed rebuild.
  it("an erasure without staged keys rebuilds the player's days whole, to the same rows", async () => {
    const ch = testClickHouse();
    const perPlayer = new Map<string, number>();
    for (const e of kept.filter((e) => e.playerId !== "")) {
      perPlayer.set(e.playerId, (perPlayer.get(e.playerId) ?? 0) + 1);
    }
    const second =
      [...perPlayer.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? "";
    const bound = await playerSessions(ch, t.projectId, second);
    expect(bound.days.length).toBeGreaterThan(1);
    const steps = await erasePlayer(ch, { ...bound, within: bound.days }, [], async () => {});
    expect(steps.find((s) => s.table === "telemetry.events")?.rowsRemoved).toBe(
      kept.filter(erasedBy(second, kept)).length,
    );
    for (const [table, totals, where = ""] of ROLLUP_TOTALS) {
      expect([table, where, await rollupTotals(table, totals, where)]).toEqual([
        table,
        where,
        await freshTotals(table, totals, where),
      ]);
    }
    const [projected, rows] = await batchTotalsBothWays();
    expect(projected).toEqual(rows);
  });
});
