// Writes at volume: one player's erasure and one full export of the bench project,
// timed over HTTP on the data `bench:analytics` loaded into a kept dir (BENCH_KEEP_DIR, required).
// BENCH_PLAYER names the player (default: a typical one, first seen halfway through the span: the
// generator numbers players in first-seen order, analytics-data.ts);
// BENCH_EXPORT_FORMAT the export's format (ndjson by default); BENCH_EXPORT_MAX_S how long to wait;
// BENCH_WRITES=export or =erasure runs only that one (both by default). While the export runs, the
// local workerd's open file descriptors are sampled from /proc: their maximum, and what they were then.
import { readdir, readFile, readlink } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { createKey } from "../../workers/api/bootstrap.js";
import { clickhouseQuery } from "../local/clickhouse-http.js";
import { expected, type LoadPlan } from "./analytics-data.js";
import { withBenchStack } from "./stack.js";

const PORT = Number(process.env.BENCH_PORT ?? 8798);
const BASE = `http://127.0.0.1:${PORT}/api`;
const FORMAT = process.env.BENCH_EXPORT_FORMAT ?? "ndjson";
const EXPORT_MAX_MS = Number(process.env.BENCH_EXPORT_MAX_S ?? 1800) * 1000;
const WRITES = process.env.BENCH_WRITES ?? "all";
if (!["all", "export", "erasure"].includes(WRITES)) {
  throw new Error(`BENCH_WRITES=${WRITES}: all, export or erasure`);
}

if (!process.env.BENCH_KEEP_DIR) {
  throw new Error("BENCH_KEEP_DIR: the dir bench:analytics loaded (this bench erases from it)");
}

/** What a descriptor points to, by kind: socket, pipe, anon_inode:[eventfd], or a file's directory. */
function fdKind(target: string): string {
  const kind = /^(socket|pipe|anon_inode):/.exec(target);
  if (kind) {
    return kind[1] === "anon_inode" ? target.replace(/:\[?(\w+).*$/, ":$1") : (kind[1] as string);
  }
  return target.replace(/\/[^/]*$/, "/*");
}

/**
 * The wrangler child's workerd processes, by process group from /proc/<pid>/stat (not the cmdline, whose
 * read waits on a busy process's memory lock: another engine's).
 */
async function workerdPids(wrangler: number): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    const stat = /^\d+$/.test(name) ? await readFile(`/proc/${name}/stat`, "utf8").catch(() => "") : "";
    const close = stat.lastIndexOf(")");
    if (
      stat.slice(stat.indexOf("(") + 1, close) === "workerd" &&
      stat.slice(close + 2).split(" ")[2] === String(wrangler)
    ) {
      pids.push(Number(name));
    }
  }
  return pids;
}

/** The open descriptors of those processes, counted by kind. */
async function workerdFds(pids: number[]): Promise<Map<string, number>> {
  const kinds = new Map<string, number>();
  for (const pid of pids) {
    for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
      const kind = fdKind(await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "gone"));
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
  }
  return kinds;
}

/** CPU time (user + system, ms) of those processes so far: /proc/<pid>/stat fields 14 and 15, in ticks of 10 ms. */
async function cpuMs(pids: number[]): Promise<number> {
  let ticks = 0;
  for (const pid of pids) {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks += Number(rest[11] ?? 0) + Number(rest[12] ?? 0);
  }
  return ticks * 10;
}

const total = (kinds: Map<string, number>) => [...kinds.values()].reduce((a, b) => a + b, 0);

