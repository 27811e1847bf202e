import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

// Tests reach nothing beyond loopback: Miniflare uses its fallback Request.cf instead of fetching one.
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";

export default defineConfig({
  test: {
    reporters: ["default", "./test/support/summary-reporter.ts"],
    projects: [
      {
        // Everything that runs as the Worker does: inside workerd, against real engines.
        plugins: [
          cloudflareTest(({ inject }) => ({
            main: "./workers/index.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                DATABASE_URL: inject("databaseUrl"),
                CLICKHOUSE_URL: inject("clickhouseUrl"),
                CLICKHOUSE_USER: inject("clickhouseUser"),
                CLICKHOUSE_PASSWORD: inject("clickhousePassword"),
                NEON_LOCAL_PROXY: inject("neonProxy"),
              },
            },
          })),
        ],
        test: {
          name: "workers",
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
        // Tooling that needs Node: code generation, the local engines themselves.
        test: {
          name: "node",
          environment: "node",
          include: ["test/node/**/*.test.ts"],
          testTimeout: 120_000,
        },
      },
    ],
  },
});
