import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { clickhouseQuery } from "./local/clickhouse-http.js";

const root = fileURLToPath(new URL("..", import.meta.url));
export const PG_MIGRATIONS = `${root}schema/pg/migrations`;
export const CH_MIGRATIONS = `${root}schema/clickhouse/migrations`;

/** Applies drizzle-kit's generated migrations (schema/pg/migrations), tracked by drizzle itself. */
export async function migratePostgres(databaseUrl: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    await migrate(drizzle({ client: pool }), { migrationsFolder: PG_MIGRATIONS });
  } finally {
    await pool.end();
  }
}

export type ClickHouseTarget = { url: string; user: string; password: string };

/**
 * Applies schema/clickhouse/migrations/NNNN_name.sql in order, each once, recording the version in
 * telemetry.schema_migrations. Statements in a file are separated by a `;` at the end of a line.
 */
export async function migrateClickHouse(target: ClickHouseTarget): Promise<string[]> {
  const run = (sql: string, params?: Record<string, string>) =>
    clickhouseQuery(target.url, { user: target.user, password: target.password }, sql, params);
  await run("CREATE DATABASE IF NOT EXISTS telemetry");
  await run(
    "CREATE TABLE IF NOT EXISTS telemetry.schema_migrations (version String, applied_at DateTime DEFAULT now()) ENGINE = MergeTree ORDER BY version",
  );
  const done = new Set(
    (await run("SELECT version FROM telemetry.schema_migrations FORMAT TSV")).split("\n").filter(Boolean),
  );
  const files = (await readdir(CH_MIGRATIONS)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
  const applied: string[] = [];
  for (const file of files) {
    const version = file.slice(0, 4);
    if (done.has(version)) {
      continue;
    }
    const text = await readFile(`${CH_MIGRATIONS}/${file}`, "utf8");
    for (const statement of text.split(/;\s*$/m).map((s) => s.trim())) {
      if (statement.replace(/--.*$/gm, "").trim()) {
        await run(statement);
      }
    }
    await run("INSERT INTO telemetry.schema_migrations (version) SELECT {version:String}", { version });
    applied.push(file);
  }
  return applied;
}
