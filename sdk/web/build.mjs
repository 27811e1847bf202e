// The package's build: one ESM file (esbuild) and its type declarations (tsc). Prints the size a game
// pays for it, minified and gzip'd.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

/** The SDK as one minified ESM module, in memory. */
export async function bundle(minify = true) {
  const out = await build({
    entryPoints: [join(here, "src/index.ts")],
    bundle: true,
    format: "esm",
    target: "es2020",
    minify,
    write: false,
    logLevel: "silent",
  });
  return out.outputFiles[0].contents;
}

/** Minified and gzip'd, in bytes. */
export async function minGzipBytes() {
  return gzipSync(await bundle(true)).byteLength;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  rmSync(join(here, "dist"), { recursive: true, force: true });
  await build({
    entryPoints: [join(here, "src/index.ts")],
    bundle: true,
    format: "esm",
    target: "es2020",
    outfile: join(here, "dist/index.js"),
    sourcemap: true,
  });
  execFileSync(
    process.execPath,
    [require.resolve("typescript/bin/tsc"), "-p", join(here, "tsconfig.build.json")],
    {
      stdio: "inherit",
    },
  );
  console.log(`dist/index.js: ${(await minGzipBytes()) / 1000} KB minified and gzip'd`);
}
