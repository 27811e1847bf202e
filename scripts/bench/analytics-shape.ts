// `node --import tsx scripts/bench/analytics-shape.ts`: the bench generator's shape, measured with SQL
// (analytics-data.ts's header says what it should be). Loads one plan into a chdb of its own (a temp
// dir, every migration; `generateSeconds`: the rows made without inserting them, `loadSeconds`: the
// load through every view), then prints one JSON line: what the plan expects (`expected`), and what the
// main project holds (`measured`): events per session, the distinct devices and builds a session and a
// player have, whether every session walks its maps in order, the heartbeats' cadence, sessions per
// player-day, D1/D7/D30 of the players first seen inside the span, players per day and over the last
// 30 days. With BENCH_SHAPE_TWICE=1 it loads the plan again into a second project, half its events and
// then grown by the other half, and compares the two (`deterministic`). Knobs: BENCH_SHAPE_EVENTS (500,000), BENCH_SHAPE_OTHER_EVENTS (100,000),
// BENCH_SPAN_DAYS (45 here: D30 needs 30 days after a cohort), BENCH_PROFILE, BENCH_PLAYERS.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clickhouseQuery, startClickHouseHttp } from "../local/clickhouse-http.js";
import { migrateClickHouse } from "../migrate.js";
import { expected, type LoadPlan, loadBenchData } from "./analytics-data.js";

const EVENTS = Number(process.env.BENCH_SHAPE_EVENTS ?? 500_000);
const OTHER_EVENTS = Number(process.env.BENCH_SHAPE_OTHER_EVENTS ?? 100_000);
const SPAN = Number(process.env.BENCH_SPAN_DAYS ?? 45);
const TWICE = process.env.BENCH_SHAPE_TWICE === "1";

