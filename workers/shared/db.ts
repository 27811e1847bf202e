import { drizzle as drizzleHttp, type NeonHttpDatabase } from "drizzle-orm/neon-http";
import { drizzle, type NeonDatabase } from "drizzle-orm/neon-serverless";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type { Config } from "./config.js";
import { httpSql, openPool } from "./pg.js";

// Without the relational schema: nothing here uses drizzle's relational API (db.query.*), and
// extracting it from the schema on every request was the largest cost of a cached request's CPU profile.
export type Db = NeonDatabase;
/** Either transport: for code that only reads or writes with one-shot statements. */
export type AnyDb = PgDatabase<PgQueryResultHKT, Record<string, never>>;
/** Any drizzle Postgres handle: the Worker's (Neon), the admin CLI's and dev seed's (node-postgres). */
// biome-ignore lint/suspicious/noExplicitAny: any drizzle Postgres driver will do
export type AnyPg = PgDatabase<PgQueryResultHKT, any>;

/** A drizzle handle over a pool per request (see shared/pg.ts); end it with `close()`. */
export function openDb(config: Config): { db: Db; close: () => Promise<void> } {
  const pool = openPool(config);
  return { db: drizzle({ client: pool }), close: () => pool.end() };
}

const httpDbs = new WeakMap<Config, NeonHttpDatabase>();

/**
 * drizzle over Neon's HTTP query path (shared/pg.ts httpSql): one fetch per statement, no connection.
 * No interactive transactions; use openDb() for those.
 */
export function httpDb(config: Config): NeonHttpDatabase {
  let db = httpDbs.get(config);
  if (!db) {
    db = drizzleHttp({ client: httpSql(config) });
    httpDbs.set(config, db);
  }
  return db;
}
