// npm run drill:dev: `npm run dev` as a person runs it, for DRILL_DEV_S seconds (default 600): headless
// Chromium plays the demo game (the web SDK posting from the browser, CORS and all) while a sender posts
// SDK-shaped batches the way the engine SDKs do (scripts/drill/sender.ts). Then it checks that nothing
// was answered "restarted mid-request" (wrangler's 503) and the Workers never reloaded, that every accepted event is in ClickHouse once
// (count() through POST /api/v1/query, whose `events` is deduplicated), and that Ctrl-C leaves no process of
// the stack behind. The stack runs on DRILL_DEV_PORT (8790) with a data dir of its own in a temp dir;
// DRILL_DEV_CONCURRENCY (2) senders of DRILL_DEV_EVENTS (500) events, one batch a second each. The last
// line is one JSON object; the exit code is 1 when anything was lost or answered 503.
import { type ChildProcess, spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { eq } from "drizzle-orm";
import { chromium } from "playwright-core";
import { projects, tenants } from "../../schema/pg/schema.js";
import { resolveChromium } from "../../test/support/chromium-setup.js";
import { createKey } from "../../workers/api/bootstrap.js";
import type { RunningStack } from "../local/database.js";
import { signalGroup } from "../local/wrangler.js";
import { descendants, type Proc, processes } from "./processes.js";
import { seedProject } from "./seed.js";
import { newTotals, sendWhile } from "./sender.js";

const SECONDS = Number(process.env.DRILL_DEV_S ?? 600);
const PORT = Number(process.env.DRILL_DEV_PORT ?? 8790);
const CONCURRENCY = Number(process.env.DRILL_DEV_CONCURRENCY ?? 2);
const EVENTS = Number(process.env.DRILL_DEV_EVENTS ?? 500);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PROXY_LOST = "restarted mid-request";

const log = (message: string) => process.stderr.write(`[drill:dev] ${message}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `npm run dev` in a process group of its own; its output is kept (and counted) here. */
function startDev(dataDir: string, output: string[]): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/dev.ts"], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      PORT: String(PORT),
      DEMO_PORT: String(PORT + 1),
      LOCAL_DATA_DIR: dataDir,
      // wrangler's "log" level prints its reloads ("Reloading local server"), which are counted.
      WRANGLER_LOG: "log",
    },
  });
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding("utf8");
    stream?.on("data", (text: string) => output.push(...text.split("\n").filter(Boolean)));
  }
  return child;
}

async function waitForStack(file: string, child: ChildProcess): Promise<RunningStack> {
  const deadline = Date.now() + 240_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`npm run dev exited with ${child.exitCode}`);
    }
    const text = await readFile(file, "utf8").catch(() => undefined);
    if (text) {
      return JSON.parse(text) as RunningStack;
    }
    await sleep(500);
  }
  throw new Error("npm run dev was not ready within 240 s");
}

/** A project of the drill's own for the sender, and full keys (POST /v1/query) for it and the demo. */
async function seed(databaseUrl: string) {
  const { projectId, keys, more } = await seedProject(
    databaseUrl,
    { studio: "Drill Studio", game: "Drill Game" },
    ["ingest", "full"] as const,
    async (db) => {
      const [demo] = await db
        .select({ id: projects.id })
        .from(projects)
        .innerJoin(tenants, eq(tenants.id, projects.tenantId))
        .where(eq(tenants.name, "Demo Studio"))
        .limit(1);
      if (!demo) {
        throw new Error("npm run dev seeded no demo project");
      }
      return { projectId: demo.id, fullKey: (await createKey(db, demo.id, "full")).key };
    },
  );
  return { sender: { projectId, ingestKey: keys.ingest, fullKey: keys.full }, demo: more };
}

/** Events of a project in ClickHouse, through the query API. */
async function eventsIn(origin: string, projectId: string, key: string): Promise<number> {
  const res = await fetch(`${origin}/api/v1/query`, {
    method: "POST",
    headers: { "X-API-Key": key, "Content-Type": "application/json" },
    body: JSON.stringify({
      project_id: projectId,
      sql: "SELECT count() AS n FROM events",
    }),
  });
  const text = await res.text();
  if (!res.ok) {
    throw new Error(`POST /api/v1/query answered ${res.status}: ${text}`);
  }
  const n = /"n":"?(\d+)/.exec(text)?.[1];
  if (n === undefined) {
    throw new Error(`no count in ${text.slice(0, 200)}`);
  }
  return Number(n);
}

/** Which of `procs` still run (same pid and command: a reused pid is not one of ours). */
async function stillAlive(procs: Proc[]): Promise<string[]> {
  const now = new Map((await processes()).filter((p) => !p.zombie).map((p) => [p.pid, p.comm]));
  return procs.filter((p) => now.get(p.pid) === p.comm).map((p) => `${p.comm} (${p.pid})`);
}

async function main() {
  const dataDir = await mkdtemp(join(tmpdir(), "drill-dev-"));
  // As root, embedded Postgres runs as the postgres user, which must be able to enter the directory.
  await chmod(dataDir, 0o755);
  const output: string[] = [];
  const dev = startDev(dataDir, output);
  const pgid = dev.pid as number;
  try {
    const stack = await waitForStack(join(dataDir, "stack.json"), dev);
    log(`stack ready at ${stack.url}, demo at ${stack.demoUrl}; ${SECONDS} s of play and sending`);
    const keys = await seed(stack.databaseUrl);

    // The browser: the demo page as served, walked to a new spot every 3 s.
    const { path } = await resolveChromium();
    const browser = await chromium.launch({
      executablePath: path,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
      ],
    });
    const page = await browser.newPage();
    const browserAnswers: Record<string, number> = {};
    page.on("response", (r) => {
      if (r.url().endsWith("/v1/events") && r.request().method() === "POST") {
        browserAnswers[r.status()] = (browserAnswers[r.status()] ?? 0) + 1;
      }
    });
    page.on("requestfailed", (r) => {
      if (r.url().endsWith("/v1/events")) {
        browserAnswers.failed = (browserAnswers.failed ?? 0) + 1;
      }
    });
    await page.goto(stack.demoUrl);

    const totals = newTotals();
    const started = Date.now();
    const running = () => Date.now() - started < SECONDS * 1000;
    const sending = sendWhile(
      stack.url,
      keys.sender.ingestKey,
      { concurrency: CONCURRENCY, events: EVENTS, pauseMs: 1000, running },
      totals,
    );
    for (let i = 0; running(); i++) {
      await page.evaluate(`window.demo.walkTo(${40 + ((i * 137) % 420)}, ${40 + ((i * 251) % 420)})`);
      await sleep(3000);
      if (i % 20 === 0) {
        log(
          `t=${Math.round((Date.now() - started) / 1000)} s  sender ${JSON.stringify(totals.answers)}  browser ${JSON.stringify(browserAnswers)}`,
        );
      }
    }
    await sending;
    // The game flushes what it holds and reports what ingest accepted.
    const sdk = (await page.evaluate("window.telemetry.flush().then(() => window.telemetry.stats())")) as {
      tracked: number;
      delivered: number;
      dropped: number;
      queued: number;
      pending: number;
    };
    await browser.close();

    // Wait for the queue to drain: every accepted event visible, or 300 s.
    const deadline = Date.now() + 300_000;
    let senderRows = 0;
    let demoRows = 0;
    for (;;) {
      senderRows = await eventsIn(stack.url, keys.sender.projectId, keys.sender.fullKey);
      demoRows = await eventsIn(stack.url, keys.demo.projectId, keys.demo.fullKey);
      if ((senderRows >= totals.acceptedEvents && demoRows >= sdk.delivered) || Date.now() > deadline) {
        break;
      }
      await sleep(2000);
    }
    const restarted = output.filter((l) => l.includes(PROXY_LOST)).length;
    const reloads = output.filter((l) => l.includes("Reloading local server")).length;
    const retried = output.filter((l) => l.startsWith("[front door]"));

    // Ctrl-C, as a person stops it: everything the stack started must be gone.
    const stackProcesses = await descendants(pgid);
    signalGroup(dev, "SIGINT");
    const exitDeadline = Date.now() + 30_000;
    while ((await stillAlive(stackProcesses)).length > 0 && Date.now() < exitDeadline) {
      await sleep(500);
    }
    const leftBehind = await stillAlive(stackProcesses);

    const result = {
      seconds: Math.round((Date.now() - started) / 1000),
      sender: {
        accepted_events: totals.acceptedEvents,
        dropped_events: totals.droppedEvents,
        rows: senderRows,
        answers: totals.answers,
      },
      browser: {
        tracked: sdk.tracked,
        delivered: sdk.delivered,
        dropped: sdk.dropped,
        waiting: sdk.queued + sdk.pending,
        rows: demoRows,
        answers: browserAnswers,
      },
      answers_503: (totals.answers["503"] ?? 0) + (browserAnswers["503"] ?? 0),
      restarted_mid_request_in_logs: restarted,
      worker_reloads: reloads,
      front_door_retries: retried.length,
      stack_processes: stackProcesses.length,
      left_after_ctrl_c: leftBehind,
    };
    if (retried.length > 0) {
      log(`front door retries:\n${retried.slice(0, 20).join("\n")}`);
    }
    const lost =
      result.sender.rows !== totals.acceptedEvents ||
      totals.droppedEvents > 0 ||
      demoRows !== sdk.delivered ||
      sdk.dropped > 0 ||
      result.answers_503 > 0 ||
      restarted > 0 ||
      reloads > 0 ||
      leftBehind.length > 0;
    console.log(JSON.stringify(result));
    process.exitCode = lost ? 1 : 0;
  } catch (err) {
    log(`failed: ${err instanceof Error ? err.message : String(err)}\n${output.slice(-30).join("\n")}`);
    process.exitCode = 1;
  } finally {
    if (dev.exitCode === null) {
      signalGroup(dev, "SIGINT");
      await new Promise((r) => setTimeout(r, 10_000));
      signalGroup(dev, "SIGKILL");
    }
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
