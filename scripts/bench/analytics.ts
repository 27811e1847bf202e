import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
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
import { playerRetentionCohorts } from "../../workers/api/analytics/player-retention.js";
import { eventKpis } from "../../workers/api/analytics/project-status.js";
import { buildRegressions, sessionValueRanks } from "../../workers/api/analytics/regressions.js";
import {
  SETTLE_MS,
  sessionMedianDaysDue,
  storeSessionMedianDay,
} from "../../workers/api/analytics/session-medians.js";
import { createKey, createProject, createTenant } from "../../workers/api/bootstrap.js";
import { windowOf } from "../../workers/api/window.js";
import { CH_CELL_SAMPLES } from "../../workers/shared/clickhouse.js";
import { clickhouseQuery } from "../local/clickhouse-http.js";
import { evaluationEvents, seedAlertRules } from "./alert-rules.js";
import { alertStatements } from "./alert-statements.js";
import {
  chunkCount,
  expected,
  type LoadPlan,
  loadBenchData,
  PLAYERS,
  PROFILE,
  SPAN_DAYS,
} from "./analytics-data.js";
import {
  type Numbering,
  numberBenchEvents,
  numberSessionValues,
  rebuildBenchBitmaps,
} from "./analytics-numbers.js";
import {
  type Answer,
  difference as answersDiffer,
  buildsOurs,
  buildsPlain,
  cellOurs,
  compareOurs,
  comparePlain,
  dashboardOurs,
  dashboardPlain,
  funnelOurs,
  funnelPlain,
  heatmapOurs,
  heatmapPlain,
  insightsByPlain,
  insightsOurs,
  insightsPlain,
  overEvents,
  retentionOurs,
  retentionPlain,
  statusOurs,
  statusPlain,
} from "./analytics-plain.js";
import { longFetch } from "./long-fetch.js";
import { type Read, readBy } from "./rows-read.js";
import { withBenchStack } from "./stack.js";
import { printTable } from "./table.js";

const MAIN_EVENTS = Number(process.env.BENCH_MAIN_EVENTS ?? 10_000_000);
const OTHER_EVENTS = Number(process.env.BENCH_OTHER_EVENTS ?? 9_000_000);
const COMPARE_EVENTS = process.env.BENCH_COMPARE_EVENTS
  ? Number(process.env.BENCH_COMPARE_EVENTS)
  : undefined;
const ALERT_RULES = Number(process.env.BENCH_ALERT_RULES ?? 500);
const PORT = Number(process.env.BENCH_PORT ?? 8797);
const BASE = `http://127.0.0.1:${PORT}/api`;
const RUNS = 5;
// BENCH_PEER_RUNS=1 times each plain-SQL peer once after its warm-up (a 100M run, where one plain read
// over the events takes tens of seconds); 5 by default, like every other figure.
const PEER_RUNS = Number(process.env.BENCH_PEER_RUNS ?? RUNS);
// BENCH_ENDPOINTS=compare,regressions,… measures only those (a run on a busy machine); all by default.
const ONLY = process.env.BENCH_ENDPOINTS?.split(",").map((s) => s.trim());
// BENCH_DAYS=90 measures every endpoint over that window (the heatmap and cell reads too); by default
// 30 days, and 7 for the heatmap and its cell (whose longest window is 30 days).
const DAYS = process.env.BENCH_DAYS ? Number(process.env.BENCH_DAYS) : undefined;
const D = DAYS ?? 30;
const HD = DAYS ? Math.min(DAYS, 30) : 7;
// BENCH_SQL=0 leaves out the two SQL timing columns (a big run where only HTTP and rows read matter).
const SQL_COLUMNS = process.env.BENCH_SQL !== "0";
// BENCH_HTTP=0 measures the analytics functions only, not the requests (a big run on a busy machine where
// a request's other reads outlast the Worker's ClickHouse timeout); the ms column is then empty.
const HTTP = process.env.BENCH_HTTP !== "0";
// BENCH_PEERS=0 leaves out the plain-SQL peers (a big run on a busy machine: HTTP and rows read only).
const PEERS = process.env.BENCH_PEERS !== "0";
// BENCH_LOAD_ONLY=1 loads (into BENCH_KEEP_DIR, stack.ts) and stops; a later run with the same dir
// measures it without loading again (BENCH_LOAD=0: even a load that stopped midway, at its size).
const LOAD_ONLY = process.env.BENCH_LOAD_ONLY === "1";
// BENCH_ALERTS_ONLY=1 measures no endpoint: only the two alert runs, each with the rows ClickHouse read
// during it and its statements attributed (alert-statements.ts: kind, count, ms, rows the keys leave).
const ALERTS_ONLY = process.env.BENCH_ALERTS_ONLY === "1";