async function main() {
  const dir = await mkdtemp(join(tmpdir(), "bench-shape-"));
  const password = crypto.randomUUID();
  const server = await startClickHouseHttp({ dataDir: join(dir, "clickhouse"), user: "default", password });
  const target = { url: server.url, user: "default", password };
  const one = async (sql: string, params: Record<string, string>) =>
    JSON.parse(await clickhouseQuery(target.url, target, `${sql} FORMAT JSONEachRow`, params)) as Record<
      string,
      number
    >;
  try {
    await migrateClickHouse(target);
    const anchor = new Date().toISOString().slice(0, 10);
    const plan: LoadPlan = {
      mainProject: crypto.randomUUID(),
      mainEvents: EVENTS,
      otherProjects: Array.from({ length: 3 }, () => crypto.randomUUID()),
      otherEvents: OTHER_EVENTS,
      spanDays: SPAN,
      anchor,
    };
    const exp = expected(plan);
    // Generation alone first (rows made and hashed in ClickHouse, none inserted), then the load.
    const dryStarted = performance.now();
    await loadBenchData(target, plan, () => {}, { extraMain: 0, skipPlan: false, dry: true });
    const generateSeconds = (performance.now() - dryStarted) / 1000;
    const started = performance.now();
    await loadBenchData(target, plan, () => {});
    const loadSeconds = (performance.now() - started) / 1000;
    const p = {
      p: plan.mainProject,
      inSpan: String(exp.newPlayersPerDay * SPAN),
      perDay: String(exp.newPlayersPerDay),
    };
    const events = "telemetry.events WHERE project_id = {p:UUID}";
    const sessions = await one(
      `SELECT count() AS sessions, min(n) AS min_events, max(n) AS max_events, avg(n) AS mean_events,
        max(platforms) AS max_platforms, max(devices) AS max_devices, max(builds) AS max_builds,
        max(players) AS max_players, countIf(in_order) / count() AS maps_in_order,
        countIf(starts) / count() AS starting_with_session_start,
        quantileExact(0.5)(heartbeat_gap) AS median_heartbeat_gap_s
      FROM (
        SELECT session_id, count() AS n, uniqExact(platform) AS platforms,
          uniqExact(platform, gpu, resolution, device_model, os_version, cpu, memory_total_mb) AS devices,
          uniqExact(build_id) AS builds, uniqExact(player) AS players,
          arrayFilter(m -> m != '', arrayMap(x -> x.2, arraySort(groupArray((timestamp, toString(map_id)))))) AS maps,
          -- Each map of the session in one run: the runs are as many as the distinct maps.
          length(arrayFilter((m, k) -> k = 1 OR m != maps[k - 1], maps, arrayEnumerate(maps))) = length(arrayDistinct(maps)) AS in_order,
          argMin(event_name, timestamp) = 'session_start' AS starts,
          arrayMap(x -> x.2, arraySort(groupArrayIf((timestamp, toUnixTimestamp64Micro(timestamp)), event_name = 'perf_heartbeat'))) AS beats,
          arraySort(arrayPopFront(arrayDifference(beats))) AS gaps,
          if(empty(gaps), NULL, gaps[1 + intDiv(length(gaps), 2)] / 1000000) AS heartbeat_gap
        FROM ${events} GROUP BY session_id
      )`,
      p,
    );
    const devices = await one(
      `SELECT max(n) AS max_devices_per_player, countIf(n = 2) / count() AS two_device_players FROM (
        SELECT player, uniqExact(platform, gpu, resolution, device_model, os_version, cpu, memory_total_mb) AS n
        FROM ${events} AND player_id != '' GROUP BY player)`,
      p,
    );
    const days = await one(
      `SELECT avg(s) AS sessions_per_player_day, count() AS player_days FROM (
        SELECT player, toDate(timestamp) AS day, uniqExact(session_id) AS s FROM ${events} AND player_id != ''
        GROUP BY player, day)`,
      p,
    );
    // Returns of the players first seen inside the span (numbered below inSpan: first day p ÷ perDay).
    const returns = await one(
      `SELECT countIf(has(ds, f + 1)) / countIf(f + 1 < {span:UInt32}) AS d1,
        countIf(has(ds, f + 7)) / countIf(f + 7 < {span:UInt32}) AS d7,
        countIf(has(ds, f + 30)) / countIf(f + 30 < {span:UInt32}) AS d30,
        countIf(min_d = f) / count() AS first_seen_on_first_day
      FROM (
        SELECT toUInt64(substring(player_id, 8)) AS n, intDiv(n, {perDay:UInt64}) AS f,
          groupUniqArray(toUInt32(toDate(timestamp) - (toDate({anchor:String}) - ({span:UInt32} - 1)))) AS ds,
          arrayMin(ds) AS min_d
        FROM ${events} AND player_id != '' AND toUInt64(substring(player_id, 8)) < {inSpan:UInt64}
        GROUP BY player_id, n
      )`,
      { ...p, span: String(SPAN), anchor },
    );
    const totals = await one(
      `SELECT count() AS events, uniqExact(session_id) AS sessions,
        uniqExactIf(player, timestamp >= toDate({anchor:String}) - 29) AS monthly_players,
        (SELECT avg(n) FROM (SELECT toDate(timestamp) AS day, uniqExact(player) AS n FROM ${events} GROUP BY day)) AS daily_players
      FROM ${events}`,
      { ...p, anchor },
    );
    const projects = await one(
      "SELECT uniqExact(project_id) AS projects, countIf(project_id = {p:UUID}) AS main FROM telemetry.events",
      p,
    );
    let deterministic: boolean | undefined;
    if (TWICE) {
      // Half the events first, then grown by the other half (the same sessions, denser): the same
      // events as the plan loaded at once.
      const half = Math.floor(EVENTS / 2);
      const again = {
        ...plan,
        mainProject: crypto.randomUUID(),
        otherEvents: 0,
        mainEvents: half,
        scaleEvents: EVENTS,
      };
      await loadBenchData(target, again, () => {});
      await loadBenchData(target, again, () => {}, { extraMain: EVENTS - half, skipPlan: true });
      // Rows and their hashes' XOR (with the count, so that a row loaded twice cannot cancel out).
      const digest = async (project: string) =>
        JSON.stringify(
          await one(
            `SELECT count() AS n, groupBitXor(cityHash64(timestamp, event_name, session_id, player_id, build_id,
              map_id, platform, gpu, position_x, fps, memory_used_bytes, batch_id, event_index, attributes, metrics)) AS h
            FROM telemetry.events WHERE project_id = {p:UUID}`,
            { p: project },
          ),
        );
      deterministic = (await digest(plan.mainProject)) === (await digest(again.mainProject));
    }
    console.log(
      JSON.stringify({
        expected: exp,
        generateSeconds,
        loadSeconds,
        measured: { ...sessions, ...devices, ...days, ...returns, ...totals, ...projects },
        deterministic,
      }),
    );
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
