import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// `npm run build:check` as CI would run it: both Workers bundle as `wrangler deploy` bundles them, and
// the ingest Worker's bundle holds no framework, ORM or schema library.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

type Report = {
  ok: boolean;
  workers: Record<"api" | "ingest", { bytes: number; gzipBytes: number; packages: string[] }>;
  sdk: { bytes: number; gzipBytes: number; packages: string[] };
  client: {
    jsBytes: number;
    gzipBytes: number;
    packages: string[];
    sql: { jsBytes: number; gzipBytes: number; packages: string[] };
  };
};

describe("the Workers' deploy bundles", () => {
  it("build both, and the ingest bundle carries only its own dependencies", () => {
    const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/build-check.ts"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(run.status, run.stderr).toBe(0);
    const report: Report = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}");
    expect(report.ok).toBe(true);
    // The consumer walks the protobuf wire bytes itself (workers/ingest/consumer/wire-rows.ts): no decoder.
    expect(report.workers.ingest.packages).toEqual(["@clickhouse/client-web", "@neondatabase/serverless"]);
    expect(report.workers.api.packages).toEqual(expect.arrayContaining(["hono", "drizzle-orm", "zod"]));
    // The API reference page's scripts are served from the bundle (swagger-ui-dist, read as text), no
    // CDN loader; with them the bundle stays within Workers' smallest size limit (3 MB compressed).
    expect(report.workers.api.packages.filter((p) => p.startsWith("@scalar/"))).toEqual([]);
    expect(report.workers.api.gzipBytes).toBeLessThan(3_000_000);
    // The hot path's bundle is a fraction of the API's.
    expect(report.workers.ingest.bytes).toBeLessThan(report.workers.api.bytes / 2);
    expect(report.workers.ingest.gzipBytes).toBeGreaterThan(0);
    // The web SDK carries only protobuf-es's wire writer and fits its budget, minified and gzip'd.
    expect(report.sdk.packages).toEqual(["@bufbuild/protobuf"]);
    expect(report.sdk.gzipBytes).toBeGreaterThan(1000);
    expect(report.sdk.gzipBytes).toBeLessThanOrEqual(12_000);
    expect(run.stdout).toContain("web SDK (sdk/web, minified)");
    // Page weights. Every dashboard page loads the dashboard bundle: uPlot and openapi-fetch, no editor.
    // The SQL page alone also loads its own bundle (its code and CodeMirror, about 130 KB gzip'd),
    // which borrows the API client and the charts from the dashboard bundle rather than carrying them.
    expect(report.client.packages).toEqual(["openapi-fetch", "uplot"]);
    expect(report.client.gzipBytes).toBeLessThan(50_000);
    expect(report.client.sql.packages).toEqual(
      expect.arrayContaining(["@codemirror/view", "@codemirror/lang-sql", "@codemirror/autocomplete"]),
    );
    expect(
      report.client.sql.packages.filter(
        (p) => !/^@codemirror\/|^@lezer\/|^@marijn\/|^(crelt|style-mod|w3c-keyname)$/.test(p),
      ),
    ).toEqual([]);
    expect(report.client.sql.gzipBytes).toBeLessThan(150_000);
    expect(run.stdout).toContain("SQL page's own bundle");
  });
});
