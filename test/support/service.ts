import type { ChildProcess } from "node:child_process";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalStack, startLocalStack } from "../../scripts/local/stack.js";
import { startWrangler, stopWrangler, waitUntilServing } from "../../scripts/local/wrangler.js";

export type Service = {
  /** Origin the Worker serves, e.g. http://127.0.0.1:40123 (pages at /, the Web API at /api). */
  origin: string;
  databaseUrl: string;
  close(): Promise<void>;
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * The whole service as `npm run dev` runs it (embedded engines + `wrangler dev`), on a free port and
 * in a temp dir that is removed afterwards. The one place a Node test starts the service.
 */
export async function startService(): Promise<Service> {
  const dataDir = await mkdtemp(join(tmpdir(), "telemetry-service-"));
  // As root, embedded Postgres runs as the postgres user, which must be able to enter the directory.
  await chmod(dataDir, 0o755);
  let stack: LocalStack | undefined;
  let child: ChildProcess | undefined;
  const close = async () => {
    if (child) {
      await stopWrangler(child);
    }
    await stack?.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    stack = await startLocalStack({ dataDir });
    const port = await freePort();
    child = startWrangler(stack, { port, persistTo: join(dataDir, "wrangler") });
    const origin = `http://127.0.0.1:${port}`;
    await waitUntilServing(child, `${origin}/api`);
    return { origin, databaseUrl: stack.databaseUrl, close };
  } catch (err) {
    await close();
    throw err;
  }
}
