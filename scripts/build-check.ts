// `npm run build:check`: bundles both Workers exactly as `wrangler deploy` would (--dry-run --outdir),
// prints each bundle's size (raw and gzip) and the packages inside it, and fails when the ingest
// Worker's bundle carries a package it must not (it is the hot path: no framework, ORM or schema library).
// It also measures the web SDK (sdk/web) as a game ships it, minified and gzip'd, against its budget.
// The last line is JSON, for scripts.
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { buildSync } from "esbuild";
import { buildClient, packagesOf } from "./build-client.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Hono and its middleware, drizzle, zod and the libraries built on them: the one list is the lint's
 * `shared-no-framework` rule (.dependency-cruiser.cjs), which keeps them out of workers/shared/ and
 * workers/ingest/ at import time; this check proves the same of the bundle.
 */
const FRAMEWORKS = ((): RegExp => {
  const config = createRequire(import.meta.url)("../.dependency-cruiser.cjs") as {
    forbidden: { name: string; to: { path?: string } }[];
  };
  const path = config.forbidden.find((rule) => rule.name === "shared-no-framework")?.to.path;
  if (!path) {
    throw new Error("the shared-no-framework rule of .dependency-cruiser.cjs names no packages");
  }
  // The rule matches `node_modules/<package>/...`; a bundle's packages are bare names.
  return new RegExp(path.replace(/^\^node_modules\//, "^").replace(/\/$/, "$"));
})();

const WORKERS = [
  { name: "api", config: "wrangler.toml", forbidden: null },
  { name: "ingest", config: "workers/ingest/wrangler.toml", forbidden: FRAMEWORKS },
];

/** What a game pays for the web SDK, minified and gzip'd: its README promises this budget. */
const SDK_BUDGET_BYTES = 12_000;

function sdkSize(): { bytes: number; gzipBytes: number; packages: string[] } {
  const out = buildSync({
    entryPoints: [join(ROOT, "sdk/web/src/index.ts")],
    bundle: true,
    format: "esm",
    target: "es2020",
    minify: true,
    write: false,
    metafile: true,
  });
  const code = out.outputFiles[0]?.contents ?? new Uint8Array();
  return {
    bytes: code.byteLength,
    gzipBytes: gzipSync(code).byteLength,
    packages: packagesOf(Object.keys(out.metafile.inputs)),
  };
}

type Built = { name: string; bytes: number; gzipBytes: number; packages: string[]; forbiddenFound: string[] };

async function build(worker: (typeof WORKERS)[number]): Promise<Built> {
  const outdir = await mkdtemp(join(tmpdir(), `bundle-${worker.name}-`));
  try {
    const run = spawnSync(
      process.execPath,
      [
        join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
        "deploy",
        "--dry-run",
        "--outdir",
        outdir,
        "--metafile",
        join(outdir, "meta.json"),
        "-c",
        worker.config,
      ],
      { cwd: ROOT, encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
    );
    if (run.status !== 0) {
      throw new Error(
        `wrangler deploy --dry-run failed for the ${worker.name} Worker:\n${run.stdout}\n${run.stderr}`,
      );
    }
    const files = (await readdir(outdir)).filter((f) => f.endsWith(".js") || f.endsWith(".mjs"));
    let bytes = 0;
    let gzipBytes = 0;
    for (const file of files) {
      const code = await readFile(join(outdir, file));
      bytes += code.byteLength;
      gzipBytes += gzipSync(code).byteLength;
    }
    const meta: { inputs: Record<string, unknown> } = JSON.parse(
      await readFile(join(outdir, "meta.json"), "utf8"),
    );
    const packages = packagesOf(Object.keys(meta.inputs));
    const forbidden = worker.forbidden;
    return {
      name: worker.name,
      bytes,
      gzipBytes,
      packages,
      forbiddenFound: forbidden ? packages.filter((p) => forbidden.test(p)) : [],
    };
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
}

const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
// The API Worker carries the dashboard's browser bundle as a module (scripts/build-client.ts).
const client = buildClient();
const built: Built[] = [];
for (const worker of WORKERS) {
  built.push(await build(worker));
}
console.log("| Worker | bundle | gzip | packages |");
console.log("|---|---:|---:|---|");
for (const b of built) {
  console.log(`| ${b.name} | ${kib(b.bytes)} | ${kib(b.gzipBytes)} | ${b.packages.join(", ")} |`);
}
console.log(
  `dashboard client (inside the api bundle): ${kib(client.jsBytes)} script (${kib(client.gzipBytes)} gzip'd), ${kib(client.cssBytes)} style; packages: ${client.packages.join(", ")}`,
);
console.log(
  `dashboard's lazily loaded chunks (each page's own, and what they share): ${Object.entries(client.lazy)
    .map(([name, chunk]) => `${name} ${kib(chunk.bytes)}`)
    .join(", ")}`,
);
console.log(
  `API reference page (inside the api bundle): ${kib(client.docs.jsBytes)} Swagger UI script, ${kib(client.docs.cssBytes)} style, ${kib(client.docs.initBytes)} initializer`,
);
const sdk = sdkSize();
console.log(
  `web SDK (sdk/web, minified): ${kib(sdk.bytes)}, ${(sdk.gzipBytes / 1000).toFixed(2)} KB gzip'd (budget ${SDK_BUDGET_BYTES / 1000} KB)`,
);
/** The only package the SDK bundles: protobuf-es's wire writer (sdk/web/src/encode.ts). */
const SDK_PACKAGES = ["@bufbuild/protobuf"];
const sdkOverBudget = sdk.gzipBytes > SDK_BUDGET_BYTES || sdk.packages.some((p) => !SDK_PACKAGES.includes(p));
if (sdkOverBudget) {
  console.error(
    `the web SDK is ${sdk.gzipBytes} bytes gzip'd (budget ${SDK_BUDGET_BYTES}) with packages [${sdk.packages.join(", ")}]`,
  );
}
const failures = built.filter((b) => b.forbiddenFound.length);
for (const f of failures) {
  console.error(`the ${f.name} Worker's bundle must not carry: ${f.forbiddenFound.join(", ")}`);
}
console.log(
  JSON.stringify({
    ok: failures.length === 0 && !sdkOverBudget,
    sdk,
    client: {
      jsBytes: client.jsBytes,
      gzipBytes: client.gzipBytes,
      cssBytes: client.cssBytes,
      packages: client.packages,
      initial: client.initial,
      lazy: client.lazy,
    },
    docs: client.docs,
    workers: Object.fromEntries(
      built.map((b) => [b.name, { bytes: b.bytes, gzipBytes: b.gzipBytes, packages: b.packages }]),
    ),
  }),
);
process.exitCode = failures.length || sdkOverBudget ? 1 : 0;
