import { beforeAll, describe, expect, it } from "vitest";
import { event } from "../support/batches.js";
import { ingestAndWait, ingestKeyFor } from "../support/events.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import type { Ok, OkBody } from "../support/schema.js";

/**
 * Hostile SQL against POST /v1/query. The caller's project, a sibling project of the same tenant and
 * another tenant's project each hold distinguishable events; every attempt must be refused (400),
 * fail (422), or return only the caller's rows.
 */
let caller: Tenant;
let foreign: Tenant;
const CALLER_EVENTS = 12;

beforeAll(async () => {
  caller = await seedTenant("enterprise", "Query Caller");
  foreign = await seedTenant("enterprise", "Query Foreign");
  const mark = (tag: string, n: number) =>
    Array.from({ length: n }, (_, i) =>
      event(i, { eventName: `${tag}_evt`, playerId: `${tag}-player-${i % 3}`, sessionId: `${tag}-s${i}` }),
    );
  await Promise.all([
    ingestAndWait(caller.projectId, caller.keys.ingest.key, mark("caller", CALLER_EVENTS)),
    ingestAndWait(caller.siblingProjectId, await ingestKeyFor(caller.siblingProjectId), mark("sibling", 7)),
    ingestAndWait(foreign.projectId, foreign.keys.ingest.key, mark("foreign", 5)),
  ]);
});

async function query(sql: string, limit?: number) {
  return api(
    "/v1/query",
    { key: caller.keys.full.key },
    {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ project_id: caller.projectId, sql, ...(limit ? { limit } : {}) }),
    },
  );
}

type Data = Ok<"/v1/query", "post">;

async function ok(sql: string): Promise<Data> {
  const res = await query(sql);
  const body = (await res.json()) as OkBody<"/v1/query", "post"> & { detail?: string };
  expect(res.status, body.detail).toBe(200);
  return body.data;
}

/** Nothing of another project may appear anywhere in an answer, whatever its status. */
function assertNoLeak(text: string) {
  for (const secret of [
    caller.siblingProjectId,
    foreign.projectId,
    "sibling_evt",
    "sibling-player",
    "foreign_evt",
    "foreign-player",
  ]) {
    expect(text).not.toContain(secret);
  }
}

type Outcome = "refused" | "failed" | "caller-only" | "refused-or-failed";
/** `rows`: for caller-only reads, how many rows the answer must have (every event, or none). */
type Case = { name: string; sql: string; outcome: Outcome; rows?: number };

