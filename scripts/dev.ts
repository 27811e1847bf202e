// `npm run dev`: the whole service on embedded engines at http://127.0.0.1:8787 until Ctrl-C: the API
// Worker (/api, pages) and the ingest Worker (/v1/events, /api/v1/events) behind a local router that
// plays Cloudflare's routes (scripts/local/router).
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { apiKeys, projects, tenants, users } from "../schema/pg/schema.js";
import { createUser } from "../workers/api/accounts/users.js";
import { createKey, createProject, createTenant } from "../workers/api/bootstrap.js";
import type { Db } from "../workers/api/db.js";
import { newSecret } from "../workers/shared/credentials/secrets.js";
import { DATA_DIR, LOCAL_PG_PORT } from "./local/database.js";
import { DEMO_MAP, DEMO_PROFILE, registerDemoMap, startDemoServer } from "./local/demo.js";
import { startMailCatcher } from "./local/mail.js";
import { startLocalStack } from "./local/stack.js";
import { DEV_CONFIGS, startWrangler, stopWrangler, waitUntilServing } from "./local/wrangler.js";

const PORT = Number(process.env.PORT ?? 8787);
const BASE_URL = `http://127.0.0.1:${PORT}`;
const DEMO_TENANT = "Demo Studio";
const DEMO_EMAIL = "demo@example.com";
const DEMO_GAME_PORT = Number(process.env.DEMO_PORT ?? PORT + 1);
/** The keys `npm run dev` makes for itself on every start; the previous start's are deleted first. */
const DEMO_GAME_KEY = "demo game (npm run dev)";
const SEED_KEY = "demo map seed (npm run dev)";

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
async function seedDemo(databaseUrl: string): Promise<DemoKeys> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const db = drizzle({ client: pool });
    const [existing] = await db.select().from(tenants).where(eq(tenants.name, DEMO_TENANT)).limit(1);
    if (existing) {
      console.log(
        `demo tenant ${existing.id} already seeded (keys were shown on the first run; make more with npm run admin)`,
      );
      await seedDemoUser(db, existing.id);
      return await demoGameKeys(db, existing.id);
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
    return await demoGameKeys(db, tenant.id);
  } finally {
    await pool.end();
  }
}

type DemoKeys = { projectId: string; game: string; seed: { id: string; key: string } };

/**
 * The demo game's ingest key (it ships in the game's page, as any web game's does) and a short-lived full
 * key that registers the demo's map and profile. Both are made on each start and live only in this
 * process; the previous start's are deleted, so they do not pile up on the API Keys page.
 */
async function demoGameKeys(db: Db, tenantId: string): Promise<DemoKeys> {
  const [project] = await db
    .select({ id: projects.id })
    .from(projects)
    .where(eq(projects.tenantId, tenantId))
    .limit(1);
  if (!project) {
    throw new Error("the demo tenant has no project");
  }
  for (const name of [DEMO_GAME_KEY, SEED_KEY]) {
    await db.delete(apiKeys).where(and(eq(apiKeys.projectId, project.id), eq(apiKeys.name, name)));
  }
  const game = await createKey(db, project.id, "ingest", DEMO_GAME_KEY);
  const seed = await createKey(db, project.id, "full", SEED_KEY);
  return { projectId: project.id, game: game.key, seed: { id: seed.id, key: seed.key } };
}

/** The seed key is needed only until the map and profile are registered. */
async function dropSeedKey(databaseUrl: string, id: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    await drizzle({ client: pool }).delete(apiKeys).where(eq(apiKeys.id, id));
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
  let demo: Awaited<ReturnType<typeof startDemoServer>> | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) {
      return;
    }
    stopping = true;
    await demo?.close();
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
    const keys = await seedDemo(stack.databaseUrl);
    child = startWrangler(stack, { port: PORT, persistTo: `${DATA_DIR}/wrangler`, mail });
    child.once("exit", (code) => {
      if (!stopping) {
        console.error(`wrangler dev exited (${code}); stopping`);
        void stop(code ?? 1);
      }
    });
    await waitUntilServing(child, BASE_URL);
    await registerDemoMap(BASE_URL, keys.seed.key, keys.projectId);
    await dropSeedKey(stack.databaseUrl, keys.seed.id);
    demo = await startDemoServer({ endpoint: `${BASE_URL}/v1/events`, apiKey: keys.game }, DEMO_GAME_PORT);
    console.log(
      `ready ${BASE_URL} (API: ${BASE_URL}/api, ingest: ${BASE_URL}/v1/events, mail inbox: ${mail.inboxUrl})`,
    );
    console.log(
      `demo game ${demo.url}: play a minute, then open ${BASE_URL}/projects/${keys.projectId}/heatmap?map=${DEMO_MAP.mapId} with the profile "${DEMO_PROFILE.name}"`,
    );
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    await stop(1);
  }
}

await main();
