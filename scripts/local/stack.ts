import { mkdir } from "node:fs/promises";
import { type ClickHouseTarget, migrateClickHouse, migratePostgres } from "../migrate.js";
import { startClickHouseHttp } from "./clickhouse-http.js";
import { startNeonProxy } from "./neon-proxy.js";
import { startPostgres } from "./postgres.js";

export type LocalStack = {
  databaseUrl: string;
  clickhouse: ClickHouseTarget;
  /** host:port of the WebSocket proxy for the Neon driver, or "" when DATABASE_URL is a real Neon. */
  neonProxy: string;
  close(): Promise<void>;
};

export const DEFAULT_PG_PORT = 54329;
const CH_USER = "default";

function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return host === "127.0.0.1" || host === "localhost" || host === "[::1]";
}

/**
 * The whole local stack on real engines: embedded Postgres (unless DATABASE_URL), the Neon WebSocket
 * proxy in front of a loopback Postgres, and chdb behind the ClickHouse HTTP interface (unless
 * CLICKHOUSE_URL). Migrations are applied before it returns.
 */
export async function startLocalStack(opts: { dataDir: string; pgPort?: number }): Promise<LocalStack> {
  await mkdir(opts.dataDir, { recursive: true });
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const c of closers.reverse()) {
      await c().catch((err) => console.error("shutdown:", err instanceof Error ? err.message : err));
    }
  };
  try {
    let databaseUrl = process.env.DATABASE_URL ?? "";
    if (!databaseUrl) {
      const pg = await startPostgres({ dataDir: `${opts.dataDir}/postgres`, port: opts.pgPort });
      closers.push(pg.close);
      databaseUrl = pg.url;
    }
    let neonProxy = "";
    if (isLoopback(databaseUrl)) {
      const proxy = await startNeonProxy();
      closers.push(proxy.close);
      neonProxy = `127.0.0.1:${proxy.port}`;
    }
    let clickhouse: ClickHouseTarget;
    if (process.env.CLICKHOUSE_URL) {
      clickhouse = {
        url: process.env.CLICKHOUSE_URL,
        user: process.env.CLICKHOUSE_USER ?? CH_USER,
        password: process.env.CLICKHOUSE_PASSWORD ?? "",
      };
    } else {
      const password = crypto.randomUUID();
      const ch = await startClickHouseHttp({
        dataDir: `${opts.dataDir}/clickhouse`,
        user: CH_USER,
        password,
      });
      closers.push(ch.close);
      clickhouse = { url: ch.url, user: CH_USER, password };
    }
    await migratePostgres(databaseUrl);
    await migrateClickHouse(clickhouse);
    return { databaseUrl, clickhouse, neonProxy, close };
  } catch (err) {
    await close();
    throw err;
  }
}
