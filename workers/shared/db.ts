import { neonConfig, Pool } from "@neondatabase/serverless";
import { drizzle, type NeonDatabase } from "drizzle-orm/neon-serverless";
import * as schema from "../../schema/pg/schema.js";
import type { Config } from "./config.js";

export type Db = NeonDatabase<typeof schema>;

function configureNeon(config: Config): void {
  if (!config.NEON_LOCAL_PROXY) {
    return;
  }
  // Local stack: our loopback proxy plays the role of Neon's wsproxy in front of a plain Postgres.
  const proxy = config.NEON_LOCAL_PROXY;
  neonConfig.wsProxy = (host, port) => `${proxy}/?address=${host}:${port}`;
  neonConfig.useSecureWebSocket = false;
  neonConfig.pipelineTLS = false;
  neonConfig.pipelineConnect = false;
}

/** A pool per request (Workers may not share sockets across requests); end it with `close()`. */
export function openDb(config: Config): { db: Db; close: () => Promise<void> } {
  configureNeon(config);
  const pool = new Pool({ connectionString: config.DATABASE_URL, max: 4 });
  // An idle client's socket error must not become an unhandled rejection that kills the request.
  pool.on("error", () => {});
  return { db: drizzle({ client: pool, schema }), close: () => pool.end() };
}
