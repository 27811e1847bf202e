import { type ClickHouseClient, createClient } from "@clickhouse/client-web";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { buildList } from "../../workers/api/analytics/builds.js";
import { type CellQuery, cellDrilldown, cellScope } from "../../workers/api/analytics/cell.js";
import { compareBuilds } from "../../workers/api/analytics/compare.js";
import { dashboardDistincts, dashboardTotals } from "../../workers/api/analytics/dashboard.js";
import { funnelSteps } from "../../workers/api/analytics/funnels.js";
import { heatmapCells } from "../../workers/api/analytics/heatmap.js";
import { insightGroups, insightTotal } from "../../workers/api/analytics/insights.js";
import { buildRegressions } from "../../workers/api/analytics/regressions.js";
import { retentionCohorts } from "../../workers/api/analytics/retention.js";
import { createKey, createProject, createTenant } from "../../workers/api/bootstrap.js";
import { windowOf } from "../../workers/api/window.js";
import { CH_CELL_SAMPLES } from "../../workers/shared/clickhouse.js";
import { evaluationEvents, seedAlertRules } from "./alert-rules.js";
import { DEFAULT_PLAYERS, loadBenchData } from "./analytics-data.js";
import { counting } from "./rows-read.js";
import { withBenchStack } from "./stack.js";
import { printTable } from "./table.js";

const MAIN_EVENTS = Number(process.env.BENCH_MAIN_EVENTS ?? 10_000_000);
const OTHER_EVENTS = Number(process.env.BENCH_OTHER_EVENTS ?? 9_000_000);
const COMPARE_EVENTS = process.env.BENCH_COMPARE_EVENTS
  ? Number(process.env.BENCH_COMPARE_EVENTS)
  : undefined;
const ALERT_RULES = Number(process.env.BENCH_ALERT_RULES ?? 500);
const PLAYERS = Number(process.env.BENCH_PLAYERS ?? DEFAULT_PLAYERS);
const PORT = Number(process.env.BENCH_PORT ?? 8797);
const BASE = `http://127.0.0.1:${PORT}/api`;
const RUNS = 5;
// BENCH_ENDPOINTS=compare,regressions,… measures only those (a run on a busy machine); all by default.
const ONLY = process.env.BENCH_ENDPOINTS?.split(",").map((s) => s.trim());

type Endpoint =
  | "dashboard"
  | "heatmap"
  | "heatmap_tails"
  | "heatmap_cell"
  | "retention"
  | "funnels"
  | "insights"
  | "builds"
  | "compare"
  | "regressions"
  | "regressions_map";

const BENCH_CELL = {
  mapId: "maps/desert_outpost",
  cellSize: 25,
  x: 0,
  y: 0,
  metric: "frame_time",
} as const satisfies CellQuery;

