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
