import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

describe("generated protobuf code", () => {
  it("is what buf generates from proto/ today (run `npm run generate` if this fails)", () => {
    const out = mkdtempSync(join(tmpdir(), "proto-gen-"));
    try {
      execFileSync(join(ROOT, "node_modules/.bin/buf"), ["generate", "-o", out], {
        cwd: ROOT,
        stdio: "pipe",
      });
      const fresh = join(out, "proto/gen");
      const committed = join(ROOT, "proto/gen");
      expect(files(fresh)).toEqual(files(committed));
      for (const f of files(fresh)) {
        expect(readFileSync(join(committed, f), "utf8"), f).toBe(readFileSync(join(fresh, f), "utf8"));
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
