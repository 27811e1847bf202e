/**
 * Analytics read benchmark: `npm run bench:analytics`.
 *
 * Starts the local stack in a temp dir, loads 10M events for one project and 9M over nine others
 * inside ClickHouse, serves the Worker with wrangler dev, and times every analytics endpoint over
 * HTTP (one warm-up, then the median of 5). Beside each: the same SQL run directly with the project
 * filter, and with it removed (all 19M events), to show what the primary key saves.
 * The last line printed is one JSON object of the endpoint medians in ms.
 *
 * Env: BENCH_MAIN_EVENTS (10000000), BENCH_OTHER_EVENTS (9000000), BENCH_PORT (8797).
 */
import type { ChildProcess } from "node:child_process";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ClickHouseClient, createClient } from "@clickhouse/client-web";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { buildList } from "../../workers/analytics/builds.js";
import { compareBuilds } from "../../workers/analytics/compare.js";
import { dashboardDistincts, dashboardTotals } from "../../workers/analytics/dashboard.js";
import { funnelSteps } from "../../workers/analytics/funnels.js";
import { heatmapCells } from "../../workers/analytics/heatmap.js";
import { insightGroups, insightTotal } from "../../workers/analytics/insights.js";
import { retentionCohorts } from "../../workers/analytics/retention.js";
import { createKey, createProject, createTenant } from "../../workers/shared/bootstrap.js";
import { windowOf } from "../../workers/shared/window.js";
import { type LocalStack, startLocalStack } from "../local/stack.js";
import { startWrangler, stopWrangler, waitUntilServing } from "../local/wrangler.js";
import { loadBenchData } from "./analytics-data.js";

const MAIN_EVENTS = Number(process.env.BENCH_MAIN_EVENTS ?? 10_000_000);
const OTHER_EVENTS = Number(process.env.BENCH_OTHER_EVENTS ?? 9_000_000);
const PORT = Number(process.env.BENCH_PORT ?? 8797);
const BASE = `http://127.0.0.1:${PORT}/api`;
const RUNS = 5;

type Endpoint = "dashboard" | "heatmap" | "retention" | "funnels" | "insights" | "builds" | "compare";

/** Each endpoint's request, and the same analytics functions its handler runs. */
const ENDPOINTS: Record<
  Endpoint,
  { query: string; sql: (ch: ClickHouseClient, project: string) => Promise<unknown> }
> = {
  dashboard: {
    query: "dashboard?days=30",
    sql: (ch, p) => {
      const now = Date.now();
      const w = windowOf(30, now);
      return Promise.all([dashboardDistincts(ch, p, w, now), dashboardTotals(ch, p, w, now)]);
    },
  },
  heatmap: {
    query: "heatmap?mapId=maps/desert_outpost&cellSize=25&days=7",
    sql: (ch, p) =>
      heatmapCells(ch, p, windowOf(7, Date.now()), {
        mapId: "maps/desert_outpost",
        cellSize: 25,
        includeZ: false,
      }),
  },
  retention: {
    query: "retention?days=30",
    sql: (ch, p) => retentionCohorts(ch, p, windowOf(30, Date.now())),
  },
  funnels: {
    query: "funnels?steps=match_start,level_up,match_end&window=86400&days=30",
    sql: (ch, p) =>
      funnelSteps(ch, p, windowOf(30, Date.now()), ["match_start", "level_up", "match_end"], 86400),
  },
  insights: {
    query: "insights?metric=unique_players&groupBy=day&days=30&limit=10",
    sql: (ch, p) => {
      const w = windowOf(30, Date.now());
      const q = { metric: "unique_players", groupBy: "day", limit: 10 } as const;
      return Promise.all([insightGroups(ch, p, w, q), insightTotal(ch, p, w, q)]);
    },
  },
  builds: {
    // fresh=1: the aggregation itself, not the cache.
    query: "builds?days=30&fresh=1",
    sql: (ch, p) => buildList(ch, p, windowOf(30, Date.now())),
  },
  compare: {
    // Two of the generated builds (one released every three days); fresh=1 as for builds.
    query: "builds/compare?baseline=1.24&candidate=1.25&days=30&fresh=1",
    sql: (ch, p) => compareBuilds(ch, p, windowOf(30, Date.now()), { baseline: "1.24", candidate: "1.25" }),
  },
};

