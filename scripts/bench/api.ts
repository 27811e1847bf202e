import { readdir, readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import autocannon from "autocannon";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { createKey, createProject, createTenant } from "../../workers/api/bootstrap.js";
import { withBenchStack } from "./stack.js";

const SECONDS = Number(process.env.BENCH_API_SECONDS ?? 10);
const PORT = Number(process.env.BENCH_API_PORT ?? 8798);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const CONNECTIONS = [1, 10] as const;
/** Linux reports process CPU time in clock ticks of 1/100 s (getconf CLK_TCK). */
const MS_PER_TICK = 10;

type Run = {
  endpoint: string;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  cpuMsPerRequest: number;
  cpuMs: number;
  load: number;
};

/** Every workerd process in the wrangler child's process group (wrangler starts it detached). */
async function workerdPids(group: number): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) {
      continue;
    }
    const stat = await readStat(Number(name));
    if (stat && stat.comm === "workerd" && stat.pgrp === group) {
      pids.push(Number(name));
    }
  }
  return pids;
}

async function readStat(pid: number): Promise<{ comm: string; pgrp: number; ticks: number } | null> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // comm is in parentheses and may hold spaces; the fields after it are space-separated.
  const close = text.lastIndexOf(")");
  const comm = text.slice(text.indexOf("(") + 1, close);
  const rest = text.slice(close + 2).split(" ");
  // rest[0] is field 3 (state): pgrp is field 5, utime 14, stime 15.
  return { comm, pgrp: Number(rest[2]), ticks: Number(rest[11]) + Number(rest[12]) };
}

async function cpuTicks(pids: number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) {
    total += (await readStat(pid))?.ticks ?? 0;
  }
  return total;
}

async function seed(databaseUrl: string) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const db = drizzle({ client: pool });
    // Enterprise: 250,000 requests/hour, so the runs below never meet the plan's limit.
    const tenant = await createTenant(db, "Bench API Studio", "enterprise");
    const project = await createProject(db, tenant.id, "Bench API Game");
    await createProject(db, tenant.id, "Bench API Sibling");
    const key = await createKey(db, project.id, "read");
    return { projectId: project.id, key: key.key };
  } finally {
    await pool.end();
  }
}

async function expectOk(url: string, key: string): Promise<void> {
  const res = await fetch(url, { headers: { "X-API-Key": key } });
  const body = await res.text();
  if (res.status !== 200) {
    throw new Error(`${url}: ${res.status} ${body}`);
  }
}

async function drive(url: string, key: string, connections: number, pids: number[], endpoint: string) {
  const before = await cpuTicks(pids);
  const result = await autocannon({
    url,
    connections,
    duration: SECONDS,
    headers: { "X-API-Key": key },
  });
  const cpuMs = ((await cpuTicks(pids)) - before) * MS_PER_TICK;
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(
      `${endpoint} at ${connections}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  const requests = result.requests.total;
  return {
    endpoint,
    connections,
    rps: Math.round(requests / (result.duration || SECONDS)),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests,
    cpuMs,
    cpuMsPerRequest: Math.round((cpuMs / Math.max(1, requests)) * 100) / 100,
    load: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  } satisfies Run;
}

async function main() {
  return withBenchStack("api", async ({ stack, serve }) => {
    const { projectId, key } = await seed(stack.databaseUrl);
    const worker = await serve(PORT, ORIGIN);
    const pids = await workerdPids(worker.pid ?? -1);
    if (pids.length === 0) {
      throw new Error("no workerd process found in wrangler's process group");
    }
    const endpoints = {
      projects: `${ORIGIN}/api/v1/projects`,
      status: `${ORIGIN}/api/v1/projects/${projectId}/status`,
      builds_cached: `${ORIGIN}/api/v1/projects/${projectId}/builds?days=30`,
    };
    // Warm-up: every path once (the builds answer is now in the cache), then a short burst.
    for (const url of Object.values(endpoints)) {
      await expectOk(url, key);
    }
    await autocannon({ url: endpoints.projects, connections: 2, duration: 2, headers: { "X-API-Key": key } });

    const runs: Run[] = [];
    for (const [endpoint, url] of Object.entries(endpoints)) {
      for (const connections of CONNECTIONS) {
        const run = await drive(url, key, connections, pids, endpoint);
        runs.push(run);
        console.log(
          `${endpoint} @${connections}: ${run.rps} req/s, p50 ${run.p50} ms, cpu ${run.cpuMsPerRequest} ms/req, load ${run.load}`,
        );
      }
    }

    const header = ["endpoint", "conn", "req/s", "p50 ms", "p99 ms", "requests", "CPU ms/req", "load 1m"];
    const rows = runs.map((r) =>
      [r.endpoint, r.connections, r.rps, r.p50, r.p99, r.requests, r.cpuMsPerRequest, r.load].map(String),
    );
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
    const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
    console.log(
      `\n${SECONDS} s per run, ${pids.length} workerd process(es), latencies are medians (p50) and p99`,
    );
    console.log(line(header));
    for (const r of rows) {
      console.log(line(r));
    }
    const at10 = (endpoint: string) => runs.find((r) => r.endpoint === endpoint && r.connections === 10);
    const totalCpu = runs.reduce((s, r) => s + r.cpuMs, 0);
    const totalRequests = runs.reduce((s, r) => s + r.requests, 0);
    return {
      projects_rps: at10("projects")?.rps ?? 0,
      projects_p50_ms: at10("projects")?.p50 ?? 0,
      projects_p99_ms: at10("projects")?.p99 ?? 0,
      status_rps: at10("status")?.rps ?? 0,
      status_p50_ms: at10("status")?.p50 ?? 0,
      builds_cached_p50_ms: at10("builds_cached")?.p50 ?? 0,
      worker_cpu_ms_per_request: Math.round((totalCpu / Math.max(1, totalRequests)) * 100) / 100,
    };
  });
}

// Printed after everything has shut down, so it stays the last line.
console.log(JSON.stringify(await main()));
