import { z } from "@hono/zod-openapi";

/** ClickHouse parses at most 256 KiB of query text; a quarter of that is plenty for analytics. */
export const MAX_SQL_CHARS = 65_536;

export const QueryBodySchema = z
  .object({
    project_id: z.uuid().describe("The project whose events the query reads; the key's own project"),
    sql: z
      .string()
      .trim()
      .min(1)
      .max(MAX_SQL_CHARS)
      .describe(
        "One SELECT (WITH … SELECT and UNION ALL allowed) over the table `events`; no SETTINGS, FORMAT, " +
          "table functions or other tables",
      ),
    limit: z.number().int().min(1).max(10_000).default(1000).describe("Maximum rows returned"),
  })
  .openapi("QueryRequest");

export const QueryResultSchema = z
  .object({
    columns: z.array(z.object({ name: z.string(), type: z.string().describe("ClickHouse type") })),
    rows: z.array(z.record(z.string(), z.unknown())).describe("One object per row, keyed by column name"),
    rowCount: z.number().int().describe("Rows returned: the length of `rows`"),
    rows_read: z.number().int().describe("Rows ClickHouse read to answer"),
    elapsed_ms: z.number().int(),
    truncated: z.boolean().describe("More rows existed than `limit`"),
  })
  .openapi("QueryResult");
