import { drizzle as drizzleHttp, type NeonHttpDatabase } from "drizzle-orm/neon-http";
import { drizzle, type NeonDatabase } from "drizzle-orm/neon-serverless";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import * as schema from "../../schema/pg/schema.js";
import type { Config } from "./config.js";
import { httpSql, openPool } from "./pg.js";

export type Db = NeonDatabase<typeof schema>;
/** Either transport: for code that only reads or writes with one-shot statements. */
export type AnyDb = PgDatabase<PgQueryResultHKT, typeof schema>;

/** A drizzle handle over a pool per request (see shared/pg.ts); end it with `close()`. */
export function openDb(config: Config): { db: Db; close: () => Promise<void> } {
  const pool = openPool(config);
  return { db: drizzle({ client: pool, schema }), close: () => pool.end() };
}

const httpDbs = new WeakMap<Config, NeonHttpDatabase<typeof schema>>();

/**
 * drizzle over Neon's HTTP query path (shared/pg.ts httpSql): one fetch per statement, no connection.
 * No interactive transactions; use openDb() for those.
 */
export function httpDb(config: Config): NeonHttpDatabase<typeof schema> {
  let db = httpDbs.get(config);
  if (!db) {
    db = drizzleHttp({ client: httpSql(config), schema });
    httpDbs.set(config, db);
  }
  return db;
}
