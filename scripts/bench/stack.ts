import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../local/mail.js";
import { type LocalStack, startLocalStack } from "../local/stack.js";
import { startWrangler, stopWrangler, waitUntilServing } from "../local/wrangler.js";

export type BenchStack = {
  stack: LocalStack;
  /** The data dir; kept after the run when BENCH_KEEP_DIR named it. */
  dir: string;
  /** True when BENCH_KEEP_DIR already held a stack (loaded by an earlier run): reuse its data. */
  reused: boolean;
  /**
   * Serves the Workers with wrangler dev on `port`, once `url` answers; `onOutput` gets its output's
   * lines. Called again, it stops the running one first (same data: e.g. to restart with other vars).
   */
  serve(port: number, url: string, onOutput?: (line: string) => void): Promise<ChildProcess>;
};

/**
 * Runs a benchmark on a local stack of its own in a temp dir, and stops and removes everything it
 * started afterwards, whether the run succeeded or not. BENCH_KEEP_DIR=<dir> uses that dir instead and
 * keeps it: a later run with the same dir starts on the data already there (a 100M load is loaded once
 * and measured repeatedly). Remove the dir by hand when done.
 */
export async function withBenchStack<T>(name: string, run: (b: BenchStack) => Promise<T>): Promise<T> {
  const kept = process.env.BENCH_KEEP_DIR;
  const dir = kept ?? (await mkdtemp(join(tmpdir(), `bench-${name}-`)));
  const reused = kept !== undefined && existsSync(join(kept, "clickhouse"));
  await mkdir(dir, { recursive: true });
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
      const inspectorPort = await freePort();
      worker = startWrangler(started, { port, persistTo: join(dir, "wrangler"), onOutput, inspectorPort });
      await waitUntilServing(worker, url);
      return worker;
    };
    return await run({ stack: started, serve, dir, reused });
  } finally {
    if (worker) {
      await stopWrangler(worker);
    }
    await stack?.close();
    if (!kept) {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
