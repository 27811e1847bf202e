import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DOCUMENT_FILE } from "../../scripts/generate-api.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ROUTES = "workers/api/routes";
const PAGES = "workers/api/web/pages";

/** Every .ts file under a folder (workers/api/routes by default), by its path from the repository's root. */
function routeFiles(folder = ROUTES): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(`${ROOT}${folder}`, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
      const path = `${entry.parentPath.slice(ROOT.length)}/${entry.name}`;
      files.set(path, readFileSync(`${ROOT}${path}`, "utf8"));
    }
  }
  return files;
}

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// The committed document is the served one (test/workers/openapi-snapshot.test.ts). Every operation's
// full path (under /api) is written in one route file, beside its method and operationId, so that
// `git grep '/projects/{id}/heatmap'` lands in the file that serves it: no mount prefix hides part of it.
describe("route files", () => {
  it("each declare the full path of their operations: one file per operation in the document", () => {
    const doc = JSON.parse(readFileSync(DOCUMENT_FILE, "utf8")) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const files = routeFiles();
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ method, path, operationId: op.operationId })),
    );
    expect(operations.length).toBeGreaterThan(30);
    for (const { method, path, operationId } of operations) {
      const declaration = new RegExp(
        `method: "${method}",\\s+path: "${literal(path)}",\\s+operationId: "${operationId}",`,
      );
      const declaring = [...files].filter(([, text]) => declaration.test(text)).map(([file]) => file);
      expect(declaring, `${method.toUpperCase()} ${path} (${operationId})`).toHaveLength(1);
    }
  });

  it("declare no path the document lacks, and no path relative to a mount", () => {
    const doc = JSON.parse(readFileSync(DOCUMENT_FILE, "utf8")) as { paths: Record<string, unknown> };
    for (const [file, text] of routeFiles()) {
      for (const [, path] of text.matchAll(/^\s+path: "([^"]*)",$/gm)) {
        expect(Object.keys(doc.paths), `${file}: ${path}`).toContain(path);
      }
    }
  });
});

/**
 * The dashboard bundle's URLs carry its build hash (workers/api/web/dashboard.ts), so they cannot be
 * written out; every other page URL is.
 */
const HASHED = new Set([
  "workers/api/web/pages/assets/get.ts SCRIPT_PATH",
  "workers/api/web/pages/assets/get.ts STYLE_PATH",
]);

// Pages have one layout: a folder per page, a file per verb or action (get.ts, post.ts, revoke.ts,
// confirm-get.ts ...) that registers its URL as a literal, and view.ts for the HTML.
describe("page files", () => {
  it("each register their URLs as literals, every method and URL in one file only", () => {
    const seen = new Map<string, string>();
    for (const [file, text] of routeFiles(PAGES)) {
      for (const [, method = "", path] of text.matchAll(/\bapp\.(\w+)\(\s*([^,]+),/g)) {
        if (HASHED.has(`${file} ${path}`)) {
          continue;
        }
        expect(path, `${file}: app.${method}(${path}, ...)`).toMatch(/^"\/[^"]*"$/);
        const route = `${method.toUpperCase()} ${path}`;
        expect(seen.get(route), `${route} in ${file}`).toBeUndefined();
        seen.set(route, file);
      }
    }
    expect(seen.size).toBeGreaterThan(30);
  });
});
