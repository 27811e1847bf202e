// Dense player and session numbers for the bench's events, as ingest would have written them.
//
// WHY: in production the events consumer writes on every row the numbers its project's BatchClaims
// object gave the row's player and session (player_idx, session_idx: 0023_actor_numbers.sql,
// workers/shared/actors.ts), and the bitmap tables (actor_buckets, 0027_actor_buckets.sql, and
// player_dims, 0024_actor_bitmaps.sql) hold those numbers, skipping 0. The bench generates its events inside
// ClickHouse (analytics-data.ts, INSERT … SELECT) and never goes through the consumer: its rows are all
// 0, so the dashboard, insights and retention (which read the bitmaps) would answer 0 and disagree with
// their plain-SQL peers. This numbers them afterwards the way ingest numbers them: per project, from 1,
// in first-seen order (an id's first timestamp, then the id) for the effective player (the `player`
// column: player_id, or session_id when it is empty) and for session_id; then it rebuilds the two
// bitmap tables from their `_src` views, as the migrations do for rows stored before them (actor_buckets'
// hours only the last 32 days, its minutes the last 2: their TTLs); session_values, which carries the
// session numbers, is rebuilt per project day (numberSessionValues).
//
// HOW: the numbers of each kind go into a Join-engine table (project_id, id → n), and one synchronous
// mutation writes both columns with joinGet: it rewrites only those two columns of every part. The
// numbering of the whole table is redone whenever any row is unnumbered (a kept dir loaded before this
// existed, or grown by a later load): the numbers depend on every row's first timestamp, not only on
// the new rows'.
import type { ClickHouseClient } from "@clickhouse/client-web";
import { BITMAP_ROLLUPS } from "../../workers/api/erasure/rollups.js";

const PLAYERS = "telemetry.bench_player_numbers";
const SESSIONS = "telemetry.bench_session_numbers";
const HASHES = "telemetry.bench_player_hash_numbers";
const NO_PROJECT = "00000000-0000-0000-0000-000000000000";
const WHOLE = `whole = true, project = '${NO_PROJECT}', days = [], player = '', identified = []`;

/**
 * The bitmap tables and the rows of their `_src` view to keep (within actor_buckets' TTLs): every table
 * of the number backfill's (BITMAP_ROLLUPS in workers/api/erasure/rollups.ts), since the generator's rows
 * reach them unnumbered.
 */
const BITMAPS: Array<[table: string, where: string]> = [
  [
    "telemetry.actor_buckets",
    "WHERE grain = 'day' OR (grain = 'hour' AND bucket >= now() - INTERVAL 32 DAY) OR (grain = 'minute' AND bucket >= now() - INTERVAL 2 DAY)",
  ],
  ["telemetry.player_dims", ""],
  ["telemetry.compare_rollup", ""],
  ["telemetry.build_days", ""],
];

export type Numbering = {
  /** Rows without a player or session number before numbering. */
  unnumbered: number;
  players: number;
  sessions: number;
  /** Seconds: the numbers computed into the Join tables, the mutation, the bitmaps rebuilt, in all. */
  numbersS: number;
  updateS: number;
  bitmapsS: number;
  totalS: number;
};

async function scalar(ch: ClickHouseClient, query: string): Promise<number> {
  const rs = await ch.query({ query, format: "TabSeparated" });
  return Number((await rs.text()).trim());
}

/**
 * Numbers every event of every project when some are unnumbered (none: returns undefined and changes
 * nothing), then rebuilds the bitmap tables. `ch` needs a request timeout of minutes (a 100M table's
 * mutation).
 */