type Endpoint =
  | "dashboard"
  | "heatmap"
  | "heatmap_tails"
  | "heatmap_cell"
  | "retention"
  | "funnels"
  | "insights"
  | "insights_map"
  | "status"
  | "builds"
  | "compare"
  | "regressions"
  | "regressions_map"
  | "regressions_poor"
  | "heatmap_why"
  | "heatmap_hitches"
  | "verdicts";

const BENCH_CELL = {
  mapId: "maps/desert_outpost",
  cellSize: 25,
  x: 0,
  y: 0,
  metric: "frame_time",
} as const satisfies CellQuery;

/** builds/regressions of two generated builds (one released every three days). */
function regressionsOf(
  by: "platform" | "gpu_tier",
  mapId?: string,
  metric: "frame_time" | "poor_session_share" = "frame_time",
): Bench {
  return {
    query: `builds/regressions?candidate=1.25&baseline=1.24&by=${by}&days=${D}&metric=${metric}${mapId ? `&mapId=${mapId}` : ""}`,
    sql: (ch, p, now) =>
      buildRegressions(ch, p, windowOf(D, now), {
        candidate: "1.25",
        baseline: "1.24",
        metric,
        by,
        mapId,
        minEffectPct: 3,
        minSessions: 20,
      }),
  };
}

/**
 * An endpoint's request, the analytics functions its handler runs (`sql`, at the clock `now`), and its
 * plain-SQL peer over telemetry.events (analytics-plain.ts): the peer's answer, ours in the same form,
 * and how far numbers may differ (0: sums in another order; the builds list's sketches: 1 %).
 */
type Bench = {
  query: string;
  sql: (ch: ClickHouseClient, project: string, now: number) => Promise<unknown>;
  peer?: {
    plain: (ch: ClickHouseClient, project: string, now: number) => Promise<Answer>;
    // biome-ignore lint/suspicious/noExplicitAny: each endpoint's own result type
    ours: (result: any) => Answer;
    relative: number;
  };
};

const HEATMAP = { mapId: "maps/desert_outpost", cellSize: 25, includeZ: false } as const;
const FUNNEL = ["match_start", "level_up", "match_end"];
const COMPARED = { baseline: "1.24", candidate: "1.25" } as const;
const VERDICT_READ = { ...COMPARED, byPlatform: false };
const VERDICT_METRICS = ["frame_time", "memory", "gpu_time"] as const;
const rankAnswer = (m: Map<string, unknown>): Answer => Object.fromEntries(m);
/** The heatmap's why=1 fields per cell, as the peers compare them. */
const whyAnswer = (
  cells: Array<{ x: number; y: number; heartbeats?: number; slow?: number; bounds?: object }>,
): Answer => Object.fromEntries(cells.map((c) => [`${c.x},${c.y}`, [c.heartbeats, c.slow, c.bounds]]));
const EXACT = 1e-9;

