import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

describe("local engines (scripts/local/smoke.ts)", () => {
  it("chdb speaks the ClickHouse HTTP interface, settings honoured; the Neon driver reaches Postgres", async () => {
    // Its own process: chdb binds one data directory per process, and the workers project's global
    // setup already holds one in this one.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "scripts/local/smoke.ts"],
      {
        cwd: ROOT,
        timeout: 90_000,
      },
    ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? String(err) }));
    const lines = stdout.trim().split("\n");
    expect(lines.filter((l) => l.startsWith("FAIL"))).toEqual([]);
    expect(lines.filter((l) => l.startsWith("PASS")).length).toBeGreaterThan(15);
    expect(lines.at(-1)).toBe("ALL PASS");
  });
});
