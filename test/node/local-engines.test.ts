import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { closedToOthers, startPostgres } from "../../scripts/local/postgres.js";

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

describe("a checkout in a folder only its owner may enter (as /root is)", () => {
  it("finds the folder other users cannot pass through on a path", async () => {
    const closed = await mkdtemp(join(tmpdir(), "private-checkout-"));
    try {
      // mkdtemp makes it 0700: nobody but its owner enters it.
      expect((await stat(closed)).mode & 0o777).toBe(0o700);
      const below = join(closed, "repo", "node_modules", "x", "native", "bin");
      await mkdir(below, { recursive: true });
      expect(await closedToOthers(below)).toBe(closed);
      expect(await closedToOthers(join(closed, "repo", ".data", "not-yet"))).toBe(closed);
      expect(await closedToOthers(tmpdir())).toBeUndefined();
    } finally {
      await rm(closed, { recursive: true, force: true });
    }
  });

  it("Postgres with its data there: as root it stops at once naming the folder and the fix; otherwise it runs", async () => {
    const closed = await mkdtemp(join(tmpdir(), "private-checkout-"));
    const dataDir = join(closed, "repo", ".data", "postgres");
    try {
      if (process.getuid?.() === 0) {
        // Root runs Postgres as the postgres user, which cannot enter the folder: before this it waited
        // on initdb's EACCES for good (npm test: 300 s, then a hook timeout).
        const refused = await startPostgres({ dataDir }).then(
          async (server) => {
            await server.close();
            return "started";
          },
          (err: Error) => err.message,
        );
        expect(refused).toContain(`cannot enter ${closed}`);
        expect(refused).toContain("'postgres' user");
        expect(refused).toContain(`chmod o+x ${closed}`);
      } else {
        // Any other user runs Postgres as itself, which enters its own folder.
        const server = await startPostgres({ dataDir });
        try {
          const client = new pg.Client({ connectionString: server.url });
          await client.connect();
          const { rows } = await client.query("SELECT 1 AS one");
          await client.end();
          expect(rows).toEqual([{ one: 1 }]);
        } finally {
          await server.close();
        }
      }
    } finally {
      await rm(closed, { recursive: true, force: true });
    }
  });
});

describe("a checkout in a folder only root may enter, started as root", () => {
  it("Postgres from that checkout's binaries stops at once, naming the folder and the fix", async () => {
    // A copy of the checkout's files (hard links: no bytes copied) under a 0700 folder beside it, on
    // the same file system; its Postgres data where anyone may pass (as the test suite's temp dir is).
    await mkdir(join(ROOT, ".data"), { recursive: true });
    const closed = await mkdtemp(join(ROOT, ".data", "private-checkout-"));
    const dataDir = await mkdtemp(join(tmpdir(), "private-checkout-data-"));
    await chmod(dataDir, 0o755);
    try {
      const repo = join(closed, "repo");
      await mkdir(join(repo, "scripts"), { recursive: true });
      await promisify(execFile)("cp", ["-al", join(ROOT, "node_modules"), join(repo, "node_modules")]);
      await promisify(execFile)("cp", [
        "-al",
        join(ROOT, "scripts", "local"),
        join(repo, "scripts", "local"),
      ]);
      await promisify(execFile)("cp", ["-al", join(ROOT, "package.json"), join(repo, "package.json")]);
      const script =
        "const { startPostgres } = await import('./scripts/local/postgres.ts');" +
        `try { const s = await startPostgres({ dataDir: ${JSON.stringify(join(dataDir, "pg"))} });` +
        " await s.close(); console.log('started'); }" +
        " catch (e) { console.log(e.message); }";
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "-e", script],
        { cwd: repo, timeout: 60_000 },
      );
      if (process.getuid?.() === 0) {
        // Before: initdb spawned as the postgres user failed with EACCES and the start waited for good.
        expect(stdout).toContain(`cannot enter ${closed}`);
        expect(stdout).toContain("to reach the Postgres binaries");
        expect(stdout).toContain(`chmod o+x ${closed}`);
      } else {
        // Not root: Postgres runs as the caller, who enters its own folder.
        expect(stdout.trim()).toBe("started");
      }
    } finally {
      await rm(closed, { recursive: true, force: true });
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
