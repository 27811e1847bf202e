import {
  type ClickHouseClient,
  ClickHouseError,
  type ClickHouseSettings,
  SettingsMap,
} from "@clickhouse/client-web";
import { CH_EVENTS } from "../../shared/clickhouse.js";
import { ApiError } from "../../shared/errors.js";
import { chTime } from "../window.js";
import { AstShapeError, parseAstDump } from "./ast.js";
import { projectEventsSelect } from "./events-view.js";
import { checkAllowed, checkResolvedTables, QueryRefused, userPartOf } from "./validate.js";

export type QueryLimits = {
  maxExecutionSeconds: number;
  maxMemoryBytes: number;
  maxBytesToRead: number;
};

/** Per query; a Worker waits at most request_timeout (30 s) for ClickHouse anyway. */
export const QUERY_LIMITS: QueryLimits = {
  maxExecutionSeconds: 10,
  maxMemoryBytes: 1_000_000_000,
  maxBytesToRead: 20_000_000_000,
};

export type QueryResult = {
  columns: Array<{ name: string; type: string }>;
  rows: Array<Record<string, unknown>>;
  /** Rows returned (rows.length): clients that tabulate the answer look for it beside `rows`. */
  rowCount: number;
  rows_read: number;
  elapsed_ms: number;
  truncated: boolean;
};

type Prepared = { statement: string; params: Record<string, string>; sql: string; offset: number };
type Run = Prepared & { guard: ClickHouseSettings; limits: QueryLimits };

/**
 * Validates, rewrites and runs a user's SELECT against one project's events. Layers, each enforced
 * here and none skippable:
 * 1. the statement run is `WITH events AS (<project's rows>) SELECT * FROM (<user sql>)`, so the name
 *    `events` means the project's rows, filtered at the read (primary-key pruning);
 * 2. ClickHouse's own parser (EXPLAIN AST of that very statement) and an allow-list walk of the tree;
 * 3. ClickHouse's analyzer (EXPLAIN QUERY TREE): every table actually read is telemetry.events;
 * 4. execution with readonly=1, additional_table_filters on telemetry.events keyed by the project, and
 *    bounds on time, memory, bytes read and result rows.
 */
export async function runUserQuery(
  ch: ClickHouseClient,
  projectId: string,
  sql: string,
  limit: number,
  limits: QueryLimits = QUERY_LIMITS,
  retainedFromMs = 0,
): Promise<QueryResult> {
  const retainedFrom = chTime(retainedFromMs);
  const run: Run = {
    ...prepare(projectId, sql, retainedFrom),
    guard: guardSettings(projectId, limits, retainedFrom),
    limits,
  };
  await checkParseTree(ch, run);
  await checkQueryTree(ch, run);
  return execute(ch, run, limit);
}

function prepare(projectId: string, sql: string, retainedFrom: string): Prepared {
  // Parameter names the user cannot guess: their text can never refer to them.
  const param = `p_${crypto.randomUUID().replaceAll("-", "")}`;
  const horizon = `h_${crypto.randomUUID().replaceAll("-", "")}`;
  // The newlines keep a trailing `--` comment in the user's text from swallowing our parenthesis.
  // Rows before the studio's retention horizon are not in `events`, merged away or not.
  const rows = projectEventsSelect(param, `timestamp >= {${horizon}:DateTime64(6, 'UTC')}`);
  const head = `WITH events AS (${rows}) SELECT * FROM (\n`;
  return {
    statement: `${head}${sql}\n)`,
    params: { [param]: projectId, [horizon]: retainedFrom },
    sql,
    offset: head.length,
  };
}

function guardSettings(projectId: string, limits: QueryLimits, retainedFrom: string): ClickHouseSettings {
  // SettingsMap does not escape; a UUID (validated before we get here) and a DateTime64 literal of
  // ours have nothing to escape. The horizon is in the row filter too: no read of telemetry.events
  // in this statement, however written, sees an expired row.
  const filter = `project_id = toUUID(''${projectId}'') AND timestamp >= toDateTime64(''${retainedFrom}'', 6, ''UTC'')`;
  return {
    readonly: "1",
    additional_table_filters: SettingsMap.from({ [CH_EVENTS]: filter }),
    max_execution_time: limits.maxExecutionSeconds,
    max_memory_usage: String(limits.maxMemoryBytes),
    max_bytes_to_read: String(limits.maxBytesToRead),
  };
}

async function checkParseTree(ch: ClickHouseClient, run: Run): Promise<void> {
  let lines: string[];
  try {
    // No settings here: the local engine would splice them into the explained statement itself.
    lines = await explain(ch, "AST", run, {});
  } catch (err) {
    throw refusalOrFailure(err, () => true, run, explainPrefix("AST").length);
  }
  try {
    checkAllowed(userPartOf(parseAstDump(lines), EXPLAIN_FORMAT));
  } catch (err) {
    if (err instanceof QueryRefused || err instanceof AstShapeError) {
      throw badSql(err instanceof AstShapeError ? `sql: ${err.message}` : err.message);
    }
    throw err;
  }
}

const UNKNOWN_TABLE_CODES = new Set(["60", "81"]);

async function checkQueryTree(ch: ClickHouseClient, run: Run): Promise<void> {
  let lines: string[];
  try {
    lines = await explain(ch, "QUERY TREE", run, run.guard);
  } catch (err) {
    // A name that resolves to no table at all is refused like any other table; the rest (unknown
    // column, type mismatch) is a failure of a well-formed query.
    throw refusalOrFailure(
      err,
      (e) => UNKNOWN_TABLE_CODES.has(e.code),
      run,
      explainPrefix("QUERY TREE").length,
    );
  }
  try {
    checkResolvedTables(lines, CH_EVENTS);
  } catch (err) {
    throw err instanceof QueryRefused ? badSql(err.message) : err;
  }
}

