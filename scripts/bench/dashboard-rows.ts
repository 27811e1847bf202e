// Where the dashboard's rows go: each statement its functions run (dashboardDistincts,
// dashboardTotals), one at a time, with the rows and bytes ClickHouse read for it (readBy) and its
// milliseconds, on a kept bench dir (BENCH_KEEP_DIR, loaded by bench:analytics):
//   BENCH_KEEP_DIR=/tmp/dash-10m BENCH_DAYS=30 node --import tsx scripts/bench/dashboard-rows.ts
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type ClickHouseClient, createClient } from "@clickhouse/client-web";
import { dashboardDistincts, dashboardTotals } from "../../workers/api/analytics/dashboard.js";
import { windowOf } from "../../workers/api/window.js";
import { readBy } from "./rows-read.js";
import { withBenchStack } from "./stack.js";
import { printTable } from "./table.js";

const DAYS = Number(process.env.BENCH_DAYS ?? 30);

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
  // Once to warm the caches, then measured.
  await Promise.all([
    dashboardDistincts(ch, saved.projectId, w, now),
    dashboardTotals(ch, saved.projectId, w),
  ]);
  const a = attributing(ch);
  const total = await readBy(ch, async () => {
    const [d, t] = await Promise.all([
      dashboardDistincts(a.client, saved.projectId, w, now),
      dashboardTotals(a.client, saved.projectId, w),
    ]);
    console.log(JSON.stringify({ mau: d.mau, dau: d.dau, sessions: d.sessions, events: t.events }));
  });
  printTable(["statement", "rows read", "MB read", "ms"], a.rows);
  console.log(`total: ${total.rows.toLocaleString("en")} rows, ${(total.bytes / 1e6).toFixed(1)} MB`);
  await ch.close();
});
