// `npm run bench:views`: what each materialized view on telemetry.events costs an insert (docs/benchmarks.md,
// "bench:views"). In chdb through the local ClickHouse endpoint, with every migration applied: the same
// BENCH_VIEWS_ROWS rows (default 300,000, one project, one day, in inserts of BENCH_VIEWS_INSERT rows,
// the consumer's order of magnitude) inserted with every view detached, then with each view alone, then
// with all of them; medians of 3. A view's cost is its time over the no-view time; the last line is JSON.
// What it shows: most of a view's cost is per insert (one more part written per view, whatever the view
// computes), so the ceiling with views follows the number of views more than their SQL.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@clickhouse/client-web";
import { startClickHouseHttp } from "../local/clickhouse-http.js";
import { migrateClickHouse } from "../migrate.js";

const ROWS = Number(process.env.BENCH_VIEWS_ROWS ?? 300_000);
const PER_INSERT = Number(process.env.BENCH_VIEWS_INSERT ?? 60_000);
const RUNS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function main() {
  const dir = await mkdtemp(join(tmpdir(), "bench-views-"));
  const password = crypto.randomUUID();
  const server = await startClickHouseHttp({ dataDir: join(dir, "clickhouse"), user: "default", password });
  try {
    const target = { url: server.url, user: "default", password };
    await migrateClickHouse(target);
    const ch = createClient({ url: server.url, username: "default", password, request_timeout: 600_000 });
    const run = (query: string) => ch.command({ query });
    const views = (
      await (
        await ch.query({
          query:
            // The views an insert into the events runs (not the replay views, which read events_replay).
            `SELECT name FROM system.tables WHERE database = 'telemetry' AND engine = 'MaterializedView'
              AND has((SELECT dependencies_table FROM system.tables WHERE database = 'telemetry' AND name = 'events'), name)
            ORDER BY name`,
          format: "JSONEachRow",
        })
      ).json<{ name: string }>()
    ).map((r) => r.name);
    // A session of 100 events, a player of 3 sessions, a batch of 1,500 events; maps, builds and platforms
    // as a game's; numbered as the consumer numbers them.
    await run(
      "CREATE TABLE telemetry.bench_views_src AS telemetry.events ENGINE = MergeTree ORDER BY tuple()",
    );
    await run(`INSERT INTO telemetry.bench_views_src (project_id, timestamp, event_name, session_id, player_id,
        build_id, map_id, platform, resolution, gpu, position_x, position_y, fps, frame_time_ms, memory_used_bytes,
        gpu_time_ms, batch_id, event_index, received_at, player_idx, session_idx)
      SELECT toUUID('11111111-1111-1111-1111-111111111111'), now64(6) - toIntervalSecond(number % 86400),
        ['perf_heartbeat', 'player_move', 'enemy_killed', 'ui_click'][1 + number % 4],
        concat('s-', toString(intDiv(number, 100))), concat('p-', toString(intDiv(number, 300))),
        ['1.1', '1.2'][1 + intDiv(number, 1000) % 2], ['maps/a', 'maps/b', 'maps/c'][1 + intDiv(number, 50) % 3],
        ['windows', 'ps5', 'android'][1 + intDiv(number, 300) % 3], '1920x1080', 'RTX 3060',
        (number % 1000) - 500, (number % 777) - 300, 60 + number % 30, 16.6, 1000000000, 9.1,
        concat('b-', toString(intDiv(number, 1500))), toUInt32(number % ${PER_INSERT}), now64(3),
        toUInt32(1 + intDiv(number, 300)), toUInt32(1 + intDiv(number, 100))
      FROM numbers(${ROWS})`);
    const inserts = Math.ceil(ROWS / PER_INSERT);
    const timed = async () => {
      const t0 = performance.now();
      for (let i = 0; i < inserts; i++) {
        await run(`INSERT INTO telemetry.events SELECT * FROM telemetry.bench_views_src
          WHERE intDiv(rowNumberInAllBlocks(), ${PER_INSERT}) = ${i}`);
      }
      return performance.now() - t0;
    };
    const measure = async () => {
      const ms: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        ms.push(await timed());
      }
      return median(ms);
    };
    for (const v of views) {
      await run(`DETACH TABLE telemetry.${v}`);
    }
    const none = await measure();
    const each: Array<{ view: string; extraMs: number }> = [];
    for (const v of views) {
      await run(`ATTACH TABLE telemetry.${v}`);
      each.push({ view: v, extraMs: (await measure()) - none });
      await run(`DETACH TABLE telemetry.${v}`);
    }
    for (const v of views) {
      await run(`ATTACH TABLE telemetry.${v}`);
    }
    const all = await measure();
    each.sort((a, b) => b.extraMs - a.extraMs);
    console.log(`${ROWS.toLocaleString("en")} rows in ${inserts} inserts, medians of ${RUNS}\n`);
    console.log(`| view | extra ms | share of no-view time |\n| --- | --: | --: |`);
    for (const e of each) {
      console.log(`| ${e.view} | ${e.extraMs.toFixed(0)} | ${((100 * e.extraMs) / none).toFixed(0)} % |`);
    }
    console.log(`\nno views ${none.toFixed(0)} ms, all ${views.length} views ${all.toFixed(0)} ms:`);
    console.log(`ceiling with views / without: ${(none / all).toFixed(2)}`);
    console.log(
      JSON.stringify({
        rows: ROWS,
        none_ms: Math.round(none),
        all_ms: Math.round(all),
        ratio: Number((none / all).toFixed(3)),
        views: Object.fromEntries(each.map((e) => [e.view, Math.round(e.extraMs)])),
      }),
    );
    await ch.close();
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
