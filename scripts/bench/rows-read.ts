import type { ClickHouseClient } from "@clickhouse/client-web";

/**
 * The client, keeping each statement it runs; `take` answers the rows the primary keys leave to read
 * for them (EXPLAIN ESTIMATE, summed over statements and tables) and forgets them. (chdb's own
 * read_rows counts only a statement's last step.)
 */
export function counting(ch: ClickHouseClient) {
  let seen: Array<Parameters<ClickHouseClient["query"]>[0]> = [];
  const client = new Proxy(ch, {
    get(target, prop, receiver) {
      if (prop === "query") {
        return (params: Parameters<ClickHouseClient["query"]>[0]) => {
          seen.push(params);
          return target.query(params);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  const take = async () => {
    const statements = seen;
    seen = [];
    let rows = 0;
    for (const p of statements) {
      const rs = await ch.query({ ...p, query: `EXPLAIN ESTIMATE ${p.query}`, format: "JSONEachRow" });
      for (const r of await rs.json<{ rows: string | number }>()) {
        rows += Number(r.rows);
      }
    }
    return rows;
  };
  return { client, take };
}

/** What ClickHouse read for some work: rows and uncompressed bytes, over every statement it ran. */
export type Read = { rows: number; bytes: number };

const COUNTERS = `SELECT event, value FROM system.events WHERE event IN ('SelectedRows', 'SelectedBytes')`;

async function counters(ch: ClickHouseClient): Promise<Read> {
  const rs = await ch.query({ query: COUNTERS, format: "JSONEachRow" });
  const read: Read = { rows: 0, bytes: 0 };
  for (const r of await rs.json<{ event: string; value: string | number }>()) {
    read[r.event === "SelectedRows" ? "rows" : "bytes"] = Number(r.value);
  }
  return read;
}

/**
 * The rows and bytes ClickHouse read while `work` ran, by anyone (an HTTP request's Worker included):
 * the difference of the server's own counters (`system.events` SelectedRows / SelectedBytes, what
 * X-ClickHouse-Summary's read_rows / read_bytes sum per statement: every table and subquery a
 * statement reads, granules the primary key keeps), less the reading of the counters themselves.
 * chdb has no `system.query_log` and its per-statement summary counts only the result, hence the
 * counters. Meaningful only while nothing else queries the server (the benchmarks run alone on
 * their own stack; background merges are not counted).
 */
export async function readBy(ch: ClickHouseClient, work: () => Promise<unknown>): Promise<Read> {
  const a = await counters(ch);
  const b = await counters(ch);
  await work();
  const c = await counters(ch);
  // b − a is one reading of the counters (system.events' own rows); c − b holds one more.
  return {
    rows: Math.max(0, c.rows - b.rows - (b.rows - a.rows)),
    bytes: Math.max(0, c.bytes - b.bytes - (b.bytes - a.bytes)),
  };
}
