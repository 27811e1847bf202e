import type { ChildProcess } from "node:child_process";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalStack, startLocalStack } from "../local/stack.js";
import { startWrangler, stopWrangler, waitUntilServing } from "../local/wrangler.js";

export type BenchStack = {
  stack: LocalStack;
  /**
   * Serves the Workers with wrangler dev on `port`, once `url` answers; `onOutput` gets its output's
   * lines. Called again, it stops the running one first (same data: e.g. to restart with other vars).
   */
  serve(port: number, url: string, onOutput?: (line: string) => void): Promise<ChildProcess>;
};

/**
 * Runs a benchmark on a local stack of its own in a temp dir, and stops and removes everything it
 * started afterwards, whether the run succeeded or not.
 */
export async function withBenchStack<T>(name: string, run: (b: BenchStack) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), `bench-${name}-`));
  // As root, embedded Postgres runs as the postgres user, which must be able to enter the directory.
  await chmod(dir, 0o755);
  let stack: LocalStack | undefined;
  let worker: ChildProcess | undefined;
  try {
    const started = await startLocalStack({ dataDir: dir });
    stack = started;
    const serve = async (port: number, url: string, onOutput?: (line: string) => void) => {
      if (worker) {
        await stopWrangler(worker);
      }
      worker = startWrangler(started, { port, persistTo: join(dir, "wrangler"), onOutput });
      await waitUntilServing(worker, url);
      return worker;
    };
    return await run({ stack: started, serve });
  } finally {
    if (worker) {
      await stopWrangler(worker);
    }
    await stack?.close();
    await rm(dir, { recursive: true, force: true });
  }
}
