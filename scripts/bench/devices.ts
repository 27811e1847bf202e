import { createClient } from "@clickhouse/client-web";
import { type CellScope, judgeScope } from "../../workers/api/alerts/cells.js";
import { cellDrilldown } from "../../workers/api/analytics/cell.js";
import { windowOf } from "../../workers/api/window.js";
import { CH_EVENTS, CH_SESSION_DEVICES } from "../../workers/shared/clickhouse.js";
import { clickhouseQuery } from "../local/clickhouse-http.js";
import { loadBenchData, PLAYERS } from "./analytics-data.js";
import { counting } from "./rows-read.js";
import { withBenchStack } from "./stack.js";

// The cost of the engine SDKs' device_info (docs/ingest.md, "Hardware context from the engine SDKs";
// docs/benchmarks.md, "bench:devices"): the reads that attach a session's device at read time, before
// and after the project has device_info events, and the insert of those events through the view.
// Data: analytics-data.ts's generator (BENCH_MAIN_EVENTS of the project, BENCH_OTHER_EVENTS of nine
// others), then one device_info per session of the project's last 30 days.

const MAIN_EVENTS = Number(process.env.BENCH_MAIN_EVENTS ?? 2_000_000);
const OTHER_EVENTS = Number(process.env.BENCH_OTHER_EVENTS ?? 2_000_000);
const RUNS = 5;
/** Events loaded again with and without the view, for its insert cost. */
const EXTRA_EVENTS = Number(process.env.BENCH_EXTRA_EVENTS ?? 1_000_000);

async function median(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return Math.round((times[Math.floor(RUNS / 2)] as number) * 10) / 10;
}

async function main() {
  await withBenchStack("devices", async ({ stack }) => {
    const projectId = crypto.randomUUID();
    const others = Array.from({ length: 9 }, () => crypto.randomUUID());
    const progress = (line: string) => process.stdout.write(`\r${line}   `);
    const plan = {
      mainProject: projectId,
      mainEvents: MAIN_EVENTS,
      otherProjects: others,
      otherEvents: OTHER_EVENTS,
      players: PLAYERS,
      // Sized for the extra events too: each extra load grows the same sessions to full density.
      scaleEvents: MAIN_EVENTS + EXTRA_EVENTS,
    };
    const loaded = await loadBenchData(stack.clickhouse, plan, progress);
    console.log(
      `\nloaded ${(MAIN_EVENTS + OTHER_EVENTS).toLocaleString("en")} events in ${loaded.toFixed(1)} s`,
    );
    const ch = createClient({
      url: stack.clickhouse.url,
      username: stack.clickhouse.user,
      password: stack.clickhouse.password,
    });
    const { client, take } = counting(ch);
    const now = Date.now();
    const scope = (cellSize: number, days: number, gpu: string | null): CellScope => ({
      projectId,
      mapId: "maps/desert_outpost",
      window: windowOf(days, now),
      cellSize,
      filters: { platform: null, resolution: null, buildConfig: null, gpu, storage: null },
    });
    const judge = (s: CellScope) => judgeScope(client, { ...s, metric: "fps", threshold: 45 });
    const reads: Array<[string, () => Promise<unknown>]> = [
      ["alert cells, gpu profile, cell 25, 7 days", () => judge(scope(25, 7, "RTX 3060"))],
      ["alert cells, gpu profile, cell 25, 30 days", () => judge(scope(25, 30, "RTX 3060"))],
      ["alert cells, gpu profile, cell 10, 7 days", () => judge(scope(10, 7, "RTX 3060"))],
      ["alert cells, no device filter, cell 25, 7 days", () => judge(scope(25, 7, null))],
      [
        "heatmap/cell drill-down, 7 days",
        () =>
          cellDrilldown(client, projectId, windowOf(7, now), {
            mapId: "maps/desert_outpost",
            cellSize: 25,
            x: 0,
            y: 0,
            metric: "frame_time",
          }),
      ],
    ];
    const measure = async () => {
      const out: Array<{ ms: number; rows: number }> = [];
      for (const [, read] of reads) {
        await take();
        await read();
        const rows = await take();
        out.push({ ms: await median(read), rows });
        await take();
      }
      return out;
    };
    const before = await measure();

    // One device_info per session of the project's last 30 days, through the view (its insert cost).
    const target = { user: stack.clickhouse.user, password: stack.clickhouse.password };
    const t0 = performance.now();
    await clickhouseQuery(
      stack.clickhouse.url,
      target,
      `INSERT INTO ${CH_EVENTS} (project_id, timestamp, event_name, session_id, player_id, attributes, source, batch_id, event_index, received_at)
      SELECT project_id, min(timestamp) + toIntervalSecond(30), 'device_info', session_id, any(player_id),
        map('gpu', 'RTX 3060', 'resolution', '2560x1440', 'device_model', 'Desktop', 'os_version', 'Windows 11',
            'memory_total_mb', '32768', 'build_config', 'release', 'storage', 'nvme', 'cpu', 'Ryzen 7'),
        'player', concat('device-', session_id), 0, now64(3)
      FROM ${CH_EVENTS}
      WHERE project_id = {p:UUID} AND timestamp >= now() - toIntervalDay(30)
      GROUP BY project_id, session_id`,
      { p: projectId },
    );
    const insertMs = performance.now() - t0;
    const [count] = await (
      await ch.query({
        query: `SELECT count() AS n FROM ${CH_SESSION_DEVICES} WHERE project_id = {p:UUID}`,
        query_params: { p: projectId },
        format: "JSONEachRow",
      })
    ).json<{ n: string }>();
    console.log(
      `device_info: ${Number(count?.n).toLocaleString("en")} sessions' rows inserted through the view in ${Math.round(insertMs)} ms (the INSERT … SELECT included)`,
    );
    // The same reads over the same events, now with every session's device_info.
    const after = await measure();
    console.log(
      "\nread                                              before: ms  rows read   after: ms  rows read",
    );
    reads.forEach(([name], i) => {
      const b = before[i] as { ms: number; rows: number };
      const a = after[i] as { ms: number; rows: number };
      console.log(
        `${name.padEnd(50)}${String(b.ms).padStart(10)}${b.rows.toLocaleString("en").padStart(11)}${String(a.ms).padStart(12)}${a.rows.toLocaleString("en").padStart(11)}`,
      );
    });
    // The view's cost on ordinary inserts: the same EXTRA_EVENTS events loaded with and without it.
    const extra = async () =>
      loadBenchData(stack.clickhouse, plan, () => {}, { extraMain: EXTRA_EVENTS, skipPlan: true });
    const withView = await extra();
    await clickhouseQuery(stack.clickhouse.url, target, "DETACH TABLE telemetry.session_devices_mv", {});
    const withoutView = await extra();
    await clickhouseQuery(stack.clickhouse.url, target, "ATTACH TABLE telemetry.session_devices_mv", {});
    console.log(
      `${EXTRA_EVENTS.toLocaleString("en")} more events: ${withView.toFixed(1)} s with the view, ${withoutView.toFixed(1)} s without`,
    );
  });
}

await main();