/** builds/regressions of two generated builds (one released every three days). */
function regressionsOf(by: "platform" | "gpu_tier", mapId?: string) {
  return {
    query: `builds/regressions?candidate=1.25&baseline=1.24&by=${by}${mapId ? `&mapId=${mapId}` : ""}`,
    sql: (ch: ClickHouseClient, p: string) =>
      buildRegressions(ch, p, windowOf(30, Date.now()), {
        candidate: "1.25",
        baseline: "1.24",
        metric: "frame_time",
        by,
        mapId,
        minEffectPct: 3,
        minSessions: 20,
      }),
  };
}

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
      // Version 0: the bench never erases, so the stored closed days stay valid between its reads.
      return Promise.all([dashboardDistincts(ch, p, w, now, 0), dashboardTotals(ch, p, w, now)]);
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
  // The same map with its tail fields (tails=1): the percentile states merged for every cell.
  heatmap_tails: {
    query: "heatmap?mapId=maps/desert_outpost&cellSize=25&days=7&tails=1",
    sql: (ch, p) =>
      heatmapCells(ch, p, windowOf(7, Date.now()), {
        mapId: "maps/desert_outpost",
        cellSize: 25,
        includeZ: false,
        tails: true,
      }),
  },
  // One cell of the busy map: its base cell of 50 is what the primary key of cell_samples reads.
  heatmap_cell: {
    query: "heatmap/cell?mapId=maps/desert_outpost&x=0&y=0&cellSize=25&days=7&metric=frame_time",
    sql: (ch, p) => cellDrilldown(ch, p, windowOf(7, Date.now()), BENCH_CELL),
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
  // The same two builds judged per platform (the defaults: frame_time, 30 days, no cache).
  regressions: regressionsOf("platform"),
  // Per GPU tier (the device_info join, the tiers) with the busy map's cells.
  regressions_map: regressionsOf("gpu_tier", "maps/desert_outpost"),
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

/** Until `pairs` pairs of the project's rules are recorded for the run at `runAt` (or a newer one). */
async function pairsRecorded(
  databaseUrl: string,
  projectId: string,
  runAt: number,
  pairs: number,
): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const deadline = Date.now() + 30 * 60_000;
    for (;;) {
      const rs = await pool.query(
        `SELECT count(*)::int AS n FROM alert_pair_states s JOIN alert_rules r ON r.id = s.alert_rule_id
         WHERE r.project_id = $1 AND r.is_active AND s.run_at >= $2`,
        [projectId, new Date(runAt)],
      );
      if (Number(rs.rows[0]?.n ?? 0) >= pairs) {
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(`run ${runAt}: ${rs.rows[0]?.n} of ${pairs} pairs recorded after 30 minutes`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await pool.end();
  }
}

type Measured = { medians: Record<Endpoint, number>; rows: string[][] };

/** Every endpoint over HTTP, and its SQL with and without the project filter (`sqlColumns`). */
async function measure(
  ch: ClickHouseClient,
  projectId: string,
  key: string,
  sqlColumns: boolean,
): Promise<Measured> {
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
  const counted = counting(ch);
  for (const [name, e] of Object.entries(ENDPOINTS) as Array<[Endpoint, (typeof ENDPOINTS)[Endpoint]]>) {
    if (ONLY && !ONLY.includes(name)) {
      continue;
    }
    medians[name] = await medianMs(http(e.query));
    const direct = sqlColumns ? String(await medianMs(() => e.sql(ch, projectId))) : "";
    const all = sqlColumns ? String(await medianMs(() => e.sql(unfiltered, projectId))) : "";
    // Rows one call of the project's SQL reads, all its statements together.
    await counted.take();
    await e.sql(counted.client, projectId);
    rows.push([
      name,
      String(medians[name]),
      direct,
      all,
      (await counted.take()).toLocaleString("en"),
      e.query,
    ]);
  }
  if (ONLY) {
    return { medians, rows };
  }
  rows.push([
    "builds (cached)",
    String(await medianMs(http("builds?days=30"))),
    "",
    "",
    "",
    "builds?days=30",
  ]);
  // A repeated step name runs windowFunnel over one row per (event, step position) instead.
  const repeated = "funnels?steps=match_start,level_up,level_up,match_end&window=86400&days=30";
  rows.push(["funnels (repeated step)", String(await medianMs(http(repeated))), "", "", "", repeated]);
  return { medians, rows };
}

/**
 * What the cell read touches: EXPLAIN indexes = 1 of the WHERE its four statements share (the granules
 * each index keeps, of those before it), beside the size of cell_samples (every project's rows).
 */
async function explainCell(ch: ClickHouseClient, projectId: string): Promise<void> {
  const { where, params } = cellScope(projectId, windowOf(7, Date.now()), BENCH_CELL);
  const plan = await ch.query({
    query: `EXPLAIN indexes = 1 SELECT count() FROM ${CH_CELL_SAMPLES} WHERE ${where}`,
    query_params: params,
    format: "TabSeparatedRaw",
  });
  const size = await ch.query({
    query: `SELECT sum(rows) AS rows, sum(marks) AS granules, count() AS parts FROM system.parts
      WHERE active AND database = splitByChar('.', {t:String})[1] AND table = splitByChar('.', {t:String})[2]`,
    query_params: { t: CH_CELL_SAMPLES },
    format: "JSONEachRow",
  });
  console.log(`\n${CH_CELL_SAMPLES}: ${JSON.stringify(await size.json())}`);
  console.log(`EXPLAIN indexes = 1 of the heatmap_cell read:\n${await plan.text()}`);
}

const millions = (n: number) => `${Math.round(n / 100_000) / 10}M`;

async function main(): Promise<Record<string, number>> {
  return withBenchStack("analytics", async ({ stack, serve }) => {
    const { projectId, key } = await seedProject(stack.databaseUrl);
    const others = Array.from({ length: 9 }, () => crypto.randomUUID());
    const first = COMPARE_EVENTS !== undefined && COMPARE_EVENTS < MAIN_EVENTS ? COMPARE_EVENTS : MAIN_EVENTS;
    const plan = {
      mainProject: projectId,
      mainEvents: first,
      otherProjects: others,
      otherEvents: OTHER_EVENTS,
      players: PLAYERS,
    };
    const progress = (line: string) => process.stdout.write(`\r${line}   `);
    console.log(
      `loading ${first.toLocaleString("en")} + ${OTHER_EVENTS.toLocaleString("en")} events of ${PLAYERS.toLocaleString("en")} players…`,
    );
    console.log(`\nloaded in ${(await loadBenchData(stack.clickhouse, plan, progress)).toFixed(1)} s`);

    const _worker = await serve(PORT, BASE);
    const ch = createClient({
      url: stack.clickhouse.url,
      username: stack.clickhouse.user,
      password: stack.clickhouse.password,
    });
    const result: Record<string, number> = {};
    let before: Measured | undefined;
    if (first < MAIN_EVENTS) {
      before = await measure(ch, projectId, key, false);
      console.log(
        `measured at ${millions(first)}; loading ${(MAIN_EVENTS - first).toLocaleString("en")} more…`,
      );
      const seconds = await loadBenchData(stack.clickhouse, plan, progress, {
        extraMain: MAIN_EVENTS - first,
        skipPlan: true,
      });
      console.log(`\nloaded in ${seconds.toFixed(1)} s`);
    }
    const after = await measure(ch, projectId, key, true);
    const size = millions(MAIN_EVENTS);
    const header = [
      `endpoint`,
      `HTTP median ms, ${size}`,
      "SQL, project",
      "SQL, no project filter",
      "rows read (SQL, project)",
      "request",
    ];
    if (before) {
      const small = millions(first);
      header.splice(2, 0, `HTTP median ms, ${small}`, `${size} / ${small}`);
      after.rows.forEach((r, i) => {
        const was = Number(before.rows[i]?.[1]);
        r.splice(2, 0, String(was), (Number(r[1]) / was).toFixed(2));
      });
      for (const [name, ms] of Object.entries(before.medians)) {
        result[`${name}_${small}`] = ms;
        // The issue's second column: how much of the growth in events the endpoint pays.
        result[`${name}_ratio`] = Math.round((after.medians[name as Endpoint] / ms) * 100) / 100;
      }
    }
    Object.assign(result, after.medians);
    printTable(header, after.rows);
    if (ONLY) {
      await ch.close();
      return result;
    }
    await explainCell(ch, projectId);

    // Alert evaluation: one cron run over ALERT_RULES rules × 2 profiles, twice (see the header).
    const alertRows: string[][] = [];
    for (const [label, sizes] of [
      ["cell sizes 25, 50 (rollup)", [25, 50]],
      ["cell sizes 5, 10, 25, 50", [5, 10, 25, 50]],
    ] as const) {
      await seedAlertRules(stack.databaseUrl, projectId, ALERT_RULES, sizes);
      const recorded = await evaluationEvents(stack.databaseUrl, projectId);
      // The cron only plans (workers/api/alerts/plan.ts); the alerts queue's consumers evaluate. The run
      // is timed from the cron to the last pair recorded for it (alert_pair_states.run_at).
      const runAt = Date.now();
      const t0 = performance.now();
      const res = await fetch(`http://127.0.0.1:${PORT}/__scheduled?cron=*/5+*+*+*+*&time=${runAt}`);
      await res.text();
      if (res.status !== 200) {
        throw new Error(`scheduled run: ${res.status}`);
      }
      await pairsRecorded(stack.databaseUrl, projectId, runAt, ALERT_RULES * 2);
      const ms = Math.round(performance.now() - t0);
      // Every pair records its first status: proof the run evaluated them all.
      const pairs = (await evaluationEvents(stack.databaseUrl, projectId)) - recorded;
      alertRows.push([label, String(ALERT_RULES), String(pairs), String(ms)]);
      console.log(`alert run, ${label}: ${ALERT_RULES} rules, ${pairs} pairs recorded, ${ms} ms`);
      result[sizes.length === 2 ? "alerts_rollup_ms" : "alerts_mixed_ms"] = ms;
    }
    console.log();
    printTable(["alert rules", "active rules", "pairs evaluated", "cron to last pair ms"], alertRows);
    await ch.close();
    return result;
  });
}

// Printed after everything has shut down, so it stays the last line.
console.log(JSON.stringify(await main()));
