// Funnels before and after their anchor hours are stored (workers/api/analytics/funnel-anchors.ts), on a
// kept bench dir (BENCH_KEEP_DIR, loaded by bench:analytics): the read with nothing stored (all live, as a
// definition read for the first time), the job storing every closed hour of the last 90 days (timed), and
// the read again. Prints ms (median of BENCH_RUNS after a warm-up) and the rows and bytes ClickHouse read
// (its own counters), and checks both answers are equal. Applies the migrations to the dir first.
//
//   BENCH_KEEP_DIR=<copy of a kept dir> node --import tsx scripts/bench/funnel-anchors.ts
//
// Only ClickHouse is started (chdb behind its HTTP interface); no Worker: the functions the route and the
// job call run here. Never point it at a dir you want unchanged: the migration and the job write to it.
import { createClient } from "@clickhouse/client-web";
import { storeFunnelHours } from "../../workers/api/analytics/funnel-anchors.js";
import { funnelSteps } from "../../workers/api/analytics/funnels.js";
import { windowOf } from "../../workers/api/window.js";
import { startClickHouseHttp } from "../local/clickhouse/server.js";
import { migrateClickHouse } from "../migrate.js";
import { readBy } from "./rows-read.js";

const DIR = process.env.BENCH_KEEP_DIR;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const DAYS = Number(process.env.BENCH_DAYS ?? 30);
const STEPS = (process.env.BENCH_STEPS ?? "match_start,level_up,match_end").split(",");
const WINDOWS = (process.env.BENCH_WINDOWS ?? "86400,604800").split(",").map(Number);

async function median(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return Math.round(times[Math.floor(times.length / 2)] ?? 0);
}

async function main() {
  if (!DIR) {
    throw new Error("BENCH_KEEP_DIR: a kept bench dir (a copy: this writes to it)");
  }
  const password = crypto.randomUUID();
  const server = await startClickHouseHttp({ dataDir: `${DIR}/clickhouse`, user: "default", password });
  try {
    const t0 = performance.now();
    const applied = await migrateClickHouse({ url: server.url, user: "default", password });
    console.log(`migrations ${applied.join(", ") || "(none)"} in ${Math.round(performance.now() - t0)} ms`);
    const ch = createClient({ url: server.url, username: "default", password, request_timeout: 600_000 });
    const rs = await ch.query({
      query:
        "SELECT toString(project_id) AS p FROM telemetry.batch_totals GROUP BY project_id ORDER BY sum(events) DESC LIMIT 1",
      format: "JSONEachRow",
    });
    const project = (await rs.json<{ p: string }>())[0]?.p ?? "";
    const now = Date.now();
    const w = windowOf(DAYS, now);
    console.log(
      `project ${project}, ${DAYS} days, steps ${STEPS.join(",")}, now ${new Date(now).toISOString()}`,
    );
    for (const windowS of WINDOWS) {
      const read = () => funnelSteps(ch, project, w, STEPS, windowS);
      const before = await read();
      const beforeMs = await median(read);
      const beforeRead = await readBy(ch, read);
      const s0 = performance.now();
      let messages = 0;
      let stored = 0;
      for (;;) {
        const out = await storeFunnelHours(
          ch,
          { projectId: project, steps: STEPS, windowS, runAt: now },
          -Infinity,
          0,
        );
        messages++;
        stored += out.stored;
        if (!out.more) {
          break;
        }
      }
      const storeMs = Math.round(performance.now() - s0);
      const after = await read();
      const afterMs = await median(read);
      const afterRead = await readBy(ch, read);
      const equal = JSON.stringify(before) === JSON.stringify(after);
      console.log(
        `window ${windowS} s: before ${beforeMs} ms, ${beforeRead.rows.toLocaleString("en")} rows, ${(beforeRead.bytes / 1e6).toFixed(1)} MB` +
          ` | job ${stored} hours in ${messages} messages, ${storeMs} ms` +
          ` | after ${afterMs} ms, ${afterRead.rows.toLocaleString("en")} rows, ${(afterRead.bytes / 1e6).toFixed(1)} MB` +
          ` | equal ${equal} | counts ${after.map((s) => s.count).join(",")}`,
      );
      if (!equal) {
        console.log("before", JSON.stringify(before), "after", JSON.stringify(after));
        process.exitCode = 1;
      }
    }
  } finally {
    await server.close();
  }
}

await main();