const EXPLAIN_FORMAT = "JSONEachRow";

/** What precedes our statement in an EXPLAIN: ClickHouse's positions count it too. */
function explainPrefix(kind: "AST" | "QUERY TREE"): string {
  return `EXPLAIN ${kind} `;
}

async function explain(
  ch: ClickHouseClient,
  kind: "AST" | "QUERY TREE",
  run: Run,
  settings: ClickHouseSettings,
): Promise<string[]> {
  const rs = await ch.query({
    query: `${explainPrefix(kind)}${run.statement}`,
    query_params: run.params,
    format: EXPLAIN_FORMAT,
    clickhouse_settings: settings,
  });
  return (await rs.json<{ explain: string }>()).map((r) => r.explain);
}

type JsonResult = {
  meta?: Array<{ name: string; type: string }>;
  data: Array<Record<string, unknown>>;
  statistics?: { elapsed?: number; rows_read?: number | string };
};

async function execute(ch: ClickHouseClient, run: Run, limit: number): Promise<QueryResult> {
  const started = Date.now();
  try {
    const rs = await ch.query({
      query: run.statement,
      query_params: run.params,
      format: "JSON",
      clickhouse_settings: {
        ...run.guard,
        // One row beyond the limit tells us whether there were more; `break` stops reading there.
        max_result_rows: String(limit + 1),
        result_overflow_mode: "break",
        output_format_json_quote_64bit_integers: 0,
        // At most limit+1 rows: buffer them server-side so a failure midway is an error status, not a
        // 200 whose body breaks off.
        wait_end_of_query: 1,
      },
    });
    const result = await rs.json<JsonResult>();
    const elapsed = result.statistics?.elapsed;
    const rows = result.data.slice(0, limit);
    return {
      columns: (result.meta ?? []).map((m) => ({ name: m.name, type: m.type })),
      rows,
      rowCount: rows.length,
      rows_read: Number(result.statistics?.rows_read ?? 0),
      elapsed_ms: elapsed === undefined ? Date.now() - started : Math.round(elapsed * 1000),
      truncated: result.data.length > limit,
    };
  } catch (err) {
    throw refusalOrFailure(err, () => false, run);
  }
}

const LIMIT_MESSAGES: Record<string, (l: QueryLimits) => string> = {
  "159": (l) => `timeout: the query ran longer than its limit of ${l.maxExecutionSeconds} s`,
  "241": (l) => `memory limit: the query needed more than ${l.maxMemoryBytes} bytes of memory`,
  "307": (l) => `read limit: the query would read more than ${l.maxBytesToRead} bytes`,
};

/**
 * ClickHouse's answer as our error: a 400 refusal when `isRefusal`, else a 422 execution failure.
 * `before` is how many characters the text sent put before our statement (an EXPLAIN's prefix).
 */
function refusalOrFailure(
  err: unknown,
  isRefusal: (e: ClickHouseError) => boolean,
  run: Run,
  before = 0,
): unknown {
  if (!(err instanceof ClickHouseError)) {
    return err;
  }
  if (err.code === "62") {
    return badSql(syntaxDetail(err.message, run, before));
  }
  const detail =
    LIMIT_MESSAGES[err.code]?.(run.limits) ?? `${err.type ?? "ERROR"}: ${cleanMessage(err.message)}`;
  if (isRefusal(err)) {
    return badSql(`sql: ${detail}`);
  }
  return new ApiError("UNPROCESSABLE", `Query failed: ${detail}`, {
    extensions: { clickhouse_code: Number(err.code), timeout: err.code === "159" },
  });
}

const SELECT_START = /^\s*(\(|select\b|with\b)/i;

/**
 * Positions in ClickHouse's message count from the start of the text sent (`before` characters ahead of
 * our statement, whose user part starts at `run.offset`); say them in the user's text, 1-based as
 * ClickHouse counts. Its quote of the text from the failing token on ends with our closing parenthesis
 * and the client's FORMAT clause: those are not the user's.
 */
function syntaxDetail(message: string, run: Run, before: number): string {
  if (!SELECT_START.test(run.sql)) {
    return "sql: only a SELECT statement (WITH … SELECT, UNION ALL) is allowed";
  }
  const message1 = cleanMessage(message);
  const at = /failed at position (\d+)/.exec(message1);
  const position = at ? Number(at[1]) - before - run.offset : null;
  if (position !== null && (position < 1 || position > run.sql.length)) {
    // The parser stopped in our wrapper: the user's text ended too early (an unfinished expression, or
    // a parenthesis left open that our closing one seemed to match). Its "expected" list is about our
    // text, so say where the user's ends instead.
    return `sql: Syntax error: failed at position ${run.sql.length + 1} (the end of the query): an expression is unfinished or a parenthesis is not closed`;
  }
  const rebased = message1
    .replace(/failed at position (\d+)/, `failed at position ${position}`)
    .replace(/ \(line \d+, col \d+\)/, "")
    .replace(/\n\)\s*(?:FORMAT \w+)?(?=\. Expected|\.?$)/, "");
  return `sql: ${rebased}`;
}

function badSql(detail: string): ApiError {
  return new ApiError("BAD_REQUEST", detail, { extensions: { field: "sql" } });
}

// ClickHouse repeats the whole statement, our rewrite included, after "In scope"; that echo says
// nothing the caller does not know.
function cleanMessage(message: string): string {
  return message
    .replace(/^Code: \d+\. DB::Exception: /, "")
    .replace(/: In scope [\s\S]*$/, "")
    .replace(/\. \([A-Z_]+\)\s*(\(version [^)]*\))?\s*$/, "")
    .trim();
}
