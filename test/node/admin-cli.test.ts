import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalPostgres, startPostgres } from "../../scripts/local/postgres.js";
import { migratePostgres } from "../../scripts/migrate.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** A loopback port nothing listens on: the announcement to it fails at once. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

type Run = { code: number | null; stdout: string; stderr: string };

/** `npm run admin -- …` as a script runs it, on the stack whose data is `dataDir`. */
function admin(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const { DATABASE_URL: _db, OPERATOR_API_URL: _url, OPERATOR_SECRET: _secret, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "scripts/admin.ts", ...args],
      { cwd: ROOT, timeout: 90_000, env: { ...inherited, LOCAL_DATA_DIR: dataDir, ...env } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe("npm run admin: exit codes (docs/development.md, Admin CLI)", () => {
  let dataDir: string;
  let pg: LocalPostgres | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "admin-cli-"));
    // As root, embedded Postgres runs as the postgres user, which must be able to enter the directory.
    await chmod(dataDir, 0o755);
    pg = await startPostgres({ dataDir: join(dataDir, "postgres") });
    await migratePostgres(pg.url);
  }, 120_000);

  afterAll(async () => {
    await pg?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("beside a running stack: a failure exits 1, bad usage 2, a change nobody was told of 3", async () => {
    // What `npm run dev` writes while it runs (its pid alive: this process's), its Postgres ours.
    await writeFile(
      join(dataDir, "stack.json"),
      JSON.stringify({
        pid: process.pid,
        url: `http://127.0.0.1:${await closedPort()}`,
        databaseUrl: pg?.url,
        mailInbox: "",
        smtpPort: 0,
        demoUrl: "",
      }),
    );
    const missing = await admin(dataDir, ["project", "create", "--tenant", randomUUID(), "--name", "Game"]);
    expect(missing.stderr).toContain("error:");
    expect(missing.stdout).toBe("");
    expect(missing.code).toBe(1);

    const usage = await admin(dataDir, ["project", "create", "--name", "Game"]);
    expect(usage.stderr).toContain("missing --tenant");
    expect(usage.code).toBe(2);

    // Committed (its id on stdout), the running stack unreachable: 3, as documented.
    const unannounced = await admin(dataDir, [
      "project",
      "create",
      "--tenant",
      await tenant(),
      "--name",
      "G",
    ]);
    expect(JSON.parse(unannounced.stdout)).toMatchObject({ id: expect.any(String) });
    expect(unannounced.stderr).toContain("the change is committed, but the Workers could not be told");
    expect(unannounced.code).toBe(3);
    await rm(join(dataDir, "stack.json"));
  });

  it("with no stack running: the CLI starts Postgres itself, and a failure still exits 1", async () => {
    await pg?.close();
    pg = undefined;
    const port = String(await closedPort());
    const missing = await admin(dataDir, ["project", "create", "--tenant", randomUUID(), "--name", "Game"], {
      LOCAL_PG_PORT: port,
    });
    expect(missing.stderr).toContain("error:");
    expect(missing.code, missing.stderr).toBe(1);
    // And a success exits 0 on the same footing (a new tenant is nothing cached: no announcement).
    const made = await admin(dataDir, ["tenant", "create", "--name", "Studio", "--plan", "free"], {
      LOCAL_PG_PORT: port,
    });
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ id: expect.any(String) });
  });

  /** A tenant made through the CLI (nothing cached changes: no announcement, exit 0). */
  async function tenant(): Promise<string> {
    const made = await admin(dataDir, ["tenant", "create", "--name", "Studio", "--plan", "free"]);
    expect(made.code).toBe(0);
    return (JSON.parse(made.stdout) as { id: string }).id;
  }
});
