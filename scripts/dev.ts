// `npm run dev`: the whole service on embedded engines at http://127.0.0.1:8787/api until Ctrl-C.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { tenants } from "../schema/pg/schema.js";
import { createKey, createProject, createTenant } from "../workers/shared/bootstrap.js";
import { DATA_DIR, LOCAL_PG_PORT } from "./local/database.js";
import { type LocalStack, startLocalStack } from "./local/stack.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PORT = Number(process.env.PORT ?? 8787);
const BASE_URL = `http://127.0.0.1:${PORT}/api`;
const DEMO_TENANT = "Demo Studio";

/** Creates the demo tenant, project and keys on the first run only; keys are shown that once. */
async function seedDemo(databaseUrl: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const db = drizzle({ client: pool });
    const [existing] = await db.select().from(tenants).where(eq(tenants.name, DEMO_TENANT)).limit(1);
    if (existing) {
      console.log(
        `demo tenant ${existing.id} already seeded (keys were shown on the first run; make more with npm run admin)`,
      );
      return;
    }
    const tenant = await createTenant(db, DEMO_TENANT, "studio");
    const project = await createProject(db, tenant.id, "Demo Game");
    const ingest = await createKey(db, project.id, "ingest");
    const full = await createKey(db, project.id, "full");
    console.log(
      JSON.stringify({
        demo: { tenantId: tenant.id, projectId: project.id, ingestKey: ingest.key, fullKey: full.key },
      }),
    );
    console.log("these keys are shown once and stored only as hashes");
  } finally {
    await pool.end();
  }
}

function startWrangler(stack: LocalStack): ChildProcess {
  const vars = {
    DATABASE_URL: stack.databaseUrl,
    CLICKHOUSE_URL: stack.clickhouse.url,
    CLICKHOUSE_USER: stack.clickhouse.user,
    CLICKHOUSE_PASSWORD: stack.clickhouse.password,
    NEON_LOCAL_PROXY: stack.neonProxy,
  };
  const args = [
    `${ROOT}node_modules/wrangler/bin/wrangler.js`,
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(PORT),
    "--persist-to",
    `${DATA_DIR}/wrangler`,
    // Local dev does not fire Cron Triggers; this exposes /__scheduled to run alert evaluation by hand.
    "--test-scheduled",
  ];
  args.push("--show-interactive-dev-session=false", "--log-level", process.env.WRANGLER_LOG ?? "warn");
  for (const [k, v] of Object.entries(vars)) {
    args.push("--var", `${k}:${v}`);
  }
  // Its own process group, so stopping it stops workerd too and nothing keeps the port.
  return spawn(process.execPath, args, {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "inherit", "inherit"],
    // No network beyond loopback here: use the fallback Request.cf rather than fetching it.
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  });
}

async function waitUntilServing(child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`wrangler dev exited with ${child.exitCode}`);
    }
    try {
      const res = await fetch(`${BASE_URL}/v1/openapi.json`);
      if (res.ok) {
        return;
      }
    } catch {
      // not yet listening
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error("wrangler dev did not start serving within 120 s");
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) {
      process.kill(-child.pid, signal);
    }
  } catch {
    // already gone
  }
}

async function main() {
  const stack = await startLocalStack({ dataDir: DATA_DIR, pgPort: LOCAL_PG_PORT });
  let child: ChildProcess | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) {
      return;
    }
    stopping = true;
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child?.once("exit", r));
      signalGroup(child, "SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      signalGroup(child, "SIGKILL");
    }
    await stack.close();
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));
  try {
    await seedDemo(stack.databaseUrl);
    child = startWrangler(stack);
    child.once("exit", (code) => {
      if (!stopping) {
        console.error(`wrangler dev exited (${code}); stopping`);
        void stop(code ?? 1);
      }
    });
    await waitUntilServing(child);
    console.log(`ready ${BASE_URL}`);
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    await stop(1);
  }
}

await main();
