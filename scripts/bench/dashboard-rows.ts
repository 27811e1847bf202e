// Where a read's rows and milliseconds go: each statement its functions run, one at a time, with the
// rows and bytes ClickHouse read for it (readBy) and its milliseconds (median of BENCH_RUNS, default 5,
// after a warm-up), on a kept bench dir (BENCH_KEEP_DIR, loaded by bench:analytics). BENCH_READS picks
// the reads (dashboard by default; dashboard, retention, compare, cell, tails, verdicts, verdicts_open):
//   BENCH_KEEP_DIR=/tmp/dash-10m BENCH_DAYS=30 BENCH_READS=dashboard,compare node --import tsx scripts/bench/dashboard-rows.ts
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type ClickHouseClient, createClient } from "@clickhouse/client-web";
import { cellDrilldown } from "../../workers/api/analytics/cell.js";
import { compareBuilds } from "../../workers/api/analytics/compare.js";
import { dashboardDistincts, dashboardTotals } from "../../workers/api/analytics/dashboard.js";
import { heatmapCells } from "../../workers/api/analytics/heatmap.js";
import { playerRetentionCohorts } from "../../workers/api/analytics/player-retention.js";
import { verdictFamilies } from "../../workers/api/analytics/session-verdicts.js";
import { withVerdicts } from "../../workers/api/analytics/verdicts.js";
import { windowOf } from "../../workers/api/window.js";
import { readBy } from "./rows-read.js";
import { withBenchStack } from "./stack.js";
import { printTable } from "./table.js";

const DAYS = Number(process.env.BENCH_DAYS ?? 30);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const READS = (process.env.BENCH_READS ?? "dashboard").split(",").map((r) => r.trim());
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** The client, running its statements one after another, each measured; `rows` lists them. */
function attributing(ch: ClickHouseClient) {
  const rows: string[][] = [];
  let queue = Promise.resolve();
  const client = new Proxy(ch, {
    get(target, prop, receiver) {
      if (prop !== "query") {
        return Reflect.get(target, prop, receiver);
      }
      return (params: Parameters<ClickHouseClient["query"]>[0]) => {
        const run = queue.then(async () => {
          let body: unknown;
          const t0 = performance.now();
          const read = await readBy(ch, async () => {
            const rs = await target.query(params);
            body = await rs.json();
          });
          const ms = Math.round(performance.now() - t0);
          const text = params.query.replace(/\s+/g, " ").trim().slice(0, 110);
          rows.push([text, read.rows.toLocaleString("en"), (read.bytes / 1e6).toFixed(1), String(ms)]);
          return { json: async () => body };
        });
        queue = run.then(
          () => undefined,
          () => undefined,
        );
        return run;
      };
    },
  });
  return { client, rows };
}

await withBenchStack("dashboard-rows", async ({ stack, dir }) => {
  const saved = JSON.parse(await readFile(join(dir, "bench-analytics.json"), "utf8")) as {
    projectId: string;
  };
  const ch = createClient({
    url: stack.clickhouse.url,
    username: stack.clickhouse.user,
    password: stack.clickhouse.password,
    request_timeout: 600_000,
  });
  const now = Date.now();
  const w = windowOf(DAYS, now);
  // The heatmap and its cell over 7 days, as bench:analytics measures them.
  const w7 = windowOf(Math.min(DAYS, 7), now);
  const p = saved.projectId;
  const compared = { baseline: "1.24", candidate: "1.25" };
  const map = { mapId: "maps/desert_outpost", cellSize: 25, includeZ: false } as const;
  const openDays = windowOf(2, READS.includes("verdicts_open") ? await lastSessionDay(ch, p) : now);
  const reads: Record<string, (c: ClickHouseClient) => Promise<unknown>> = {
    dashboard: (c) => Promise.all([dashboardDistincts(c, p, w, now), dashboardTotals(c, p, w)]),
    retention: (c) => playerRetentionCohorts(c, p, w),
    compare: (c) => withVerdicts(c, p, w, compared, compareBuilds(c, p, w, compared)),
    cell: (c) =>
      cellDrilldown(c, p, w7, { mapId: map.mapId, cellSize: 25, x: 0, y: 0, metric: "frame_time" }),
    tails: (c) => heatmapCells(c, p, w7, { ...map, tails: true }),
    // The sessions' verdicts of the two compared builds per platform (builds/regressions' third read).
    verdicts: (c) => verdictFamilies(c, p, w, { builds: ["1.24", "1.25"], key: "platform" }),
    // What a live project's open days (today, yesterday: never stored) add to `verdicts`: the same read
    // over the last two days holding the builds' sessions, from session_values alone.
    verdicts_open: (c) =>
      verdictFamilies(c, p, openDays, { builds: ["1.24", "1.25"], key: "platform" }, false),
  };
  for (const name of READS) {
    const read = reads[name];
    if (read === undefined) {
      throw new Error(`BENCH_READS: unknown read ${name} (${Object.keys(reads).join(", ")})`);
    }
    // Once to warm the caches, then measured RUNS times; each statement's median.
    await read(ch);
    const byStatement = new Map<string, { rows: string; mb: string; ms: number[] }>();
    const totals: number[] = [];
    let total = { rows: 0, bytes: 0 };
    for (let i = 0; i < RUNS; i++) {
      const a = attributing(ch);
      const t0 = performance.now();
      total = await readBy(ch, async () => {
        await read(a.client);
      });
      totals.push(performance.now() - t0);
      for (const [text, rows, mb, ms] of a.rows) {
        const seen = byStatement.get(text as string) ?? { rows: rows as string, mb: mb as string, ms: [] };
        seen.ms.push(Number(ms));
        byStatement.set(text as string, seen);
      }
    }
    console.log(`\n${name} (${DAYS} days; statements one after another)`);
    printTable(
      ["statement", "rows read", "MB read", "median ms"],
      [...byStatement].map(([text, r]) => [text, r.rows, r.mb, String(median(r.ms))]),
    );
    console.log(
      `total: ${total.rows.toLocaleString("en")} rows, ${(total.bytes / 1e6).toFixed(1)} MB, median ${Math.round(median(totals))} ms`,
    );
  }
  await ch.close();
});

/** The last day holding session_values rows of the compared builds, as the ms of its noon. */
async function lastSessionDay(ch: ClickHouseClient, projectId: string): Promise<number> {
  const rs = await ch.query({
    query: `SELECT toString(max(day)) AS day FROM telemetry.session_values
      WHERE project_id = {p:UUID} AND build_id IN ('1.24', '1.25')`,
    query_params: { p: projectId },
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ day: string }>();
  return Date.parse(`${row?.day ?? "1970-01-01"}T12:00:00Z`);
}
