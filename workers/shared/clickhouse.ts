import { type ClickHouseClient, createClient, parseError } from "@clickhouse/client-web";
import type { Config } from "./config.js";
import { DependencyDown } from "./errors.js";

/** Every table lives in this database; SQL names it explicitly rather than relying on a default. */
export const CH_DB = "telemetry";

/** Each table's qualified name, written once (schema/clickhouse/migrations create them). */
export const CH_EVENTS = `${CH_DB}.events`;
// A Null table shaped as the events plus `replay_targets` (0032_rollup_replay.sql): inserting a project's
// days of events into it refills the named rollups through their replay views, in one read of the events.
export const CH_EVENTS_REPLAY = `${CH_DB}.events_replay`;
// The exact distinct counts (0024_actor_bitmaps.sql, 0027_actor_buckets.sql): bitmaps of the dense player
// and session numbers (0023_actor_numbers.sql) per project and UTC day, hour and minute (one table, a
// `grain` column), and per day, event name and dimension. Each has a `${table}_src` view (the erasure and
// the number backfill rebuild days from it).
export const CH_ACTOR_BUCKETS = `${CH_DB}.actor_buckets`;
export const CH_PLAYER_DIMS = `${CH_DB}.player_dims`;
// The status KPIs' totals (0025_batch_totals.sql): events and latest event per project, day and batch.
export const CH_BATCH_TOTALS = `${CH_DB}.batch_totals`;
// Rollups of whole UTC days (schema/clickhouse/migrations/0004_rollups.sql); each has a parameterized
// `${table}_src` view that the player erasure rebuilds it from.
export const CH_HEATMAP_CELLS = `${CH_DB}.heatmap_cells`;
export const CH_ALERT_CELLS = `${CH_DB}.alert_cells`;
export const CH_DAILY_EVENTS = `${CH_DB}.daily_events`;
export const CH_BUILD_DAYS = `${CH_DB}.build_days`;
// builds/compare's samples per build and day, and per build, day, map and platform: one table, a `level`
// column (0028_compare_rollup.sql).
export const CH_COMPARE_ROLLUP = `${CH_DB}.compare_rollup`;
// Build regressions (0012_session_values.sql): per build, day, map, session hash and hardware key, and
// per build, day, map cell and session hash, each session's mergeable median states.
export const CH_SESSION_VALUES = `${CH_DB}.session_values`;
export const CH_SESSION_CELLS = `${CH_DB}.session_cells`;
// Closed days' histograms of session medians (0030_session_medians.sql, api/analytics/session-medians.ts):
// the stored days with their stamps, the histograms, and the day's rows of sessions seen on other days.
export const CH_SESSION_MEDIAN_DAYS = `${CH_DB}.session_median_days`;
export const CH_SESSION_MEDIAN_HIST = `${CH_DB}.session_median_hist`;
export const CH_SESSION_MEDIAN_CARRY = `${CH_DB}.session_median_carry`;
// Closed days' session verdicts (0039_session_verdict_days.sql, api/analytics/session-verdicts.ts): the
// counted sessions of a stored day by verdict, with their heartbeats' causes, per build and grouping.
export const CH_SESSION_VERDICT_HIST = `${CH_DB}.session_verdict_hist`;
// The positioned performance samples ordered by map and base cell (0005_cell_samples.sql): the cell
// drill-down reads one cell's rows. Holds player identifiers (an erasure step deletes from it).
export const CH_CELL_SAMPLES = `${CH_DB}.cell_samples`;
// Funnels' per-player read (0008_funnel_retention.sql): the step events by name, day and player hash
// (an erasure step deletes from it).
export const CH_FUNNEL_EVENTS = `${CH_DB}.funnel_events`;
// Funnels' stored anchor hours and the definitions read lately (0029_funnel_anchors.sql,
// api/analytics/funnel-anchors.ts).
export const CH_FUNNEL_ANCHORS = `${CH_DB}.funnel_anchors`;
export const CH_FUNNEL_DEFINITIONS = `${CH_DB}.funnel_definitions`;
// An erasure's staged keys (0042_erasure_keys.sql, api/erasure/keys.ts): the rollup keys and dense numbers
// of the erased events, read by the erasure's rebuild; deleted when it completes.
export const CH_ERASURE_KEYS = `${CH_DB}.erasure_keys`;
// The engine SDKs' hardware context (0010_session_devices.sql): the latest `device_info` event per
// project, day and session hash, attached to a session's samples at read time (api/analytics/device.ts).
export const CH_SESSION_DEVICES = `${CH_DB}.session_devices`;

