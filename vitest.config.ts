import { availableParallelism } from "node:os";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { TEST_APP_URL } from "./test/support/app-url.js";
import { INGEST_BUNDLE_DIR, ingestWorker } from "./test/support/ingest-worker.js";
import { TEST_OPERATOR_SECRET } from "./test/support/operator.js";
import { TEST_SSO_SECRET_KEY } from "./test/support/sso-key.js";

// Tests reach nothing beyond loopback: Miniflare uses its fallback Request.cf instead of fetching one.
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";

const PROJECT = "workers";
/** The pool names the main Worker after the project; bindings to "the API Worker" must use this name. */
const MAIN_WORKER = `vitest-pool-workers-runner-${PROJECT}`;
const ingest = ingestWorker();

export default defineConfig({
  test: {
    reporters: ["default", "./test/support/summary-reporter.ts"],
    // Files at once, over both projects (one pool). Vitest's default, one less than the cores, is one
    // on a 2-core machine: every file would wait for the last, though most of a file's time is spent
    // waiting on the engines, the queues' batch windows and Chromium, not on a core.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        // Everything that runs as the Workers do: inside workerd, against real engines. The main Worker is
        // the API Worker (root wrangler.toml) behind the routes production has (test/support/app-host.ts);
        // the ingest Worker runs beside it from its own config and bundle (built by the global setup).
        plugins: [
          cloudflareTest(({ inject }) => {
            const engines = {
              DATABASE_URL: inject("databaseUrl"),
              CLICKHOUSE_URL: inject("clickhouseUrl"),
              CLICKHOUSE_USER: inject("clickhouseUser"),
              CLICKHOUSE_PASSWORD: inject("clickhousePassword"),
              NEON_LOCAL_PROXY: inject("neonProxy"),
            };
            return {
              main: "./test/support/app-host.ts",
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  ...engines,
                  OPERATOR_SECRET: TEST_OPERATOR_SECRET,
                  SSO_SECRET_KEY: TEST_SSO_SECRET_KEY,
                  // The global setup's DNS-over-HTTPS resolver on loopback (test/support/doh-server.ts).
                  SSO_DNS_RESOLVER: inject("dohUrl"),
                  APP_URL: TEST_APP_URL,
                  // The global setup's mail catcher, over plain SMTP on loopback; sign-up open.
                  SMTP_HOST: "127.0.0.1",
                  SMTP_PORT: String(inject("smtpPort")),
                  MAIL_FROM: "Game Telemetry Analytics <no-reply@telemetry.test>",
                  SIGNUP: "open",
                  // The local-only knobs (workers/shared/config.ts LocalKnobs): the test clock
                  // (workers/api/clock.ts: X-Test-Now sets a request's now). Only here and on the local
                  // stack; no wrangler config declares LOCAL_KNOBS, so production ignores the header.
                  LOCAL_KNOBS: JSON.stringify({ testClock: true }),
                },
                serviceBindings: { INGEST: ingest.name },
                // The ingest Worker's producers too, so a test can run its queue consumers in-process
                // with every binding they use (the shared Env type has them all).
                queueProducers: ingest.options.queueProducers,
                workers: [
                  {
                    ...ingest.options,
                    name: ingest.name,
                    modules: true,
                    scriptPath: `${INGEST_BUNDLE_DIR}/index.js`,
                    bindings: { ...ingest.options.bindings, ...engines },
                    // Bound by script_name in production; here that script is the pool's main Worker.
                    durableObjects: {
                      RATE_LIMITER: { className: "RateLimiter", scriptName: MAIN_WORKER },
                      BATCH_CLAIMS: { className: "BatchClaims", scriptName: MAIN_WORKER },
                      KEY_REPLICA: { className: "KeyReplica", scriptName: MAIN_WORKER },
                    },
                  },
                ],
              },
            };
          }),
        ],
        test: {
          name: PROJECT,
          // Pre-bundled as the Worker's bundle is: through the module runner's per-import indirection,
          // scrypt's inner loop runs about 5x slower than in production and sign-ins crawl.
          deps: { optimizer: { ssr: { enabled: true, include: ["@noble/hashes/scrypt.js"] } } },
          globalSetup: ["./test/global-setup.ts"],
          include: ["test/workers/**/*.test.ts", "test/unit/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Tooling that needs Node: code generation, the local engines, the Workers' configurations.
        test: {
          name: "node",
          environment: "node",
          // Which Chromium the browser tests launch, settled (and the packaged one extracted) once; and
          // the one service every browser test file shares, started by the first that asks for it.
          globalSetup: ["./test/support/chromium-setup.ts", "./test/support/service-setup.ts"],
          // The web SDK's own tests (sdk/web/test) run here too: they need Node, not workerd.
          include: ["test/node/**/*.test.ts", "sdk/web/test/**/*.test.ts"],
          testTimeout: 120_000,
          // expect.poll waits for the page's state as long as a person would, not vitest's default 1 s,
          // which a busy machine (two files at once on one shared service) can outlast.
          expect: { poll: { timeout: 15_000 } },
        },
      },
    ],
  },
});