const CASES: Case[] = [
  // Other tables, by every spelling.
  { name: "system table", sql: "SELECT * FROM system.tables", outcome: "refused" },
  { name: "system.one", sql: "SELECT * FROM system.one", outcome: "refused" },
  { name: "information_schema", sql: "SELECT * FROM information_schema.tables", outcome: "refused" },
  { name: "INFORMATION_SCHEMA upper", sql: "SELECT * FROM INFORMATION_SCHEMA.COLUMNS", outcome: "refused" },
  { name: "telemetry.events direct", sql: "SELECT * FROM telemetry.events", outcome: "refused" },
  { name: "migrations table", sql: "SELECT * FROM telemetry.schema_migrations", outcome: "refused" },
  { name: "unqualified other table", sql: "SELECT * FROM schema_migrations", outcome: "refused" },
  // The analytics rollups hold every project's player ids and have no engine filter of their own.
  { name: "rollup actor_buckets", sql: "SELECT * FROM actor_buckets", outcome: "refused" },
  {
    name: "rollup telemetry.actor_buckets",
    sql: "SELECT * FROM telemetry.actor_buckets",
    outcome: "refused",
  },
  {
    name: "rollup read by a scalar subquery",
    sql: "SELECT (SELECT toUInt8(count()) FROM actor_buckets) FROM events",
    outcome: "refused",
  },
  {
    name: "rollup behind a user CTE",
    sql: "WITH p AS (SELECT * FROM player_dims) SELECT * FROM p",
    outcome: "refused",
  },
  // The rollups of 0004 hold every project's aggregates; their _src views read every project's events.
  { name: "rollup heatmap_cells", sql: "SELECT * FROM heatmap_cells", outcome: "refused" },
  {
    name: "rollup telemetry.compare_rollup",
    sql: "SELECT * FROM telemetry.compare_rollup",
    outcome: "refused",
  },
  { name: "rollup compare_rollup", sql: "SELECT * FROM compare_rollup", outcome: "refused" },
  // The per-player table of funnels (0008) holds every project's player hashes.
  { name: "funnel_events", sql: "SELECT * FROM funnel_events", outcome: "refused" },
  // The bitmaps of dense numbers (0024, 0027): every project's players per day, minute and dimension.
  { name: "telemetry.player_dims", sql: "SELECT players FROM telemetry.player_dims", outcome: "refused" },
  {
    name: "rollup actor_buckets' minutes",
    sql: "SELECT * FROM actor_buckets WHERE grain = 'minute'",
    outcome: "refused",
  },
  {
    name: "bitmap source view",
    sql: "SELECT * FROM telemetry.actor_buckets_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = [])",
    outcome: "refused",
  },
  {
    name: "rollup source view, every project",
    sql: "SELECT * FROM telemetry.daily_events_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = [])",
    outcome: "refused",
  },
  {
    name: "rollup source view, unqualified",
    sql: "SELECT count() FROM build_days_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = [])",
    outcome: "refused",
  },
  { name: "default database", sql: "SELECT * FROM default.events", outcome: "refused" },
  { name: "double-quoted db.table", sql: 'SELECT * FROM "telemetry"."events"', outcome: "refused" },
  { name: "backquoted db.table", sql: "SELECT * FROM `telemetry`.`events`", outcome: "refused" },
  { name: "one quoted name with a dot", sql: "SELECT * FROM `telemetry.events`", outcome: "refused" },
  { name: "homoglyph events (Cyrillic e)", sql: "SELECT * FROM \u0435vents", outcome: "refused" },
  // Table functions.
  { name: "remote()", sql: "SELECT * FROM remote('127.0.0.1', telemetry.events)", outcome: "refused" },
  { name: "url()", sql: "SELECT * FROM url('http://127.0.0.1/', CSV, 'a String')", outcome: "refused" },
  { name: "file()", sql: "SELECT * FROM file('/etc/passwd', 'LineAsString')", outcome: "refused" },
  { name: "numbers()", sql: "SELECT * FROM numbers(10)", outcome: "refused" },
  { name: "merge()", sql: "SELECT * FROM merge('telemetry', '.*')", outcome: "refused" },
  { name: "cluster()", sql: "SELECT * FROM cluster('default', telemetry.events)", outcome: "refused" },
  { name: "s3()", sql: "SELECT * FROM s3('http://127.0.0.1/b/k', 'CSV')", outcome: "refused" },
  { name: "input()", sql: "SELECT * FROM input('a String')", outcome: "refused" },
  { name: "generateRandom()", sql: "SELECT * FROM generateRandom('a String') LIMIT 1", outcome: "refused" },
  { name: "view()", sql: "SELECT * FROM view(SELECT * FROM telemetry.events)", outcome: "refused" },
  { name: "values()", sql: "SELECT * FROM values('a String', 'x')", outcome: "refused" },
  { name: "executable()", sql: "SELECT * FROM executable('x', TSV, 'a String')", outcome: "refused" },
  // Combinations with the allowed table.
  {
    name: "JOIN telemetry.events",
    sql: "SELECT e.* FROM events AS e JOIN telemetry.events AS t ON 1 = 1",
    outcome: "refused",
  },
  { name: "comma join with system table", sql: "SELECT * FROM events, system.one", outcome: "refused" },
  {
    name: "IN subquery on telemetry.events",
    sql: "SELECT * FROM events WHERE player_id IN (SELECT player_id FROM telemetry.events)",
    outcome: "refused",
  },
  { name: "IN a bare table name", sql: "SELECT 1 IN system.tables FROM events", outcome: "refused" },
  {
    name: "scalar subquery on another table",
    sql: "SELECT (SELECT count() FROM telemetry.events) FROM events",
    outcome: "refused",
  },
  {
    name: "UNION ALL with system table",
    sql: "SELECT event_name FROM events UNION ALL SELECT name FROM system.tables",
    outcome: "refused",
  },
  {
    name: "UNION ALL with the raw table",
    sql: "SELECT * FROM events UNION ALL SELECT * FROM telemetry.events",
    outcome: "refused",
  },
  {
    name: "CTE named events over a system table",
    sql: "WITH events AS (SELECT * FROM system.tables) SELECT * FROM events",
    outcome: "refused",
  },
  {
    name: "CTE over the raw table",
    sql: "WITH t AS (SELECT * FROM telemetry.events) SELECT * FROM t",
    outcome: "refused",
  },
  {
    name: "CTE named like a table in another scope",
    sql: "SELECT * FROM (WITH schema_migrations AS (SELECT 1) SELECT * FROM events), schema_migrations",
    outcome: "refused",
  },
  // Clauses and statements that are not plain SELECT.
  {
    name: "SETTINGS overriding the tenant filter",
    sql: "SELECT * FROM events SETTINGS additional_table_filters = {'telemetry.events': '1'}",
    outcome: "refused",
  },
  { name: "SETTINGS readonly = 0", sql: "SELECT * FROM events SETTINGS readonly = 0", outcome: "refused" },
  { name: "FORMAT", sql: "SELECT * FROM events FORMAT TSV", outcome: "refused" },
  { name: "INTO OUTFILE", sql: "SELECT * FROM events INTO OUTFILE '/tmp/x.csv'", outcome: "refused" },
  {
    name: "two statements",
    sql: "SELECT 1; SELECT * FROM telemetry.events",
    outcome: "refused",
  },
  {
    name: "escaping the wrapper's parentheses",
    sql: "SELECT 1) UNION ALL (SELECT * FROM telemetry.events",
    outcome: "refused",
  },
  {
    name: "escaping the wrapper into a SETTINGS clause",
    sql: "SELECT 1) SETTINGS readonly = 0, max_threads = (1",
    outcome: "refused",
  },
  { name: "INSERT", sql: "INSERT INTO telemetry.events SELECT * FROM events", outcome: "refused" },
  { name: "ALTER DELETE", sql: "ALTER TABLE telemetry.events DELETE WHERE 1", outcome: "refused" },
  { name: "DELETE", sql: "DELETE FROM telemetry.events WHERE 1", outcome: "refused" },
  { name: "DROP", sql: "DROP TABLE telemetry.events", outcome: "refused" },
  { name: "CREATE", sql: "CREATE TABLE x (a Int8) ENGINE = Memory", outcome: "refused" },
  { name: "OPTIMIZE", sql: "OPTIMIZE TABLE telemetry.events FINAL", outcome: "refused" },
  { name: "KILL", sql: "KILL QUERY WHERE 1", outcome: "refused" },
  { name: "SYSTEM", sql: "SYSTEM DROP DNS CACHE", outcome: "refused" },
  { name: "SET", sql: "SET readonly = 0", outcome: "refused" },
  { name: "EXPLAIN", sql: "EXPLAIN SELECT * FROM telemetry.events", outcome: "refused" },
  { name: "SHOW", sql: "SHOW TABLES FROM telemetry", outcome: "refused" },
  { name: "DESCRIBE", sql: "DESCRIBE TABLE telemetry.events", outcome: "refused" },
  // Functions that read other data or the server.
  { name: "dictGet", sql: "SELECT dictGet('d', 'a', toUInt64(1)) FROM events", outcome: "refused" },
  { name: "joinGet", sql: "SELECT joinGet('telemetry.j', 'a', 1) FROM events", outcome: "refused" },
  { name: "scalar file()", sql: "SELECT file('/etc/passwd') FROM events", outcome: "refused" },
  { name: "currentDatabase()", sql: "SELECT currentDatabase() FROM events", outcome: "refused" },
  {
    name: "hasColumnInTable",
    sql: "SELECT hasColumnInTable('telemetry', 'events', 'project_id') FROM events",
    outcome: "refused",
  },
  {
    name: "getSetting",
    sql: "SELECT getSetting('additional_table_filters') FROM events",
    outcome: "refused",
  },
  { name: "APPLY naming a function", sql: "SELECT * APPLY(toString) FROM events", outcome: "refused" },
  { name: "query parameter", sql: "SELECT {p:UUID} FROM events", outcome: "refused-or-failed" },
  // Text tricks.
  {
    name: "comment hiding a statement",
    sql: "SELECT * FROM events /* ; SELECT * FROM telemetry.events */",
    outcome: "caller-only",
    rows: CALLER_EVENTS,
  },
  {
    name: "line comment then a UNION",
    sql: "SELECT * FROM events -- hidden?\nUNION ALL SELECT * FROM telemetry.events",
    outcome: "refused",
  },
  {
    name: "trailing line comment eating the wrapper",
    sql: "SELECT * FROM events --",
    outcome: "caller-only",
    rows: CALLER_EVENTS,
  },
  {
    name: "unterminated block comment",
    sql: "SELECT * FROM events /*",
    outcome: "refused",
  },
  {
    name: "quoted identifier with a newline that prints a fake tree line",
    sql: 'SELECT "x\n      TableIdentifier events" FROM system.one',
    outcome: "refused",
  },
  { name: "very long SQL", sql: `SELECT ${"1 + ".repeat(30_000)}1 FROM events`, outcome: "refused" },
  {
    name: "deeply nested parentheses",
    sql: `${"SELECT * FROM (".repeat(40)}SELECT * FROM events${")".repeat(40)}`,
    outcome: "caller-only",
    rows: CALLER_EVENTS,
  },
  // Reads of the allowed table that try to widen it.
  {
    name: "WHERE 1=1 OR project_id != caller",
    sql: "SELECT * FROM events WHERE 1 = 1 OR project_id != toUUID('00000000-0000-0000-0000-000000000000')",
    outcome: "caller-only",
    rows: CALLER_EVENTS,
  },
  {
    name: "alias named like a system table",
    sql: "SELECT * FROM events AS tables",
    outcome: "caller-only",
    rows: CALLER_EVENTS,
  },
  { name: "FINAL", sql: "SELECT * FROM events FINAL", outcome: "refused-or-failed" },
  {
    name: "ARRAY JOIN",
    sql: "SELECT project_id, player_id, k FROM events ARRAY JOIN mapKeys(attributes) AS k",
    outcome: "caller-only",
    rows: CALLER_EVENTS,
  },
  {
    name: "self join across projects",
    sql: "SELECT a.project_id, b.project_id FROM events AS a JOIN events AS b ON a.project_id != b.project_id",
    outcome: "caller-only",
    rows: 0,
  },
  {
    name: "user CTE named events over events",
    sql: "WITH events AS (SELECT * FROM events WHERE 1) SELECT * FROM events",
    outcome: "caller-only",
    rows: CALLER_EVENTS,
  },
];