/** The same client with every project predicate turned into TRUE: the query over all projects. */
function withoutProjectFilter(ch: ClickHouseClient): ClickHouseClient {
  return new Proxy(ch, {
    get(target, prop, receiver) {
      if (prop === "query") {
        return (params: Parameters<ClickHouseClient["query"]>[0]) => {
          const query = params.query.replaceAll("project_id = {projectId:UUID}", "1 = 1");
          // A query spelling its project filter otherwise would silently stay filtered.
          if (query === params.query) {
            throw new Error(`no project filter to remove in: ${params.query}`);
          }
          return target.query({ ...params, query });
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

async function medianMs(fn: () => Promise<unknown>): Promise<number> {
  await fn(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return Math.round((times[Math.floor(RUNS / 2)] as number) * 10) / 10;
}

async function seedProject(databaseUrl: string) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const db = drizzle({ client: pool });
    const tenant = await createTenant(db, "Bench Studio", "enterprise");
    const project = await createProject(db, tenant.id, "Bench Game");
    const key = await createKey(db, project.id, "read");
    return { projectId: project.id, key: key.key };
  } finally {
    await pool.end();
  }
}

async function main(): Promise<Record<Endpoint, number>> {
  const dir = await mkdtemp(join(tmpdir(), "bench-analytics-"));
  // As root, embedded Postgres runs as the postgres user, which must be able to enter the directory.
  await chmod(dir, 0o755);
  let stack: LocalStack | undefined;
  let worker: ChildProcess | undefined;
  try {
    stack = await startLocalStack({ dataDir: dir });
    const { projectId, key } = await seedProject(stack.databaseUrl);
    const others = Array.from({ length: 9 }, () => crypto.randomUUID());
    console.log(`loading ${MAIN_EVENTS.toLocaleString("en")} + ${OTHER_EVENTS.toLocaleString("en")} events…`);
    const seconds = await loadBenchData(
      stack.clickhouse,
      { mainProject: projectId, mainEvents: MAIN_EVENTS, otherProjects: others, otherEvents: OTHER_EVENTS },
      (line) => process.stdout.write(`\r${line}   `),
    );
    console.log(`\nloaded in ${seconds.toFixed(1)} s`);

    worker = startWrangler(stack, { port: PORT, persistTo: join(dir, "wrangler") });
    await waitUntilServing(worker, BASE);
    const ch = createClient({
      url: stack.clickhouse.url,
      username: stack.clickhouse.user,
      password: stack.clickhouse.password,
    });
    const unfiltered = withoutProjectFilter(ch);

    const http = (query: string) => async () => {
      const res = await fetch(`${BASE}/v1/projects/${projectId}/${query}`, { headers: { "X-API-Key": key } });
      const body = await res.text();
      if (res.status !== 200) {
        throw new Error(`${query}: ${res.status} ${body}`);
      }
    };
    const medians = {} as Record<Endpoint, number>;
    const rows: string[][] = [];
    for (const [name, e] of Object.entries(ENDPOINTS) as Array<[Endpoint, (typeof ENDPOINTS)[Endpoint]]>) {
      medians[name] = await medianMs(http(e.query));
      const direct = await medianMs(() => e.sql(ch, projectId));
      const all = await medianMs(() => e.sql(unfiltered, projectId));
      rows.push([name, String(medians[name]), String(direct), String(all), e.query]);
    }
    const cachedBuilds = await medianMs(http("builds?days=30"));
    rows.push(["builds (cached)", String(cachedBuilds), "", "", "builds?days=30"]);
    // A repeated step name runs windowFunnel over one row per (event, step position) instead.
    const repeated = "funnels?steps=match_start,level_up,level_up,match_end&window=86400&days=30";
    rows.push(["funnels (repeated step)", String(await medianMs(http(repeated))), "", "", repeated]);

    const header = ["endpoint", "HTTP median ms", "SQL, project", "SQL, no project filter", "request"];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
    const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
    console.log(line(header));
    for (const r of rows) {
      console.log(line(r));
    }
    await ch.close();
    return medians;
  } finally {
    if (worker) {
      await stopWrangler(worker);
    }
    await stack?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

// Printed after everything has shut down, so it stays the last line.
console.log(JSON.stringify(await main()));
