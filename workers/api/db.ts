import type { ExtractTablesWithRelations } from "drizzle-orm";
import { drizzle as drizzleHttp } from "drizzle-orm/neon-http";
import { drizzle } from "drizzle-orm/neon-serverless";
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from "drizzle-orm/pg-core";
import type { Config } from "../shared/config.js";
import { httpSql, openPool } from "../shared/pg.js";

// Without the relational schema: nothing here uses drizzle's relational API (db.query.*), and
// extracting it from the schema on every request was the largest cost of a cached request's CPU profile.

/**
 * A drizzle handle on Postgres, whatever the driver: the Workers' Neon Pool (openDb) or HTTP path
 * (httpDb), node-postgres in the admin CLI and scripts. An open transaction is one too.
 */
export type Db = PgDatabase<PgQueryResultHKT, Record<string, never>>;

/** An open transaction on a Db: for statements that must share one (row locks, writes that go together). */
export type Tx = PgTransaction<
  PgQueryResultHKT,
  Record<string, never>,
  ExtractTablesWithRelations<Record<string, never>>
>;

/** A drizzle handle over a pool per request (see shared/pg.ts); end it with `close()`. */
export function openDb(config: Config): { db: Db; close: () => Promise<void> } {
  const pool = openPool(config);
  return { db: drizzle({ client: pool }), close: () => pool.end() };
}

const httpDbs = new WeakMap<Config, Db>();

/**
 * drizzle over Neon's HTTP query path (shared/pg.ts httpSql): one fetch per statement, no connection.
 * No interactive transactions (`transaction()` throws); use openDb() for those.
 */
export function httpDb(config: Config): Db {
  let db = httpDbs.get(config);
  if (!db) {
    db = drizzleHttp({ client: httpSql(config) });
    httpDbs.set(config, db);
  }
  return db;
}

/** The one row a statement returns (an INSERT or UPDATE ... RETURNING of one row); throws when none came back. */
export function single<T>(rows: T[], what: string): T {
  const [row] = rows;
  if (row === undefined) {
    throw new Error(`${what}: the statement returned no row`);
  }
  return row;
}