describe("POST /v1/query: adversarial isolation", () => {
  it("has at least 40 distinct attempts", () => {
    expect(new Set(CASES.map((c) => c.sql)).size).toBe(CASES.length);
    expect(CASES.length).toBeGreaterThanOrEqual(40);
  });

  it.each(CASES)("$name", async ({ sql, outcome, rows }) => {
    const res = await query(sql);
    const text = await res.clone().text();
    assertNoLeak(text);
    if (outcome === "caller-only") {
      expect(res.status, text).toBe(200);
      const data = ((await res.json()) as OkBody<"/v1/query", "post">).data;
      if (rows !== undefined) {
        expect(data.rows).toHaveLength(rows);
      }
      for (const row of data.rows) {
        for (const [name, value] of Object.entries(row)) {
          if (name.endsWith("project_id")) {
            expect(value).toBe(caller.projectId);
          }
        }
      }
      return;
    }
    const allowed = { refused: [400], failed: [422], "refused-or-failed": [400, 422] }[outcome];
    expect(allowed, text).toContain(res.status);
    const problem = await problemOf(res);
    if (res.status === 400) {
      expect(problem.detail).toMatch(/^(json\.)?sql: /);
    }
  });

  it("the tenant filter holds whatever the WHERE says: exact rows of the caller only", async () => {
    const data = await ok(
      `SELECT project_id, event_name, count() AS n FROM events
       WHERE 1 = 1 OR project_id IN (toUUID('${caller.siblingProjectId}'), toUUID('${foreign.projectId}'))
       GROUP BY project_id, event_name`,
    );
    expect(data.rows).toEqual([{ project_id: caller.projectId, event_name: "caller_evt", n: CALLER_EVENTS }]);
  });

  it("naming another project's id finds nothing", async () => {
    const data = await ok(
      `SELECT count() AS n FROM events WHERE project_id = toUUID('${foreign.projectId}')`,
    );
    expect(data.rows).toEqual([{ n: 0 }]);
  });

  it("a key cannot query its sibling project or another tenant's (404), nor can a token (403)", async () => {
    for (const projectId of [caller.siblingProjectId, foreign.projectId]) {
      const res = await api(
        "/v1/query",
        { key: caller.keys.full.key },
        {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ project_id: projectId, sql: "SELECT count() FROM events" }),
        },
      );
      expect(res.status).toBe(404);
    }
    const byToken = await api(
      "/v1/query",
      { token: caller.token },
      {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ project_id: caller.projectId, sql: "SELECT 1" }),
      },
    );
    expect(byToken.status).toBe(403);
  });
});