const clients = new WeakMap<Config, Map<number, ClickHouseClient>>();

/**
 * `requestTimeoutMs` bounds the whole exchange, a streamed response body included. One client per
 * config and timeout for the isolate: it holds no connection (every query is one fetch), so requests
 * share it rather than each building its own.
 */
export function openClickHouse(config: Config, requestTimeoutMs = 30_000): ClickHouseClient {
  let byTimeout = clients.get(config);
  if (!byTimeout) {
    byTimeout = new Map();
    clients.set(config, byTimeout);
  }
  let client = byTimeout.get(requestTimeoutMs);
  if (!client) {
    client = newClient(config, requestTimeoutMs);
    byTimeout.set(requestTimeoutMs, client);
  }
  return client;
}

function newClient(config: Config, requestTimeoutMs: number): ClickHouseClient {
  return createClient({
    url: config.CLICKHOUSE_URL,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    request_timeout: requestTimeoutMs,
    // The Worker's fetch; keep-alive is the platform's business.
    keep_alive: { enabled: false },
    // Results come gzip'd (Accept-Encoding + enable_http_compression) and the runtime's fetch inflates
    // them natively: a Worker pays for every byte it receives, and a heatmap is hundreds of KB of JSON.
    compression: { response: true },
    fetch: guardedFetch,
  });
}

/**
 * The Worker's fetch, with "ClickHouse is not there" made explicit: a refused or dropped connection, or a
 * gateway in front of it answering 502-504, becomes DependencyDown (a retryable 503 at the error door).
 * ClickHouse's own errors (bad SQL, limits) still come back as responses the client parses.
 */
const guardedFetch: typeof fetch = async (input, init) => {
  let res: Response;
  try {
    res = await fetch(input, init);
  } catch (err) {
    if (init?.signal?.aborted) {
      throw err;
    }
    throw new DependencyDown("ClickHouse", err);
  }
  if (res.status >= 502 && res.status <= 504 && !res.headers.has("x-clickhouse-exception-code")) {
    await res.body?.cancel();
    throw new DependencyDown("ClickHouse", new Error(`ClickHouse answered ${res.status}`));
  }
  return res;
};

/**
 * An INSERT whose rows are bytes in a binary format (RowBinary): the statement goes in the URL and the
 * rows are the body, as ClickHouse's HTTP interface takes them. The web client cannot send one (its
 * insert() encodes JSON values and its exec() sends a string), so this is the client's request without
 * it, failing the same ways: ClickHouse's exception (a refused insert: nothing stored) is a
 * ClickHouseError, an unreachable server DependencyDown, and a timeout a plain Error (the insert may
 * still commit on the server).
 */
export async function insertBinary(
  config: Config,
  statement: string,
  body: Uint8Array,
  settings: Record<string, string | number> = {},
  requestTimeoutMs = 30_000,
): Promise<void> {
  const url = new URL(config.CLICKHOUSE_URL);
  url.searchParams.set("query", statement);
  for (const [name, value] of Object.entries(settings)) {
    url.searchParams.set(name, String(value));
  }
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), requestTimeoutMs);
  try {
    const res = await guardedFetch(url, {
      method: "POST",
      body,
      headers: {
        Authorization: `Basic ${btoa(`${config.CLICKHOUSE_USER}:${config.CLICKHOUSE_PASSWORD ?? ""}`)}`,
      },
      signal: abort.signal,
    });
    const text = await res.text();
    if (res.status >= 300 || res.headers.has("x-clickhouse-exception-code")) {
      throw parseError(text);
    }
  } catch (err) {
    if (abort.signal.aborted) {
      throw new Error("Timeout error.");
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether a client call failed on its own request_timeout: @clickhouse/client-web rejects with a plain
 * Error of this message and no cause (its web connection's timer), and insertBinary does the same.
 */
export function isClickHouseTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === "Timeout error.";
}

/** The connection user SQL runs on: the read-only query user where one is configured. */
export function openQueryClickHouse(config: Config): ClickHouseClient {
  if (!config.CLICKHOUSE_QUERY_USER) {
    return openClickHouse(config);
  }
  return openClickHouse({
    ...config,
    CLICKHOUSE_USER: config.CLICKHOUSE_QUERY_USER,
    CLICKHOUSE_PASSWORD: config.CLICKHOUSE_QUERY_PASSWORD,
  });
}
