import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// `npm run build:check` as CI would run it: both Workers bundle as `wrangler deploy` bundles them, and
// the ingest Worker's bundle holds no framework, ORM or schema library.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

type Loads = { bytes: number; inputs: string[] };
type Report = {
  ok: boolean;
  workers: Record<"api" | "ingest", { bytes: number; gzipBytes: number; packages: string[] }>;
  sdk: { bytes: number; gzipBytes: number; packages: string[] };
  client: { jsBytes: number; gzipBytes: number; initial: Loads; lazy: Record<string, Loads> };
};

/** The npm packages among a chunk's source files. */
function packagesIn(inputs: string[]): string[] {
  const found = new Set<string>();
  for (const input of inputs) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
    if (m?.[1]) {
      found.add(m[1]);
    }
  }
  return [...found].sort();
}

let ran: SpawnSyncReturns<string> | undefined;
/** One `npm run build:check` for the file (it bundles both Workers). */
function buildCheck() {
  ran ??= spawnSync(process.execPath, ["--import", "tsx", "scripts/build-check.ts"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  return ran;
}

describe("the Workers' deploy bundles", () => {
  it("build both, and the ingest bundle carries only its own dependencies", () => {
    const run = buildCheck();
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
    // Page weights. Every dashboard page loads the entry and its static chunks: uPlot and openapi-fetch,
    // no editor. The SQL page alone also loads its lazy chunks (its code and CodeMirror), which borrow the
    // API client and the charts from the entry rather than carrying them.
    expect(packagesIn(report.client.initial.inputs)).toEqual(["openapi-fetch", "uplot"]);
    expect(report.client.gzipBytes).toBeLessThan(50_000);
    const editor = Object.values(report.client.lazy).filter((c) => packagesIn(c.inputs).length > 0);
    const editorPackages = packagesIn(editor.flatMap((c) => c.inputs));
    expect(editorPackages).toEqual(
      expect.arrayContaining(["@codemirror/view", "@codemirror/lang-sql", "@codemirror/autocomplete"]),
    );
    expect(
      editorPackages.filter(
        (p) => !/^@codemirror\/|^@lezer\/|^@marijn\/|^(crelt|style-mod|w3c-keyname)$/.test(p),
      ),
    ).toEqual([]);
    expect(editor.reduce((n, c) => n + c.bytes, 0)).toBeLessThan(450_000);
    expect(run.stdout).toContain("dashboard's lazily loaded chunks");
  });

  it("keeps the lazily loaded dashboard pages out of the script every other page loads", () => {
    const run = buildCheck();
    expect(run.status, run.stderr).toBe(0);
    const { client }: Report = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}");
    const own = [
      "pages/exports.ts",
      "pages/erasure.ts",
      "pages/dead-letters.ts",
      "client/jobs.ts",
      "pages/sql.ts",
      "client/sql/page.ts",
      "client/sql/editor.ts",
    ];
    const isOwn = (input: string) => own.some((f) => input.endsWith(f));
    // Every page loads the entry and its static chunks: none of the data-administration or SQL pages' code.
    expect(client.initial.inputs.filter(isOwn)).toEqual([]);
    expect(client.initial.inputs).toContain("workers/api/web/client/pages/overview.ts");
    // Each of them is a chunk of its own, loaded on its page.
    const lazyInputs = Object.values(client.lazy).flatMap((c) => c.inputs);
    for (const f of own) {
      expect(
        lazyInputs.filter((i) => i.endsWith(f)),
        f,
      ).toHaveLength(1);
    }
    console.log(
      `dashboard: ${client.initial.bytes} bytes every page loads (entry ${client.jsBytes}); lazy chunks ${JSON.stringify(
        Object.fromEntries(Object.values(client.lazy).map((v) => [v.inputs.join("+"), v.bytes])),
      )}`,
    );
  });
});
