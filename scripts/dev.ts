// `npm run dev`: the whole service on embedded engines at http://127.0.0.1:8787 until Ctrl-C: the API
// Worker (/api, pages) and the ingest Worker (/v1/events, /api/v1/events) behind a local router that
// plays Cloudflare's routes (scripts/local/router).
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { tenants, users } from "../schema/pg/schema.js";
import { createUser } from "../workers/api/accounts/users.js";
import { createKey, createProject, createTenant } from "../workers/shared/bootstrap.js";
import { newSecret } from "../workers/shared/credentials/secrets.js";
import type { Db } from "../workers/shared/db.js";
import { DATA_DIR, LOCAL_PG_PORT } from "./local/database.js";
import { startMailCatcher } from "./local/mail.js";
import { startLocalStack } from "./local/stack.js";
import { DEV_CONFIGS, startWrangler, stopWrangler, waitUntilServing } from "./local/wrangler.js";

const PORT = Number(process.env.PORT ?? 8787);
const BASE_URL = `http://127.0.0.1:${PORT}`;
const DEMO_TENANT = "Demo Studio";
const DEMO_EMAIL = "demo@example.com";

/** The demo owner, created once (also into a data dir seeded before users existed); shown that once. */
async function seedDemoUser(db: Db, tenantId: string): Promise<void> {
  const [existing] = await db
    .select({ id: users.id })
    .from(users)
    .where(eq(users.email, DEMO_EMAIL))
    .limit(1);
  if (existing) {
    return;
  }
  const password = newSecret("demo-").slice(0, 25);
  await createUser(db, { tenantId, email: DEMO_EMAIL, password, role: "owner" });
  console.log(
    JSON.stringify({ demoUser: { email: DEMO_EMAIL, password, signIn: `http://127.0.0.1:${PORT}/sign-in` } }),
  );
  console.log("this password is shown once and stored only as a scrypt hash");
}

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
      await seedDemoUser(db, existing.id);
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
    await seedDemoUser(db, tenant.id);
  } finally {
    await pool.end();
  }
}

/** A .dev.vars beside a config replaces the engines' addresses for that Worker (wrangler's rule). */
function warnAboutDevVars(): void {
  for (const config of DEV_CONFIGS) {
    const file = join(dirname(config), ".dev.vars");
    if (existsSync(file)) {
      console.warn(`${file} is present: wrangler uses it instead of the local engines for that Worker`);
    }
  }
}

async function main() {
  warnAboutDevVars();
  const stack = await startLocalStack({ dataDir: DATA_DIR, pgPort: LOCAL_PG_PORT });
  const mail = await startMailCatcher({
    dir: `${DATA_DIR}/mail`,
    smtpPort: Number(process.env.MAILDEV_SMTP_PORT ?? 1025),
    webPort: Number(process.env.MAILDEV_WEB_PORT ?? 1080),
  });
  let child: ChildProcess | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) {
      return;
    }
    stopping = true;
    if (child) {
      await stopWrangler(child);
    }
    await mail.close();
    await stack.close();
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));
  try {
    await seedDemo(stack.databaseUrl);
    child = startWrangler(stack, { port: PORT, persistTo: `${DATA_DIR}/wrangler`, mail });
    child.once("exit", (code) => {
      if (!stopping) {
        console.error(`wrangler dev exited (${code}); stopping`);
        void stop(code ?? 1);
      }
    });
    await waitUntilServing(child, BASE_URL);
    console.log(
      `ready ${BASE_URL} (API: ${BASE_URL}/api, ingest: ${BASE_URL}/v1/events, mail inbox: ${mail.inboxUrl})`,
    );
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    await stop(1);
  }
}

await main();