async function main(): Promise<Record<string, number | string>> {
  return withBenchStack("writes", async ({ stack, serve, dir, reused }) => {
    if (!reused) {
      throw new Error(`${dir} holds no loaded stack`);
    }
    const { projectId, plan } = JSON.parse(await readFile(join(dir, "bench-analytics.json"), "utf8")) as {
      projectId: string;
      plan: LoadPlan;
    };
    // A dir of the former generator (no profile in its plan) had player-500001 halfway down its ids.
    const half = () => {
      const e = expected({ ...plan, otherEvents: 0 });
      return `player-${Math.floor((e.newPlayersPerDay * e.spanDays) / 2) + 1}`;
    };
    const PLAYER = process.env.BENCH_PLAYER ?? (plan.profile ? half() : "player-500001");
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
    const wrangler = (await serve(PORT, BASE)).pid ?? -1;
    const workerd = await workerdPids(wrangler);
    const headers = { "X-API-Key": key.key, "Content-Type": "application/json" };
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${BASE}/v1/projects/${projectId}/${path}`, { ...init, headers });
    const result: Record<string, number | string> = { events, playerEvents, playerDays };

    if (WRITES !== "export") {
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
      Object.assign(result, {
        erasureStatus: erased.status,
        erasureAnswerMs: answerMs,
        erasureMs,
        erasureRowsRead,
      });
    }
    if (WRITES === "erasure") {
      return result;
    }

    const fdsBefore = total(await workerdFds(workerd));
    // Where the CPU goes, whatever the machine's load: workerd (the consumer, the local R2) and this
    // process (ClickHouse, embedded, and its HTTP stand-in).
    const workerdCpu0 = await cpuMs(workerd);
    const engineCpu0 = process.cpuUsage();
    const load = [loadavg()[0] as number];
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
      rowsWritten: number | null;
      error: string | null;
      createdAt?: string;
      startedAt?: string | null;
      completedAt?: string | null;
    };
    let job: Job = {
      status: "queued",
      rowCount: null,
      sizeBytes: null,
      bytesWritten: null,
      rowsWritten: null,
      error: null,
    };
    let fdsMax = new Map<string, number>();
    let lastLog = 0;
    while (!["completed", "failed"].includes(job.status) && performance.now() - t1 < EXPORT_MAX_MS) {
      // A poll every 2 s, as a client would: the export's own progress is what is measured. The
      // descriptors are sampled four times in between.
      for (let i = 0; i < 4; i++) {
        await new Promise((r) => setTimeout(r, 500));
        const fds = await workerdFds(workerd);
        if (total(fds) > total(fdsMax)) {
          fdsMax = fds;
        }
      }
      job = ((await (await api(`exports/${exportId}`)).json()) as { data: Job }).data;
      load.push(loadavg()[0] as number);
      if (performance.now() - lastLog > 30_000) {
        lastLog = performance.now();
        const s = (performance.now() - t1) / 1000;
        console.log(
          `  ${s.toFixed(0)} s: ${job.status}, ${job.rowsWritten ?? "?"} rows, ${((job.bytesWritten ?? 0) / 1e6).toFixed(0)} MB; workerd fds max ${total(fdsMax)}: ${[
            ...fdsMax,
          ]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 4)
            .map(([k, n]) => `${k} ${n}`)
            .join(", ")}`,
        );
      }
    }
    const polledMs = Math.round(performance.now() - t1);
    // The export's own clock (created to completed): a poll answered late does not lengthen it.
    const exportMs =
      job.completedAt && job.createdAt ? Date.parse(job.completedAt) - Date.parse(job.createdAt) : polledMs;
    const bytes = job.sizeBytes ?? job.bytesWritten ?? 0;
    const rows = job.rowCount ?? job.rowsWritten ?? 0;
    const fdsAfter = total(await workerdFds(workerd));
    const mb = Math.max(1, (job.sizeBytes ?? job.bytesWritten ?? 0) / 1e6);
    const workerdCpuMsPerMB = Number((((await cpuMs(workerd)) - workerdCpu0) / mb).toFixed(2));
    const engine = process.cpuUsage(engineCpu0);
    const engineCpuMsPerMB = Number(((engine.user + engine.system) / 1000 / mb).toFixed(2));
    const kinds = [...fdsMax].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`);
    console.log(
      `export (${FORMAT}, 90 days): ${job.status} after ${exportMs} ms (seen by the poll after ${polledMs}), ${rows} rows, ${bytes} bytes` +
        ` (${(bytes / 1e6 / (exportMs / 1000)).toFixed(1)} MB/s, ${Math.round(rows / (exportMs / 1000))} events/s)` +
        `${job.error ? `; ${job.error}` : ""}`,
    );
    console.log(
      `CPU per MB: workerd ${workerdCpuMsPerMB} ms, ClickHouse and its HTTP stand-in ${engineCpuMsPerMB} ms`,
    );
    console.log(
      `workerd fds: ${fdsBefore} before, max ${total(fdsMax)} (${kinds.join(", ")}), ${fdsAfter} after`,
    );
    return Object.assign(result, {
      exportStatus: job.status,
      exportMs,
      polledMs,
      exportRows: rows,
      exportBytes: bytes,
      exportMBps: Number((bytes / 1e6 / (exportMs / 1000)).toFixed(2)),
      exportEventsPerS: Math.round(rows / (exportMs / 1000)),
      workerdCpuMsPerMB,
      engineCpuMsPerMB,
      fdsBefore,
      fdsMax: total(fdsMax),
      fdsAfter,
      loadMax: Math.max(...load),
    });
  });
}

console.log(JSON.stringify(await main()));