export async function numberBenchEvents(ch: ClickHouseClient): Promise<Numbering | undefined> {
  const unnumbered = await scalar(
    ch,
    "SELECT count() FROM telemetry.events WHERE player_idx = 0 OR session_idx = 0",
  );
  if (unnumbered === 0) {
    await numberFunnelEvents(ch);
    return undefined;
  }
  const t0 = performance.now();
  const counts: number[] = [];
  for (const [table, column] of [
    [PLAYERS, "player"],
    [SESSIONS, "session_id"],
  ] as const) {
    await ch.command({ query: `DROP TABLE IF EXISTS ${table}` });
    // Kept in memory only (persistent = 0): it lives for one mutation.
    await ch.command({
      query: `CREATE TABLE ${table} (project_id UUID, id String, n UInt32)
        ENGINE = Join(ANY, LEFT, project_id, id) SETTINGS persistent = 0`,
    });
    await ch.command({
      query: `INSERT INTO ${table}
        SELECT project_id, id, toUInt32(row_number() OVER (PARTITION BY project_id ORDER BY first, id))
        FROM (SELECT project_id, ${column} AS id, min(timestamp) AS first FROM telemetry.events
          GROUP BY project_id, id)`,
    });
    counts.push(await scalar(ch, `SELECT count() FROM ${table}`));
  }
  const t1 = performance.now();
  await ch.command({
    query: `ALTER TABLE telemetry.events UPDATE
        player_idx = joinGet('${PLAYERS}', 'n', project_id, player),
        session_idx = joinGet('${SESSIONS}', 'n', project_id, session_id)
      WHERE 1`,
    // joinGet reads another table: ClickHouse calls that nondeterministic in a mutation.
    clickhouse_settings: { mutations_sync: "2", allow_nondeterministic_mutations: 1 },
  });
  const t2 = performance.now();
  for (const table of [PLAYERS, SESSIONS]) {
    await ch.command({ query: `DROP TABLE IF EXISTS ${table}` });
  }
  await rebuildBenchBitmaps(ch);
  await numberFunnelEvents(ch);
  const t3 = performance.now();
  const left = await scalar(
    ch,
    "SELECT count() FROM telemetry.events WHERE player_idx = 0 OR session_idx = 0",
  );
  if (left !== 0) {
    throw new Error(`numbering left ${left} rows unnumbered`);
  }
  const s = (ms: number) => Math.round(ms / 100) / 10;
  return {
    unnumbered,
    players: counts[0] ?? 0,
    sessions: counts[1] ?? 0,
    numbersS: s(t1 - t0),
    updateS: s(t2 - t1),
    bitmapsS: s(t3 - t2),
    totalS: s(t3 - t0),
  };
}

/**
 * The bitmap tables rebuilt from the numbered events (numberBenchEvents' last step; alone with
 * BENCH_REBUILD_BITMAPS=1, after a run that stopped between the numbering and the bitmaps).
 */
export async function rebuildBenchBitmaps(ch: ClickHouseClient): Promise<void> {
  const missing = BITMAP_ROLLUPS.filter((t) => !BITMAPS.some(([table]) => table === t));
  if (missing.length) {
    throw new Error(`bench numbering: no rebuild of ${missing.join(", ")} (BITMAPS)`);
  }
  for (const [table, where] of BITMAPS) {
    await ch.command({ query: `TRUNCATE TABLE ${table}` });
    await ch.command({ query: `INSERT INTO ${table} SELECT * FROM ${table}_src(${WHOLE}) ${where}` });
  }
}

/**
 * The funnel events' numbers (0029_funnel_anchors.sql), which hold the player's hash, not the player:
 * each row takes its player's number from the events, when any row is unnumbered (the migration does the
 * same for the rows stored before it).
 */
async function numberFunnelEvents(ch: ClickHouseClient): Promise<void> {
  if ((await scalar(ch, "SELECT count() FROM telemetry.funnel_events WHERE player_idx = 0")) === 0) {
    return;
  }
  await ch.command({ query: `DROP TABLE IF EXISTS ${HASHES}` });
  await ch.command({
    query: `CREATE TABLE ${HASHES} (project_id UUID, h UInt64, n UInt32)
      ENGINE = Join(ANY, LEFT, project_id, h) SETTINGS persistent = 0`,
  });
  await ch.command({
    query: `INSERT INTO ${HASHES} SELECT project_id, cityHash64(player) AS h, max(player_idx)
      FROM telemetry.events GROUP BY project_id, h`,
  });
  await ch.command({
    query: `ALTER TABLE telemetry.funnel_events UPDATE player_idx = joinGet('${HASHES}', 'n', project_id, player_hash)
      WHERE player_idx = 0`,
    clickhouse_settings: { mutations_sync: "2", allow_nondeterministic_mutations: 1 },
  });
  await ch.command({ query: `DROP TABLE IF EXISTS ${HASHES}` });
}

/**
 * session_values' rows without their session number (0030_session_medians.sql added the column: a kept
 * dir loaded before it holds 0 on every row), rebuilt from the numbered events, one project day per
 * statement (a whole 20M rebuild in one statement outlasts the HTTP client's wait). Returns the seconds,
 * or undefined when every row has its number.
 */
export async function numberSessionValues(ch: ClickHouseClient): Promise<number | undefined> {
  const zero = await scalar(ch, "SELECT count() FROM telemetry.session_values WHERE session_idx = 0");
  if (!zero) {
    return undefined;
  }
  const started = performance.now();
  const rs = await ch.query({
    query: `SELECT DISTINCT toString(project_id) AS p, toString(toDate(timestamp)) AS d FROM telemetry.events
      WHERE build_id != '' ORDER BY p, d`,
    format: "JSONEachRow",
  });
  const days = await rs.json<{ p: string; d: string }>();
  await ch.command({ query: "TRUNCATE TABLE telemetry.session_values" });
  for (const { p, d } of days) {
    await ch.command({
      query: `INSERT INTO telemetry.session_values SELECT * FROM telemetry.session_values_src(whole = false,
        project = {p:UUID}, days = [{d:Date}], player = '', identified = [])`,
      query_params: { p, d },
    });
  }
  return Number(((performance.now() - started) / 1000).toFixed(1));
}
