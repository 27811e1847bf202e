// The ingest Worker as the tests run it: bundled exactly as `wrangler deploy` bundles it, and given the
// bindings of its own wrangler config, so the tests exercise the deployable, not a copy.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig } from "wrangler";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const INGEST_CONFIG = "workers/ingest/wrangler.toml";
export const INGEST_BUNDLE_DIR = join(ROOT, ".wrangler/test/ingest");

/** `wrangler deploy --dry-run --outdir`: the same bundle a deploy uploads. */
export function buildIngestWorker(): void {
  const run = spawnSync(
    process.execPath,
    [
      join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
      "deploy",
      "--dry-run",
      "--outdir",
      INGEST_BUNDLE_DIR,
      "-c",
      INGEST_CONFIG,
    ],
    { cwd: ROOT, encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  if (run.status !== 0 || !existsSync(join(INGEST_BUNDLE_DIR, "index.js"))) {
    throw new Error(`building the ingest Worker failed:\n${run.stdout}\n${run.stderr}`);
  }
}

/** The Worker's name and Miniflare options from its wrangler config (vars, queues, R2, DO bindings). */
export function ingestWorker() {
  const config = unstable_readConfig({ config: join(ROOT, INGEST_CONFIG) });
  if (!config.name) {
    throw new Error(`${INGEST_CONFIG} names no Worker`);
  }
  return { name: config.name, options: unstable_getMiniflareWorkerOptions(config).workerOptions };
}