/** Each endpoint's request, and the same analytics functions its handler runs. */
const ENDPOINTS: Record<Endpoint, Bench> = {
  dashboard: {
    query: `dashboard?days=${D}`,
    sql: (ch, p, now) => {
      const w = windowOf(D, now);
      return Promise.all([dashboardDistincts(ch, p, w, now), dashboardTotals(ch, p, w)]);
    },
    peer: {
      plain: (ch, p, now) => dashboardPlain(ch, p, windowOf(D, now), now),
      ours: dashboardOurs,
      relative: EXACT,
    },
  },
  heatmap: {
    query: `heatmap?mapId=maps/desert_outpost&cellSize=25&days=${HD}`,
    sql: (ch, p, now) => heatmapCells(ch, p, windowOf(HD, now), HEATMAP),
    peer: {
      plain: (ch, p, now) => heatmapPlain(ch, p, windowOf(HD, now), HEATMAP),
      ours: (cells) => heatmapOurs(cells, false),
      relative: EXACT,
    },
  },
  // The same map with its tail fields (tails=1): the percentile states merged for every cell.
  heatmap_tails: {
    query: `heatmap?mapId=maps/desert_outpost&cellSize=25&days=${HD}&tails=1`,
    sql: (ch, p, now) => heatmapCells(ch, p, windowOf(HD, now), { ...HEATMAP, tails: true }),
    peer: {
      plain: (ch, p, now) => heatmapPlain(ch, p, windowOf(HD, now), { ...HEATMAP, tails: true }),
      ours: (cells) => heatmapOurs(cells, true),
      relative: EXACT,
    },
  },
  // The same map's "bound by" fields (why=1) from the rollup, against the same answer from the events.
  heatmap_why: {
    query: `heatmap?mapId=maps/desert_outpost&cellSize=25&days=${HD}&why=1`,
    sql: (ch, p, now) => heatmapCells(ch, p, windowOf(HD, now), { ...HEATMAP, why: true }),
    peer: {
      plain: async (ch, p, now) =>
        whyAnswer(await heatmapCells(ch, p, windowOf(HD, now), { ...HEATMAP, why: true }, true)),
      ours: whyAnswer,
      relative: EXACT,
    },
  },
  // The same map's hitches (hitches=1): the map's samples of the window with their sessions' medians.
  // No peer: the reference test (cell-why.test.ts) holds the answer; this measures its cost.
  heatmap_hitches: {
    query: `heatmap?mapId=maps/desert_outpost&cellSize=25&days=${HD}&hitches=1`,
    sql: (ch, p, now) => heatmapCells(ch, p, windowOf(HD, now), { ...HEATMAP, hitches: true }),
  },
  // One cell of the busy map: its base cell of 50 is what the primary key of cell_samples reads.
  heatmap_cell: {
    query: `heatmap/cell?mapId=maps/desert_outpost&x=0&y=0&cellSize=25&days=${HD}&metric=frame_time`,
    sql: (ch, p, now) => cellDrilldown(ch, p, windowOf(HD, now), BENCH_CELL),
    peer: {
      plain: (ch, p, now) => cellDrilldown(overEvents(ch), p, windowOf(HD, now), BENCH_CELL),
      ours: cellOurs,
      relative: EXACT,
    },
  },
  retention: {
    query: `retention?days=${D}`,
    sql: (ch, p, now) => playerRetentionCohorts(ch, p, windowOf(D, now)),
    peer: {
      plain: (ch, p, now) => retentionPlain(ch, p, windowOf(D, now)),
      ours: retentionOurs,
      relative: EXACT,
    },
  },
  funnels: {
    query: `funnels?steps=match_start,level_up,match_end&window=86400&days=${D}`,
    sql: (ch, p, now) => funnelSteps(ch, p, windowOf(D, now), FUNNEL, 86400),
    peer: {
      plain: (ch, p, now) => funnelPlain(ch, p, windowOf(D, now), FUNNEL, 86400),
      ours: funnelOurs,
      relative: EXACT,
    },
  },
  insights: {
    query: `insights?metric=unique_players&groupBy=day&days=${D}&limit=10`,
    sql: (ch, p, now) => {
      const w = windowOf(D, now);
      const q = { metric: "unique_players", groupBy: "day", limit: 10 } as const;
      return Promise.all([insightGroups(ch, p, w, q), insightTotal(ch, p, w, q)]);
    },
    peer: {
      plain: (ch, p, now) => insightsPlain(ch, p, windowOf(D, now), 10),
      ours: insightsOurs,
      relative: EXACT,
    },
  },
  // Unique players by map over every event: player_dims' map rows of every event name and day.
  insights_map: {
    query: `insights?metric=unique_players&groupBy=map_id&days=${D}&limit=10`,
    sql: (ch, p, now) => {
      const w = windowOf(D, now);
      const q = { metric: "unique_players", groupBy: "map_id", limit: 10 } as const;
      return Promise.all([insightGroups(ch, p, w, q), insightTotal(ch, p, w, q)]);
    },
    peer: {
      plain: (ch, p, now) => insightsByPlain(ch, p, windowOf(D, now), 10, "map_id"),
      ours: insightsOurs,
      relative: EXACT,
    },
  },
  // The project's status KPIs, recomputed (fresh=1: not the ~60 s cache), no batch in flight.
  status: {
    query: "status?fresh=1",
    sql: (ch, p, now) => eventKpis(ch, p, now),
    peer: { plain: statusPlain, ours: statusOurs, relative: EXACT },
  },
  builds: {
    // fresh=1: the aggregation itself, not the cache.
    query: `builds?days=${D}&fresh=1`,
    sql: (ch, p, now) => buildList(ch, p, windowOf(D, now)),
    // Session and player counts are bitmap unions (0045_build_days_bitmaps.sql): exact, as the rest.
    peer: { plain: (ch, p, now) => buildsPlain(ch, p, windowOf(D, now)), ours: buildsOurs, relative: EXACT },
  },
  compare: {
    // Two of the generated builds (one released every three days); fresh=1 as for builds.
    query: `builds/compare?baseline=1.24&candidate=1.25&days=${D}&fresh=1`,
    sql: (ch, p, now) => compareBuilds(ch, p, windowOf(D, now), COMPARED),
    peer: {
      plain: (ch, p, now) => comparePlain(ch, p, windowOf(D, now), COMPARED),
      ours: compareOurs,
      relative: EXACT,
    },
  },
  // The same two builds judged per platform (the defaults: frame_time, 30 days, no cache). No peer:
  // the verdict is a bootstrap in the Worker over per-session values, not one statement's answer.
  regressions: regressionsOf("platform"),
  // Per GPU tier (the device_info join, the tiers) with the busy map's cells.
  regressions_map: regressionsOf("gpu_tier", "maps/desert_outpost"),
  // The share of poor sessions per platform: the sessions' verdicts (session-verdicts.ts), no medians.
  regressions_poor: regressionsOf("platform", undefined, "poor_session_share"),
  // compare's verdict read alone (regressions.ts sessionValueRanks: the three judged metrics, overall),
  // with the closed days the session-medians job stored, against the same read from session_values only.
  verdicts: {
    query: `builds/compare?baseline=1.24&candidate=1.25&days=${D}&fresh=1`,
    sql: (ch, p, now) => sessionValueRanks(ch, p, windowOf(D, now), VERDICT_READ, VERDICT_METRICS),
    peer: {
      plain: async (ch, p, now) =>
        rankAnswer(await sessionValueRanks(ch, p, windowOf(D, now), VERDICT_READ, VERDICT_METRICS, false)),
      ours: rankAnswer,
      relative: EXACT,
    },
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

async function medianMs(
  fn: () => Promise<unknown>,
  label?: string,
  runs = RUNS,
  warm = true,
): Promise<number> {
  // Warm-up; its time is printed when labelled: the first read after a load is the cold one (nothing in
  // the page cache, parts not merged yet).
  const w0 = performance.now();
  if (warm) {
    await fn();
  }
  if (label) {
    console.log(`${label}: first request ${Math.round(performance.now() - w0)} ms`);
  }
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return Math.round((times[Math.floor(runs / 2)] as number) * 10) / 10;
}

/** The rows of telemetry.events (every project's: how far a load into a kept dir got, or one project's). */
async function eventCount(
  target: { url: string; user: string; password: string },
  project?: string,
): Promise<number> {
  const where = project ? "WHERE project_id = {p:UUID}" : "";
  const sql = `SELECT count() FROM telemetry.events ${where} FORMAT TSV`;
  return Number((await clickhouseQuery(target.url, target, sql, project ? { p: project } : {})).trim());
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

/** One endpoint at one size: HTTP median and reads, its peer's, whether they agree, its SQL medians. */
type Figures = {
  ms: number;
  read: Read;
  /** What the endpoint's analytics functions alone read (HTTP adds verdicts to compare, caches…). */
  fnRead: Read;
  plain?: { ms: number; read: Read; difference: string };
  direct?: number;
  all?: number;
};
type Measured = { figures: Partial<Record<Endpoint, Figures>>; extra: string[][] };

/**
 * Every endpoint over HTTP (median, and what ClickHouse read for one request), its plain-SQL peer
 * (median, reads, and whether it gives the same answer as the endpoint's functions at one clock), and
 * with `sqlColumns` its SQL with and without the project filter.
 */
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
  const figures: Measured["figures"] = {};
  for (const [name, e] of Object.entries(ENDPOINTS) as Array<[Endpoint, Bench]>) {
    if (ONLY && !ONLY.includes(name)) {
      continue;
    }
    const fnRead = await readBy(ch, () => e.sql(ch, projectId, Date.now()));
    const f: Figures = HTTP
      ? { ms: await medianMs(http(e.query), e.query), read: await readBy(ch, http(e.query)), fnRead }
      : { ms: Number.NaN, read: fnRead, fnRead };
    if (e.peer && PEERS) {
      const peer = e.peer;
      // The rows-read run is also the peer's warm-up, and its answer the one compared with ours at the
      // same clock: a plain read over 100M events takes tens of seconds, so each run counts.
      const now = Date.now();
      let plainAnswer: Answer | undefined;
      const read = await readBy(ch, async () => {
        plainAnswer = await peer.plain(ch, projectId, now);
      });
      const ms = await medianMs(() => peer.plain(ch, projectId, Date.now()), undefined, PEER_RUNS, false);
      const ours = peer.ours(await e.sql(ch, projectId, now));
      const difference = answersDiffer(ours, plainAnswer as Answer, peer.relative);
      if (difference) {
        process.exitCode = 1;
        console.error(`${name}: the plain SQL answers otherwise at ${difference}`);
      }
      f.plain = { ms, read, difference };
    }
    if (sqlColumns || !HTTP) {
      f.direct = await medianMs(() => e.sql(ch, projectId, Date.now()));
    }
    if (sqlColumns) {
      f.all = await medianMs(() => e.sql(unfiltered, projectId, Date.now()));
    }
    figures[name] = f;
  }
  if (ONLY) {
    return { figures, extra: [] };
  }
  const extra = [["builds (cached)", String(await medianMs(http("builds?days=30"))), "builds?days=30"]];
  // A repeated step name runs windowFunnel over one row per (event, step position) instead.
  const repeated = "funnels?steps=match_start,level_up,level_up,match_end&window=86400&days=30";
  extra.push(["funnels (repeated step)", String(await medianMs(http(repeated))), repeated]);
  return { figures, extra };
}

const ratio = (a: number, b: number) =>
  b === 0 ? (a === 0 ? 1 : Number.POSITIVE_INFINITY) : Math.round((a / b) * 100) / 100;
/** Ours over the peer's rows, to 3 significant digits (a rollup reads thousands of times fewer). */
const share = (a: number, b: number) => (b === 0 ? ratio(a, b) : Number((a / b).toPrecision(3)));
const thousands = (n: number) => n.toLocaleString("en");
const megabytes = (n: number) => `${(n / 1_048_576).toFixed(1)}`;

/**
 * The table (one row per endpoint) and the JSON figures: at the main size `<endpoint>` (ms),
 * `_rows`, `_bytes` (one HTTP request), `_fn_rows` (its analytics functions alone), the peer's
 * `_plain_ms`, `_plain_rows`, `_plain_bytes`, `_vs_plain` (rows, functions / plain) and `_same` (1: same answer); with a smaller size also `_<size>` (ms), `_ratio`, `_rows_<size>`,
 * `_bytes_<size>`, `_rows_ratio`, `_bytes_ratio`, `_plain_rows_<size>` and `_plain_rows_ratio`.
 */
/**
 * The table of reads at the size measured; with `before` (the same reads at a smaller size of the same
 * profile) also how each grew: its rows ratio and exponent, ln(rows ratio) / ln(events ratio): 0 is
 * flat in events, 1 grows with them.
 */
function report(after: Measured, before: Measured | undefined, size: string, small: string, eventsRatio = 1) {
  const result: Record<string, number> = {};
  const header = [
    "endpoint",
    `HTTP ms, ${size}`,
    ...(before ? [`HTTP ms, ${small}`, "ms ratio"] : []),
    `rows read, ${size}`,
    ...(before ? [`rows read, ${small}`, "rows ratio", "rows exponent"] : []),
    `MB read, ${size}`,
    `rows read, functions, ${size}`,
    ...(before ? ["bytes ratio"] : []),
    "plain SQL ms",
    "plain rows read",
    ...(before ? ["plain rows ratio"] : []),
    "rows functions / plain",
    "same answer",
    "SQL, project",
    "SQL, no project filter",
  ];
  const rows: string[][] = [];
  for (const [name, f] of Object.entries(after.figures) as Array<[Endpoint, Figures]>) {
    const b = before?.figures[name];
    Object.assign(result, {
      [name]: f.ms,
      [`${name}_rows`]: f.read.rows,
      [`${name}_bytes`]: f.read.bytes,
      [`${name}_fn_rows`]: f.fnRead.rows,
    });
    if (b) {
      Object.assign(result, {
        [`${name}_${small}`]: b.ms,
        [`${name}_ratio`]: ratio(f.ms, b.ms),
        [`${name}_rows_${small}`]: b.read.rows,
        [`${name}_bytes_${small}`]: b.read.bytes,
        [`${name}_rows_ratio`]: ratio(f.read.rows, b.read.rows),
        [`${name}_rows_exponent`]: exponent(f.read.rows, b.read.rows, eventsRatio),
        [`${name}_bytes_ratio`]: ratio(f.read.bytes, b.read.bytes),
      });
    }
    if (f.plain) {
      Object.assign(result, {
        [`${name}_plain_ms`]: f.plain.ms,
        [`${name}_plain_rows`]: f.plain.read.rows,
        [`${name}_plain_bytes`]: f.plain.read.bytes,
        [`${name}_vs_plain`]: share(f.fnRead.rows, f.plain.read.rows),
        [`${name}_same`]: f.plain.difference ? 0 : 1,
      });
      if (b?.plain) {
        result[`${name}_plain_rows_${small}`] = b.plain.read.rows;
        result[`${name}_plain_rows_ratio`] = ratio(f.plain.read.rows, b.plain.read.rows);
      }
    }
    rows.push([
      name,
      String(f.ms),
      ...(before ? [String(b?.ms ?? ""), b ? ratio(f.ms, b.ms).toFixed(2) : ""] : []),
      thousands(f.read.rows),
      ...(before
        ? [
            b ? thousands(b.read.rows) : "",
            b ? ratio(f.read.rows, b.read.rows).toFixed(2) : "",
            b ? exponent(f.read.rows, b.read.rows, eventsRatio).toFixed(2) : "",
          ]
        : []),
      megabytes(f.read.bytes),
      thousands(f.fnRead.rows),
      ...(before ? [b ? ratio(f.read.bytes, b.read.bytes).toFixed(2) : ""] : []),
      f.plain ? String(f.plain.ms) : "—",
      f.plain ? thousands(f.plain.read.rows) : "—",
      ...(before ? [f.plain && b?.plain ? ratio(f.plain.read.rows, b.plain.read.rows).toFixed(2) : "—"] : []),
      f.plain ? String(share(f.fnRead.rows, f.plain.read.rows)) : "—",
      f.plain ? (f.plain.difference ? `NO (${f.plain.difference})` : "yes") : "—",
      f.direct === undefined ? "" : String(f.direct),
      f.all === undefined ? "" : String(f.all),
    ]);
  }
  printTable(header, rows);
  console.log();
  printTable(["HTTP only", `median ms, ${size}`, "request"], after.extra);
  return result;
}

/** How a read's rows grew with the events: ln(rows ratio) / ln(events ratio), 2 decimals. */
function exponent(rows: number, smallerRows: number, eventsRatio: number): number {
  if (eventsRatio <= 1 || rows <= 0 || smallerRows <= 0) {
    return 0;
  }
  return Math.round((Math.log(rows / smallerRows) / Math.log(eventsRatio)) * 100) / 100;
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

/**
 * What the main project holds, for a model's fit: events, sessions and players (distinct over the data;
 * `profile_monthly_players` over its last 30 days, `profile_daily_players` the mean of its days), and
 * the profile's expected figures at the size measured (`profile_expected_*`; none for a dir of the
 * former generator).
 */
async function profileFigures(
  target: { url: string; user: string; password: string },
  project: string,
  plan: LoadPlan,
  model: ReturnType<typeof expected> | undefined,
): Promise<Record<string, unknown>> {
  const sql = `SELECT count() AS events, uniqExact(session_id) AS sessions, uniqExact(player) AS players,
      uniqExactIf(player, timestamp >= toDate({anchor:String}) - 29) AS monthly_players,
      (SELECT round(avg(n)) FROM (SELECT uniqExact(player) AS n FROM telemetry.events
        WHERE project_id = {p:UUID} GROUP BY toDate(timestamp))) AS daily_players
    FROM telemetry.events WHERE project_id = {p:UUID} FORMAT JSONEachRow`;
  const anchor = plan.anchor ?? new Date().toISOString().slice(0, 10);
  const row = JSON.parse(await clickhouseQuery(target.url, target, sql, { p: project, anchor })) as Record<
    string,
    string
  >;
  const out: Record<string, unknown> = {
    profile: plan.profile ?? "former",
    profile_span_days: plan.spanDays ?? 90,
  };
  for (const [k, v] of Object.entries(row)) {
    out[`profile_${k}`] = Number(v);
  }
  if (model) {
    for (const k of [
      "monthlyPlayers",
      "dailyPlayers",
      "sessions",
      "events",
      "eventsPerSession",
      "density",
    ] as const) {
      out[`profile_expected_${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`] = model[k];
    }
  }
  console.log(`profile: ${JSON.stringify(out)}`);
  return out;
}

/** The numbering's figures for the JSON line: `numbering_s` (and its parts) of each numbering run. */
function numberingFigures(numberings: Numbering[]): Record<string, number> {
  const out: Record<string, number> = {};
  numberings.forEach((n, i) => {
    const suffix = i === 0 ? "" : `_${i + 1}`;
    Object.assign(out, {
      [`numbering_s${suffix}`]: n.totalS,
      [`numbering_numbers_s${suffix}`]: n.numbersS,
      [`numbering_mutation_s${suffix}`]: n.updateS,
      [`numbering_bitmaps_s${suffix}`]: n.bitmapsS,
      [`numbering_players${suffix}`]: n.players,
      [`numbering_sessions${suffix}`]: n.sessions,
    });
  });
  return out;
}

const millions = (n: number) => `${Math.round(n / 100_000) / 10}M`;

async function main(): Promise<Record<string, unknown>> {
  return withBenchStack("analytics", async ({ stack, serve, dir, reused }) => {
    // A kept dir holds its project, key and plan (written before loading): a reused one is measured
    // without loading again, after finishing a load that stopped midway.
    const saved = join(dir, "bench-analytics.json");
    type Saved = { projectId: string; key: string; plan: LoadPlan; generator?: number; chunksDone?: number };
    const kept = reused ? (JSON.parse(await readFile(saved, "utf8")) as Saved) : undefined;
    const { projectId, key } = kept ?? (await seedProject(stack.databaseUrl));
    const first = COMPARE_EVENTS !== undefined && COMPARE_EVENTS < MAIN_EVENTS ? COMPARE_EVENTS : MAIN_EVENTS;
    const plan: LoadPlan = kept?.plan ?? {
      mainProject: projectId,
      mainEvents: first,
      otherProjects: Array.from({ length: 9 }, () => crypto.randomUUID()),
      otherEvents: OTHER_EVENTS,
      players: PLAYERS,
      // The players and sessions of the full size: a smaller first size holds fewer of their events.
      scaleEvents: MAIN_EVENTS,
      profile: PROFILE,
      spanDays: SPAN_DAYS,
      anchor: process.env.BENCH_ANCHOR_DAY ?? new Date().toISOString().slice(0, 10),
    };
    const progress = (line: string) => process.stdout.write(`\r${line}   `);
    // Statements done, saved after each: a load that stopped midway resumes at the next one (the one
    // that stopped may have left some of its rows: they come again, and the events' merges drop copies).
    const state: Saved = { projectId, key, plan, generator: 2, chunksDone: kept?.chunksDone ?? 0 };
    const save = () => writeFile(saved, JSON.stringify(state));
    if (!kept) {
      await save();
    }
    // The profile expected at the size measured (a kept dir: the size it loaded; none for a dir of the
    // former generator, whose plan has no profile).
    const model =
      kept && kept.generator === undefined
        ? undefined
        : expected({ ...plan, mainEvents: kept ? plan.mainEvents : MAIN_EVENTS, otherEvents: 0 });
    console.log(`profile (expected at the size measured): ${JSON.stringify(model)}`);
    const statements = chunkCount(plan);
    // A dir loaded by the former generator (no `generator` field) is measured as it is.
    const complete = kept && (kept.generator === undefined || (kept.chunksDone ?? 0) >= statements);
    if (complete || (kept && process.env.BENCH_LOAD === "0")) {
      const loaded = await eventCount(stack.clickhouse);
      console.log(`reusing the ${loaded.toLocaleString("en")} events loaded in ${dir} (BENCH_KEEP_DIR)`);
    } else {
      console.log(
        `loading ${plan.mainEvents.toLocaleString("en")} + ${plan.otherEvents.toLocaleString("en")} events (${plan.profile} profile, ${model?.monthlyPlayers.toLocaleString("en")} monthly players) in ${statements} statements from statement ${state.chunksDone}…`,
      );
      const seconds = await loadBenchData(stack.clickhouse, plan, progress, {
        extraMain: 0,
        skipPlan: false,
        resumeChunk: state.chunksDone,
        onChunk: async (done) => {
          state.chunksDone = done;
          await save();
        },
      });
      console.log(`\nloaded in ${seconds.toFixed(1)} s`);
    }
    const ch = createClient({
      url: stack.clickhouse.url,
      username: stack.clickhouse.user,
      password: stack.clickhouse.password,
      // The plain-SQL peers read every event of the window: past the default 30 s at 100M.
      request_timeout: 1_800_000,
      // The numbering's mutation and rebuilds at 100M outlast the 300 s Node's fetch waits for headers.
      fetch: longFetch,
    });
    // The load skips the consumer: its rows get their dense numbers and bitmaps here (analytics-numbers.ts).
    const numberings: Numbering[] = [];
    const number = async () => {
      const n = await numberBenchEvents(ch);
      if (n) {
        numberings.push(n);
        console.log(
          `numbered ${n.players.toLocaleString("en")} players and ${n.sessions.toLocaleString("en")} sessions (${n.unnumbered.toLocaleString("en")} rows unnumbered) in ${n.totalS} s: numbers ${n.numbersS} s, mutation ${n.updateS} s, bitmaps ${n.bitmapsS} s`,
        );
      }
    };
    // The closed days' session medians, as the session-medians job stores them (BENCH_STORED_DAYS=0: none,
    // the read before them), after the rows are numbered: run again after a second size is loaded.
    const prepare = async () => {
      await number();
      if (process.env.BENCH_REBUILD_BITMAPS === "1") {
        const t0 = performance.now();
        await rebuildBenchBitmaps(ch);
        console.log(`bitmaps rebuilt in ${Math.round((performance.now() - t0) / 1000)} s`);
      }
      const valuesS = await numberSessionValues(ch);
      if (valuesS !== undefined) {
        console.log(`session_values rebuilt with their session numbers in ${valuesS} s`);
      }
      return process.env.BENCH_STORED_DAYS === "0" ? undefined : await storeClosedDays(ch, projectId);
    };
    let storedDays = await prepare();
    if (LOAD_ONLY) {
      await ch.close();
      return numberingFigures(numberings);
    }

    const _worker = await serve(PORT, BASE);
    let before: Measured | undefined;
    if (ALERTS_ONLY) {
      const result: Record<string, unknown> = {};
      await alertRuns(stack.databaseUrl, ch, projectId, result);
      await ch.close();
      return result;
    }
    if (first < MAIN_EVENTS && !kept) {
      before = await measure(ch, projectId, key, false);
      // Printed now: a run that fails while growing the project keeps the smaller size's figures.
      report(before, undefined, millions(first), millions(first));
      console.log(
        `measured at ${millions(first)}; loading ${(MAIN_EVENTS - first).toLocaleString("en")} more…`,
      );
      const seconds = await loadBenchData(stack.clickhouse, plan, progress, {
        extraMain: MAIN_EVENTS - first,
        skipPlan: true,
      });
      console.log(`\nloaded in ${seconds.toFixed(1)} s`);
      storedDays = await prepare();
    }
    const after = await measure(ch, projectId, key, SQL_COLUMNS);
    const size = await eventCount(stack.clickhouse, projectId);
    const result: Record<string, unknown> = {
      ...report(after, before, millions(size), millions(first), size / first),
      ...(await profileFigures(stack.clickhouse, projectId, plan, model)),
      ...numberingFigures(numberings),
      ...(storedDays ? { storedDays } : {}),
    };
    if (ONLY) {
      await ch.close();
      return result;
    }
    await explainCell(ch, projectId);

    await alertRuns(stack.databaseUrl, ch, projectId, result);
    await ch.close();
    return result;
  });
}

/**
 * Alert evaluation: one cron run over ALERT_RULES rules × 2 profiles, twice (see the header); with
 * BENCH_ALERTS_ONLY=1 also the rows ClickHouse read during each and its statements attributed.
 */
async function alertRuns(
  databaseUrl: string,
  ch: ClickHouseClient,
  projectId: string,
  result: Record<string, unknown>,
): Promise<void> {
  const alertRows: string[][] = [];
  for (const [label, sizes] of [
    ["cell sizes 25, 50 (rollup)", [25, 50]],
    ["cell sizes 5, 10, 25, 50", [5, 10, 25, 50]],
  ] as const) {
    await seedAlertRules(databaseUrl, projectId, ALERT_RULES, sizes);
    const recorded = await evaluationEvents(databaseUrl, projectId);
    // The cron only plans (workers/api/alerts/plan.ts); the jobs queue's consumers evaluate. The run
    // is timed from the cron to the last pair recorded for it (alert_pair_states.run_at).
    const runAt = Date.now();
    const t0 = performance.now();
    const run = async () => {
      const res = await fetch(`http://127.0.0.1:${PORT}/__scheduled?cron=*/5+*+*+*+*&time=${runAt}`);
      await res.text();
      if (res.status !== 200) {
        throw new Error(`scheduled run: ${res.status}`);
      }
      await pairsRecorded(databaseUrl, projectId, runAt, ALERT_RULES * 2);
    };
    let read: Read | undefined;
    if (ALERTS_ONLY) {
      read = await readBy(ch, run);
    } else {
      await run();
    }
    const ms = Math.round(performance.now() - t0);
    // Every pair records its first status: proof the run evaluated them all.
    const pairs = (await evaluationEvents(databaseUrl, projectId)) - recorded;
    alertRows.push([label, String(ALERT_RULES), String(pairs), String(ms)]);
    console.log(`alert run, ${label}: ${ALERT_RULES} rules, ${pairs} pairs recorded, ${ms} ms`);
    const name = sizes.length === 2 ? "alerts_rollup" : "alerts_mixed";
    result[`${name}_ms`] = ms;
    if (read) {
      console.log(`  rows read during the run: ${read.rows.toLocaleString("en")}`);
      result[`${name}_rows_read`] = read.rows;
      // The same run's statements again from Node, one kind per line (ms are under the load of the
      // moment; rows are the keys' estimate).
      const { messages, figures } = await alertStatements(databaseUrl, ch, projectId, runAt);
      console.log(`  ${messages} messages; statements:`);
      printTable(
        ["statement", "count", "ms (summed)", "rows (EXPLAIN ESTIMATE)"],
        figures.map((f) => [f.kind, String(f.statements), String(f.ms), f.rows.toLocaleString("en")]),
      );
      result[`${name}_messages`] = messages;
      result[`${name}_statements`] = figures;
    }
  }
  console.log();
  printTable(["alert rules", "active rules", "pairs evaluated", "cron to last pair ms"], alertRows);
}

// Printed after everything has shut down, so it stays the last line.
console.log(JSON.stringify(await main()));

/**
 * The session-medians job (analytics/session-medians.ts) over every due day of the project: the first
 * visit records each day's stamp, the second (its clock SETTLE_MS later) stores the day. Prints and
 * returns the days stored and the job's seconds.
 */
async function storeClosedDays(ch: ClickHouseClient, projectId: string) {
  const started = performance.now();
  const now = Date.now();
  const due = await sessionMedianDaysDue(ch, [projectId], now);
  const outcomes: Record<string, number> = {};
  let slowest = 0;
  for (const { day } of due) {
    await storeSessionMedianDay(ch, projectId, day, now);
  }
  for (const { day } of due) {
    const t0 = performance.now();
    const outcome = await storeSessionMedianDay(ch, projectId, day, now + SETTLE_MS);
    slowest = Math.max(slowest, (performance.now() - t0) / 1000);
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  const figures = {
    days: due.length,
    outcomes,
    seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
    slowestDayS: Number(slowest.toFixed(1)),
  };
  console.log(`session-medians job: ${JSON.stringify(figures)}`);
  return figures;
}
