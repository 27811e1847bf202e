import type { ClickHouseClient } from "@clickhouse/client-web";
import { isClickHouseTimeout } from "../../shared/clickhouse.js";
import { DependencyDown } from "../../shared/errors.js";

export type Params = Record<string, unknown>;

/**
 * What a column of a SELECT holds, as the JSON format sends it: "string" for text the caller uses as
 * is (names, formatted dates), "unknown" for numbers, which chdb and ClickHouse may send as numbers or
 * as strings (64-bit integers) and the caller reads through num() or a finite check.
 */
export type ColumnKind = "string" | "string | null" | "unknown";

/** The row a SELECT with these columns gives. */
export type RowOf<C extends Record<string, ColumnKind>> = {
  [K in keyof C]: C[K] extends "string" ? string : C[K] extends "string | null" ? string | null : unknown;
};

/** Whether a row has every column, with the kind declared: once per row, a few typeof checks. */
function isRowOf<C extends Record<string, ColumnKind>>(
  row: Record<string, unknown>,
  columns: C,
): row is Record<string, unknown> & RowOf<C> {
  for (const name in columns) {
    const v = row[name];
    const kind = columns[name];
    const ok =
      kind === "string"
        ? typeof v === "string"
        : kind === "string | null"
          ? v === null || typeof v === "string"
          : v !== undefined;
    if (!ok) {
      return false;
    }
  }
  return true;
}

/**
 * Runs one SELECT with bound parameters and returns its rows, typed by `columns` (the names the SELECT
 * gives, and what each holds). A row that lacks one, or has text where text is not, throws: the SQL
 * and its declared row have drifted apart.
 */
export async function selectRows<const C extends Record<string, ColumnKind>>(
  ch: ClickHouseClient,
  query: string,
  params: Params,
  columns: C,
): Promise<RowOf<C>[]> {
  // Optional filters pass undefined: such a parameter is simply not sent.
  const bound = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
  // One JSON document parsed at once, rather than the client's row-by-row stream of JSONEachRow,
  // which costs more in workerd on results of thousands of rows (heatmaps). JSONCompact sends each row
  // as an array, without repeating the column names: about half the bytes of JSON on a heatmap, and a
  // Worker's cost of receiving a response grows with its bytes (docs/architecture.md: "Reaching
  // Postgres and ClickHouse").
  const rs = await ch.query({ query, query_params: bound, format: "JSONCompact" }).catch((err: unknown) => {
    // The client's request_timeout (30 s) gives a bare Error("Timeout error.") with no cause: ClickHouse
    // did not answer in time (overloaded, or a read far larger than usual). Retryable like a dependency
    // that is down, never a bare 500.
    throw isClickHouseTimeout(err) ? new DependencyDown("ClickHouse", err) : err;
  });
  let result: { meta?: Array<{ name: string }>; data: unknown[][] };
  try {
    result = await rs.json<unknown[]>();
  } catch (err) {
    // The answer began as a 200 and then broke off: the connection dropped, or a failure after the
    // first bytes appended its message to the JSON. Retryable like a dependency that is down, never
    // a bare 500.
    throw new DependencyDown("ClickHouse", err);
  }
  const { meta = [], data } = result;
  const names = meta.map((m) => m.name);
  // Plain loops: this runs for every cell of a heatmap, and Object.fromEntries over mapped pairs
  // showed up in the Worker's CPU profile.
  const rows: RowOf<C>[] = new Array(data.length);
  for (let r = 0; r < data.length; r++) {
    const values = data[r] ?? [];
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) {
      row[names[i] ?? ""] = values[i];
    }
    if (!isRowOf(row, columns)) {
      throw new Error(`ClickHouse row does not match its columns (${Object.keys(columns).join(", ")})`);
    }
    rows[r] = row;
  }
  return rows;
}

/** chdb and ClickHouse may serialize 64-bit integers as strings; NaN never leaves this function. */
export function num(v: unknown): number {
  const n = Number(v ?? 0);
  return Number.isFinite(n) ? n : 0;
}

/** Percentage rounded to 2 decimals, 0 when the divisor is 0. */
export function pct(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 100;
}

/** Code-unit order, which for the ASCII names SDKs send is ClickHouse's byte order too. */
export function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Exact distinct counts hash their strings to 64 bits first: uniqExact over UInt64 is several times
 * faster than over String (which hashes to 128 bits itself). Two different values would have to
 * collide in cityHash64 to be miscounted: about 1 in 10^7 at a million distinct values.
 */
export const distinct = (column: string) => `uniqExact(cityHash64(${column}))`;
