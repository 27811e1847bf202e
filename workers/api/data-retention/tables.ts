import {
  CH_ACTOR_BUCKETS,
  CH_ALERT_CELLS,
  CH_BATCH_TOTALS,
  CH_BUILD_DAYS,
  CH_CELL_SAMPLES,
  CH_COMPARE_ROLLUP,
  CH_DAILY_EVENTS,
  CH_ERASURE_KEYS,
  CH_EVENTS,
  CH_FUNNEL_ANCHORS,
  CH_FUNNEL_DEFINITIONS,
  CH_FUNNEL_EVENTS,
  CH_HEATMAP_CELLS,
  CH_PLAYER_DIMS,
  CH_SESSION_CELLS,
  CH_SESSION_DEVICES,
  CH_SESSION_MEDIAN_CARRY,
  CH_SESSION_MEDIAN_DAYS,
  CH_SESSION_MEDIAN_HIST,
  CH_SESSION_VALUES,
  CH_SESSION_VERDICT_HIST,
} from "../../shared/clickhouse.js";

/**
 * A ClickHouse table the retention purge reaches, and the UTC date a row belongs to. `ids`: the rows
 * hold a player or session identifier (plain, hashed, inside a uniq/uniqExact state of hashes, or a
 * bitmap of dense numbers the project's BatchClaims object maps back to ids).
 */
export type RetainedTable = { table: string; day: string; ids: boolean };

/**
 * Every table of telemetry rows (a test checks that none is missing: test/workers/data-retention.test.ts).
 * The purge deletes a project's rows dated before its horizon from all of them, the id-free
 * aggregates included: every read stops at the horizon (window.ts), so keeping them longer would
 * cost disk and serve no one. Migrations 0015 and 0021 give each one the plan maximum as its own TTL.
 */
export const RETAINED_TABLES: readonly RetainedTable[] = [
  { table: CH_EVENTS, day: "toDate(timestamp)", ids: true },
  { table: CH_CELL_SAMPLES, day: "toDate(timestamp)", ids: true },
  { table: CH_FUNNEL_EVENTS, day: "toDate(timestamp)", ids: true },
  // Bitmaps of dense numbers: ids in the sense that the number leads back to the player while the
  // project's mapping holds it (0024_actor_bitmaps.sql, 0027_actor_buckets.sql). actor_buckets' hours and
  // minutes also have shorter TTLs of their own (32 and 2 days).
  { table: CH_ACTOR_BUCKETS, day: "day", ids: true },
  { table: CH_PLAYER_DIMS, day: "day", ids: true },
  { table: CH_SESSION_DEVICES, day: "day", ids: true },
  { table: CH_SESSION_VALUES, day: "day", ids: true },
  { table: CH_SESSION_CELLS, day: "day", ids: true },
  // Closed days' session medians (0030_session_medians.sql): session hashes in the carried rows, session
  // numbers in the days' bitmaps.
  { table: CH_SESSION_MEDIAN_DAYS, day: "day", ids: true },
  { table: CH_SESSION_MEDIAN_CARRY, day: "day", ids: true },
  { table: CH_SESSION_MEDIAN_HIST, day: "day", ids: false },
  { table: CH_SESSION_VERDICT_HIST, day: "day", ids: false },
  { table: CH_BUILD_DAYS, day: "day", ids: true },
  { table: CH_COMPARE_ROLLUP, day: "day", ids: true },
  { table: CH_HEATMAP_CELLS, day: "day", ids: false },
  { table: CH_ALERT_CELLS, day: "day", ids: false },
  { table: CH_DAILY_EVENTS, day: "day", ids: false },
  { table: CH_BATCH_TOTALS, day: "day", ids: false },
  // Funnels' stored anchor hours, bitmaps of dense numbers, and the definitions read (0029_funnel_anchors.sql).
  { table: CH_FUNNEL_ANCHORS, day: "day", ids: true },
  { table: CH_FUNNEL_DEFINITIONS, day: "toDate(read_at)", ids: false },
  // An erasure's staged keys (0042_erasure_keys.sql): dense numbers, deleted when the erasure completes.
  { table: CH_ERASURE_KEYS, day: "day", ids: true },
];
