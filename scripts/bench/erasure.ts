// One player's erasure, statement by statement, on the data `bench:analytics` loaded into a kept dir
// (BENCH_KEEP_DIR, required; this bench erases from it): the rows ClickHouse read and the time of each
// step of workers/api/erasure (the sessions' lookup, each table's deletes, the rollups' rebuild), run
// from Node against the dir's ClickHouse alone, so the counters are the erasure's. bench:writes times the
// same erasure end to end over HTTP; this one says where its rows go. BENCH_PLAYER names the player
// (default: the player with the most days, fewest events first, of the project).
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { createClient } from "@clickhouse/client-web";
import { erasePlayer } from "../../workers/api/erasure/erase.js";
import { stageKeys } from "../../workers/api/erasure/keys.js";
import { playerSessions } from "../../workers/api/erasure/steps.js";
import { startClickHouseHttp } from "../local/clickhouse-http.js";
import { migrateClickHouse } from "../migrate.js";
import { longFetch } from "./long-fetch.js";
import { printTable } from "./table.js";

const DIR = process.env.BENCH_KEEP_DIR;
if (!DIR) {
  throw new Error("BENCH_KEEP_DIR: the dir bench:analytics loaded (this bench erases from it)");
}

async function main() {
  const { projectId } = JSON.parse(await readFile(join(DIR as string, "bench-analytics.json"), "utf8")) as {
    projectId: string;
  };
  const password = crypto.randomUUID();
  const server = await startClickHouseHttp({
    dataDir: join(DIR as string, "clickhouse"),
    user: "default",
    password,
  });
  try {
    await migrateClickHouse({ url: server.url, user: "default", password });
    const ch = createClient({
      url: server.url,
      username: "default",
      password,
      request_timeout: 3_600_000,
      fetch: longFetch,
    });
    const scalar = async (query: string, params: Record<string, unknown> = {}) => {
      const rs = await ch.query({ query, query_params: params, format: "JSONEachRow" });
      const [row] = await rs.json<Record<string, unknown>>();
      return row === undefined ? undefined : Object.values(row)[0];
    };
    // Migrations may have left background mutations (an index materialized over stored rows): the
    // erasure is measured once they are done, as it would run a day after the upgrade.
    while (Number(await scalar("SELECT count() FROM system.mutations WHERE NOT is_done")) > 0) {
      await new Promise((r) => setTimeout(r, 1000));
    }
    const player =
      process.env.BENCH_PLAYER ??
      String(
        await scalar(
          `SELECT player FROM telemetry.events WHERE project_id = {p:UUID}
            GROUP BY player ORDER BY uniqExact(toDate(timestamp)) DESC, count(), player LIMIT 1`,
          { p: projectId },
        ),
      );
    const events = Number(
      await scalar("SELECT count() FROM telemetry.events WHERE project_id = {p:UUID}", { p: projectId }),
    );
    const load = [loadavg()[0] as number];
    // ClickHouse's own counter of rows read (rows-read.ts: chdb has no query_log); nothing else queries
    // this server. Reading it reads a few hundred rows of system.events, left in.
    const selected = async () =>
      Number(await scalar("SELECT value FROM system.events WHERE event = 'SelectedRows'"));
    const rows: string[][] = [];
    const t0 = performance.now();
    let mark = { rows: await selected(), ms: t0 };
    const step = async (name: string) => {
      const now = { rows: await selected(), ms: performance.now() };
      rows.push([name, (now.rows - mark.rows).toLocaleString("en"), String(Math.round(now.ms - mark.ms))]);
      mark = { rows: await selected(), ms: performance.now() };
    };
    const bound = await playerSessions(ch, projectId, player);
    await step("the sessions' lookup (playerSessions)");
    // BENCH_ERASURE_WHOLE_DAYS=1: the rebuild of the player's days whole, as an erasure recorded before
    // the keys were staged runs it; else the keys are staged and only their rows rebuilt (keys.ts).
    const whole = process.env.BENCH_ERASURE_WHOLE_DAYS === "1";
    const erasure = crypto.randomUUID();
    if (!whole) {
      await stageKeys(ch, erasure, bound);
      await step("staging the keys (stageKeys)");
    }
    const today = new Date().toISOString().slice(0, 10);
    let seen = 0;
    const done = await erasePlayer(
      ch,
      { ...bound, within: [...new Set([...bound.days, today])], ...(whole ? {} : { erasure }) },
      [],
      async (d) => {
        const steps = d.slice(seen);
        seen = d.length;
        await step(
          steps.length === 1 ? `delete from ${steps[0]?.table}` : `rebuild of ${steps.length} rollups`,
        );
      },
    );
    const ms = Math.round(performance.now() - t0);
    load.push(loadavg()[0] as number);
    const total = rows.reduce((sum, r) => sum + Number((r[1] ?? "0").replaceAll(",", "")), 0);
    rows.push(["all", total.toLocaleString("en"), String(ms)]);
    console.log(
      `${player}: ${bound.days.length} days, ${bound.identified.length} identified sessions, ${done.find((d) => d.table === "telemetry.events")?.rowsRemoved ?? 0} events removed`,
    );
    printTable(["step", "rows read", "ms"], rows);
    console.log(`load average ${load.map((l) => l.toFixed(1)).join(" → ")}`);
    const result = {
      events,
      player,
      rebuild: whole ? "whole days" : "staged keys",
      days: bound.days.length,
      steps: Object.fromEntries(rows.map((r) => [r[0], Number((r[1] ?? "0").replaceAll(",", ""))])),
      rowsRead: total,
      ms,
      load: Math.max(...load),
    };
    await ch.close();
    return result;
  } finally {
    await server.close();
  }
}

console.log(JSON.stringify(await main()));
