// Writes at volume (issue 34 item 5): one player's erasure and one full export of the bench project,
// timed over HTTP on the data `bench:analytics` loaded into a kept dir (BENCH_KEEP_DIR, required).
// BENCH_PLAYER names the player (default: a typical one, halfway down the generator's skewed ids);
// BENCH_EXPORT_FORMAT the export's format (ndjson by default); BENCH_EXPORT_MAX_S how long to wait.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { createKey } from "../../workers/api/bootstrap.js";
import { clickhouseQuery } from "../local/clickhouse-http.js";
import { withBenchStack } from "./stack.js";

const PORT = Number(process.env.BENCH_PORT ?? 8798);
const BASE = `http://127.0.0.1:${PORT}/api`;
const PLAYER = process.env.BENCH_PLAYER ?? "player-500001";
const FORMAT = process.env.BENCH_EXPORT_FORMAT ?? "ndjson";
const EXPORT_MAX_MS = Number(process.env.BENCH_EXPORT_MAX_S ?? 1800) * 1000;

if (!process.env.BENCH_KEEP_DIR) {
  throw new Error("BENCH_KEEP_DIR: the dir bench:analytics loaded (this bench erases from it)");
}

async function main(): Promise<Record<string, number | string>> {
  return withBenchStack("writes", async ({ stack, serve, dir, reused }) => {
    if (!reused) {
      throw new Error(`${dir} holds no loaded stack`);
    }
    const { projectId } = JSON.parse(await readFile(join(dir, "bench-analytics.json"), "utf8")) as {
      projectId: string;
    };
    const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 1 });
    const key = await createKey(drizzle({ client: pool }), projectId, "full", "bench writes").finally(() =>
      pool.end(),
    );
    const t = stack.clickhouse;
    const scalar = async (sql: string, params: Record<string, string> = {}) =>
      (await clickhouseQuery(t.url, t, `${sql} FORMAT TSV`, { p: projectId, ...params })).trim();
    const events = Number(await scalar("SELECT count() FROM telemetry.events WHERE project_id = {p:UUID}"));
    const playerEvents = Number(
      await scalar(
        "SELECT count() FROM telemetry.events WHERE project_id = {p:UUID} AND player_id = {player:String}",
        { player: PLAYER },
      ),
    );
    const playerDays = Number(
      await scalar(
        "SELECT uniqExact(toDate(timestamp)) FROM telemetry.events WHERE project_id = {p:UUID} AND player_id = {player:String}",
        { player: PLAYER },
      ),
    );
    console.log(
      `project: ${events.toLocaleString("en")} events; ${PLAYER}: ${playerEvents} events on ${playerDays} days`,
    );
    await serve(PORT, BASE);
    const headers = { "X-API-Key": key.key, "Content-Type": "application/json" };
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${BASE}/v1/projects/${projectId}/${path}`, { ...init, headers });

    // ClickHouse's own counters of rows read (rows-read.ts): nothing else queries the bench's server.
    const selectedRows = async () =>
      Number(await scalar("SELECT sum(value) FROM system.events WHERE event = 'SelectedRows'"));
    const rows0 = await selectedRows();
    const t0 = performance.now();
    const erased = await api("erasures", { method: "POST", body: JSON.stringify({ playerId: PLAYER }) });
    const answerMs = Math.round(performance.now() - t0);
    type Erasure = { id: string; status: string; rowsRemoved: number };
    let erasure = ((await erased.json()) as { data: Erasure }).data;
    // 202: the erasure runs on its queue; poll it as a client would, every second.
    while (erased.status === 202 && erasure.status === "running") {
      await new Promise((r) => setTimeout(r, 1000));
      erasure = ((await (await api(`erasures/${erasure.id}`)).json()) as { data: Erasure }).data;
    }
    const erasureMs = Math.round(performance.now() - t0);
    const erasureRowsRead = (await selectedRows()) - rows0;
    console.log(
      `erasure: HTTP ${erased.status} in ${answerMs} ms, ${erasure.status} after ${erasureMs} ms, ${erasure.rowsRemoved} events removed, ${erasureRowsRead.toLocaleString("en")} rows read`,
    );

    const t1 = performance.now();
    const created = await api("exports", {
      method: "POST",
      body: JSON.stringify({ days: 90, format: FORMAT }),
    });
    const exportId = ((await created.json()) as { data: { id: string } }).data.id;
    type Job = {
      status: string;
      rowCount: number | null;
      sizeBytes: number | null;
      bytesWritten: number | null;
    };
    let job: Job = { status: "queued", rowCount: null, sizeBytes: null, bytesWritten: null };
    while (!["completed", "failed"].includes(job.status) && performance.now() - t1 < EXPORT_MAX_MS) {
      // A poll every 2 s, as a client would: the export's own progress is what is measured.
      await new Promise((r) => setTimeout(r, 2000));
      job = ((await (await api(`exports/${exportId}`)).json()) as { data: Job }).data;
    }
    const exportMs = Math.round(performance.now() - t1);
    console.log(
      `export (${FORMAT}, 90 days): ${job.status} after ${exportMs} ms, ${job.rowCount ?? "?"} rows, ${job.sizeBytes ?? job.bytesWritten ?? "?"} bytes`,
    );
    return {
      events,
      playerEvents,
      playerDays,
      erasureStatus: erased.status,
      erasureAnswerMs: answerMs,
      erasureMs,
      erasureRowsRead,
      exportStatus: job.status,
      exportMs,
      exportRows: job.rowCount ?? -1,
      exportBytes: job.sizeBytes ?? job.bytesWritten ?? -1,
    };
  });
}

console.log(JSON.stringify(await main()));
