import { drizzle, type NeonDatabase } from "drizzle-orm/neon-serverless";
import * as schema from "../../schema/pg/schema.js";
import type { Config } from "./config.js";
import { openPool } from "./pg.js";

export type Db = NeonDatabase<typeof schema>;

/** A drizzle handle over a pool per request (see shared/pg.ts); end it with `close()`. */
export function openDb(config: Config): { db: Db; close: () => Promise<void> } {
  const pool = openPool(config);
  return { db: drizzle({ client: pool, schema }), close: () => pool.end() };
}
