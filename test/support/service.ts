import { type ChildProcess, execFile } from "node:child_process";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort, type MailCatcher, startMailCatcher } from "../../scripts/local/mail.js";
import { type LocalStack, startLocalStack } from "../../scripts/local/stack.js";
import { startWrangler, stopWrangler, waitUntilServing } from "../../scripts/local/wrangler.js";
import { waitFor } from "./wait.js";

export type Service = {
  /** Origin the Worker serves, e.g. http://127.0.0.1:40123 (pages at /, the Web API at /api). */
  origin: string;
  databaseUrl: string;
  /** The mail catcher's web inbox; its REST API (GET /api/email) is what test/support/mail.ts reads. */
  inboxUrl: string;
  /** wrangler dev's --persist-to: its local R2, Queues and DO state (test/support/dead-letters.ts writes R2). */
  persistTo: string;
  /**
   * Waits until no INSERT runs in ClickHouse. An insert commits the events' part before each
   * materialized view's, so a count of the events can be complete while a rollup still lags it.
   */
  insertsSettled(): Promise<void>;
  close(): Promise<void>;
};

/** What a test file needs to reach a running service (plain data: it crosses from the global setup). */
export type ServiceAddress = {
  origin: string;
  databaseUrl: string;
  inboxUrl: string;
  persistTo: string;
  clickhouse: { url: string; user: string; password: string };
};

/**
 * The whole service as `npm run dev` runs it (embedded engines + `wrangler dev`), on a free port and
 * in a temp dir that is removed afterwards. Started once per run by the node project's global setup
 * (test/support/service-setup.ts) and shared by the browser test files through sharedService().
 */
export async function startService(): Promise<Service & { address: ServiceAddress }> {
  const dataDir = await mkdtemp(join(tmpdir(), "telemetry-service-"));
  // As root, embedded Postgres runs as the postgres user, which must be able to enter the directory.
  await chmod(dataDir, 0o755);
  let stack: LocalStack | undefined;
  let child: ChildProcess | undefined;
  let mail: MailCatcher | undefined;
  const close = async () => {
    if (child) {
      await stopWrangler(child);
    }
    await mail?.close();
    await stack?.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    stack = await startLocalStack({ dataDir });
    mail = await startMailCatcher({ dir: join(dataDir, "mail") });
    const port = await freePort();
    const persistTo = join(dataDir, "wrangler");
    child = startWrangler(stack, { port, persistTo, mail });
    const origin = `http://127.0.0.1:${port}`;
    await waitUntilServing(child, `${origin}/api`);
    const address: ServiceAddress = {
      origin,
      databaseUrl: stack.databaseUrl,
      inboxUrl: mail.inboxUrl,
      persistTo,
      clickhouse: {
        url: stack.clickhouse.url,
        user: stack.clickhouse.user,
        password: stack.clickhouse.password,
      },
    };
    return { ...serviceAt(address, close), address };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A running service at `address`; `close` is what closing it does (nothing, for the shared one). */
export function serviceAt(address: ServiceAddress, close: () => Promise<void>): Service {
  const ch = address.clickhouse;
  const insertsSettled = async () => {
    await waitFor(
      async () => {
        const res = await fetch(ch.url, {
          method: "POST",
          headers: { "X-ClickHouse-User": ch.user, "X-ClickHouse-Key": ch.password },
          body: "SELECT count() FROM system.processes WHERE query_kind = 'Insert' FORMAT TSV",
        });
        return res.ok ? Number((await res.text()).trim()) : -1;
      },
      (running) => running === 0,
      { intervalMs: 50, message: "no INSERT running" },
    );
  };
  const { origin, databaseUrl, inboxUrl, persistTo } = address;
  return { origin, databaseUrl, inboxUrl, persistTo, insertsSettled, close };
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);

/**
 * One admin CLI command (scripts/admin.ts) against the service's database, announcing its changes to
 * the service as an operator would; its JSON answer.
 */
export async function adminCli(service: Service, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, ["--import", "tsx", "scripts/admin.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: service.databaseUrl, OPERATOR_API_URL: service.origin },
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}
