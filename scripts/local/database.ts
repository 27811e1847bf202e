import { readFile } from "node:fs/promises";
import net from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { migratePostgres } from "../migrate.js";
import { startPostgres } from "./postgres.js";
import { DEFAULT_PG_PORT } from "./stack.js";

/** `npm run dev`'s port; every other port and the data dir of that stack derive from it. */
export const DEV_PORT = Number(process.env.PORT ?? 8787);
const DEFAULT_DEV_PORT = 8787;
const ROOT_DATA_DIR = fileURLToPath(new URL("../../.data", import.meta.url));

/**
 * The stack's data: `.data` for the default port, `.data/port-<PORT>` for any other, so a second stack
 * (another PORT) starts beside the first on data of its own; LOCAL_DATA_DIR names another place.
 */
export const DATA_DIR =
  process.env.LOCAL_DATA_DIR ??
  (DEV_PORT === DEFAULT_DEV_PORT ? ROOT_DATA_DIR : join(ROOT_DATA_DIR, `port-${DEV_PORT}`));

/** 54329 for the default port, shifted with PORT for any other (LOCAL_PG_PORT names one). */
export const LOCAL_PG_PORT = Number(
  process.env.LOCAL_PG_PORT ?? derivedPort(DEFAULT_PG_PORT + (DEV_PORT - DEFAULT_DEV_PORT)),
);

function derivedPort(port: number): number {
  // Out of range: Postgres takes any free port (the stack file names it).
  return port > 1024 && port < 65536 ? port : 0;
}

/** What a running `npm run dev` writes into its data dir (STACK_FILE) for the admin CLI and drills. */
export type RunningStack = {
  pid: number;
  /** The Workers' origin, e.g. http://127.0.0.1:8787. */
  url: string;
  databaseUrl: string;
  mailInbox: string;
  smtpPort: number;
  demoUrl: string;
};

export const STACK_FILE = join(DATA_DIR, "stack.json");

/** The stack `npm run dev` runs on DATA_DIR right now, or undefined when none does. */
export async function runningStack(file = STACK_FILE): Promise<RunningStack | undefined> {
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) {
    return undefined;
  }
  const stack = JSON.parse(text) as RunningStack;
  try {
    process.kill(stack.pid, 0);
  } catch (err) {
    // EPERM: alive, another user's. Anything else: the stack that wrote it is gone.
    return (err as NodeJS.ErrnoException).code === "EPERM" ? stack : undefined;
  }
  return stack;
}

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
 * otherwise started from the data dir's postgres just for the caller (and stopped by close()).
 */
export async function localDatabase(): Promise<{ url: string; close: () => Promise<void> }> {
  if (process.env.DATABASE_URL) {
    return { url: process.env.DATABASE_URL, close: async () => {} };
  }
  const running = await runningStack();
  if (running) {
    return { url: running.databaseUrl, close: async () => {} };
  }
  if (LOCAL_PG_PORT && (await isListening(LOCAL_PG_PORT))) {
    return {
      url: `postgres://postgres:postgres@127.0.0.1:${LOCAL_PG_PORT}/telemetry`,
      close: async () => {},
    };
  }
  const pg = await startPostgres({ dataDir: `${DATA_DIR}/postgres`, port: LOCAL_PG_PORT || undefined });
  await migratePostgres(pg.url);
  return pg;
}
