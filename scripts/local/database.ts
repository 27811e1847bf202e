import net from "node:net";
import { fileURLToPath } from "node:url";
import { migratePostgres } from "../migrate.js";
import { startPostgres } from "./postgres.js";
import { DEFAULT_PG_PORT } from "./stack.js";

export const DATA_DIR = fileURLToPath(new URL("../../.data", import.meta.url));
export const LOCAL_PG_PORT = Number(process.env.LOCAL_PG_PORT ?? DEFAULT_PG_PORT);

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * DATABASE_URL if set; else the local stack's Postgres — the running one if `npm run dev` is up,
 * otherwise started from .data/postgres just for the caller (and stopped by close()).
 */
export async function localDatabase(): Promise<{ url: string; close: () => Promise<void> }> {
  if (process.env.DATABASE_URL) {
    return { url: process.env.DATABASE_URL, close: async () => {} };
  }
  if (await isListening(LOCAL_PG_PORT)) {
    return {
      url: `postgres://postgres:postgres@127.0.0.1:${LOCAL_PG_PORT}/telemetry`,
      close: async () => {},
    };
  }
  const pg = await startPostgres({ dataDir: `${DATA_DIR}/postgres`, port: LOCAL_PG_PORT });
  await migratePostgres(pg.url);
  return pg;
}
