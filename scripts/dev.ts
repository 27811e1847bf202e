// `npm run dev`: the whole service on embedded engines at http://127.0.0.1:8787 (PORT) until Ctrl-C: the
// API Worker (/api, pages) and the ingest Worker (/v1/events, /api/v1/events) behind a local router that
// plays Cloudflare's routes (scripts/local/router), behind a front door (scripts/local/front.ts). Another
// PORT is another stack with data and ports of its own (scripts/local/database.ts), beside the first.
import { existsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { apiKeys, projects, tenants, users } from "../schema/pg/schema.js";
import { createUser } from "../workers/api/accounts/users.js";
import { createKey, createProject, createTenant } from "../workers/api/bootstrap.js";
import type { Db } from "../workers/api/db.js";
import { newSecret } from "../workers/shared/credentials/secrets.js";
import { DATA_DIR, DEV_PORT, LOCAL_PG_PORT, type RunningStack, STACK_FILE } from "./local/database.js";
import { DEMO_MAP, DEMO_PROFILE, registerDemoMap, startDemoServer } from "./local/demo.js";
import { startFrontDoor } from "./local/front.js";
import { freePort, startMailCatcher } from "./local/mail.js";
import { startLocalStack } from "./local/stack.js";
import { DEV_CONFIGS, startWrangler, stopWrangler, waitUntilServing } from "./local/wrangler.js";

const PORT = DEV_PORT;
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
    const ingest = await createKey(db, project.id, "ingest", null, { type: "operator" });
    const full = await createKey(db, project.id, "full", null, { type: "operator" });
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
  const game = await createKey(db, project.id, "ingest", DEMO_GAME_KEY, { type: "operator" });
  const seed = await createKey(db, project.id, "full", SEED_KEY, { type: "operator" });
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

/**
 * Everything started is closed again in reverse order on every way out: Ctrl-C or SIGTERM (also while
 * starting), a failed start (a port in use), or wrangler exiting; nothing is left running without a
 * parent. The stack file (STACK_FILE) names the running stack for the admin CLI and the drills.
 */
async function main() {
  warnAboutDevVars();
  const closers: Array<() => Promise<void>> = [];
  let stopping: Promise<never> | undefined;
  let starting: Promise<unknown> = Promise.resolve();
  const stop = (code: number): Promise<never> => {
    stopping ??= (async () => {
      // A start under way finishes (or fails) first, so what it started is closed too.
      await starting.catch(() => {});
      for (const close of closers.reverse()) {
        await close().catch((err) => console.error("shutdown:", err instanceof Error ? err.message : err));
      }
      process.exit(code);
    })();
    return stopping;
  };
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const) {
    process.on(signal, () => void stop(code));
  }
  /** Runs one step of the start; what it returns is closed on the way out. */
  const step = async <T extends { close(): Promise<void> }>(start: () => Promise<T>): Promise<T> => {
    if (stopping) {
      return await stopping;
    }
    const started = start();
    starting = started;
    const value = await started;
    closers.push(() => value.close());
    if (stopping) {
      return await stopping;
    }
    return value;
  };
  try {
    const stack = await step(() =>
      startLocalStack({ dataDir: DATA_DIR, pgPort: LOCAL_PG_PORT || undefined }),
    );
    // Free ports unless named: a second stack starts beside the first.
    const mail = await step(() =>
      startMailCatcher({
        dir: `${DATA_DIR}/mail`,
        smtpPort: process.env.MAILDEV_SMTP_PORT ? Number(process.env.MAILDEV_SMTP_PORT) : undefined,
        webPort: process.env.MAILDEV_WEB_PORT ? Number(process.env.MAILDEV_WEB_PORT) : undefined,
      }),
    );
    const keys = await seedDemo(stack.databaseUrl);
    // wrangler on a loopback port of its own behind the front door (scripts/local/front.ts says why).
    const wranglerPort = await freePort();
    // DevTools attach here (chrome://inspect, "Configure"); its Network tab is off until they send
    // Network.enable themselves (scripts/local/inspector.ts says why).
    const inspectorPort = await freePort();
    const child = startWrangler(stack, {
      port: wranglerPort,
      persistTo: `${DATA_DIR}/wrangler`,
      mail,
      inspectorPort,
    });
    closers.push(() => stopWrangler(child));
    child.once("exit", (code) => {
      if (!stopping) {
        console.error(`wrangler dev exited (${code}); stopping`);
        void stop(code || 1);
      }
    });
    await waitUntilServing(child, `http://127.0.0.1:${wranglerPort}`);
    await step(() =>
      startFrontDoor({
        host: "127.0.0.1",
        port: PORT,
        upstreamPort: wranglerPort,
        log: (line) => console.warn(`[front door] ${line}`),
      }),
    );
    await registerDemoMap(BASE_URL, keys.seed.key, keys.projectId);
    await dropSeedKey(stack.databaseUrl, keys.seed.id);
    const demo = await step(() =>
      startDemoServer({ endpoint: `${BASE_URL}/v1/events`, apiKey: keys.game }, DEMO_GAME_PORT),
    );
    const running: RunningStack = {
      pid: process.pid,
      url: BASE_URL,
      databaseUrl: stack.databaseUrl,
      mailInbox: mail.inboxUrl,
      smtpPort: mail.smtpPort,
      demoUrl: demo.url,
    };
    await writeFile(STACK_FILE, `${JSON.stringify(running, null, 2)}\n`, { mode: 0o600 });
    closers.push(() => rm(STACK_FILE, { force: true }));
    console.log(
      `ready ${BASE_URL} (API: ${BASE_URL}/api, ingest: ${BASE_URL}/v1/events, data: ${DATA_DIR}, Postgres: ${new URL(stack.databaseUrl).port})`,
    );
    console.log(`mail inbox ${mail.inboxUrl} (SMTP on 127.0.0.1:${mail.smtpPort})`);
    console.log(`DevTools: 127.0.0.1:${inspectorPort}`);
    console.log(
      `demo game ${demo.url}: play a minute, then open ${BASE_URL}/projects/${keys.projectId}/heatmap?map=${DEMO_MAP.mapId} with the profile "${DEMO_PROFILE.name}"`,
    );
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    await stop(1);
  }
}

await main();
