// npm run drill:postgres: the ingest edge through a Postgres outage (docs/operations.md, "Postgres
// outage drill"). Postgres runs as a process of its own; a game sends batches the way the engine SDKs
// do while Postgres is SIGKILLed for DRILL_OUTAGE_S seconds (default 120) and then restarted on the
// same data directory and port. Halfway through the outage the Workers are restarted (wrangler dev
// again, its Durable Object state kept; DRILL_COLD_RESTART=0 skips it), with sending held meanwhile,
// so the second half is served by isolates that never saw the key: from the key replica. The last line
// is one JSON object: what the game got accepted, what its SDK dropped, what ClickHouse shows, and
// every answer by status.
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { createKey, createProject, createTenant } from "../../workers/api/bootstrap.js";
import { OPERATOR_CHANGES_PATH } from "../../workers/api/credentials/operator.js";
import { LOCAL_OPERATOR_SECRET } from "../admin/announce.js";
import { withBenchStack } from "../bench/stack.js";
import { clickhouseQuery } from "../local/clickhouse-http.js";
import { type LocalPostgres, startPostgres } from "../local/postgres.js";
import { stopWrangler } from "../local/wrangler.js";
import { newTotals, sendWhile } from "./sender.js";

const OUTAGE_S = Number(process.env.DRILL_OUTAGE_S ?? 120);
const BEFORE_S = Number(process.env.DRILL_BEFORE_S ?? 10);
const AFTER_S = Number(process.env.DRILL_AFTER_S ?? 20);
const CONCURRENCY = Number(process.env.DRILL_CONCURRENCY ?? 2);
const EVENTS = Number(process.env.DRILL_EVENTS ?? 500);
const PORT = Number(process.env.DRILL_PORT ?? 8797);
// A delivery that timed out keeps its batch claims until their lease lapses and is retried with backoff
// (workers/shared/queues.ts), so rows may take minutes to show under load: wait for progress that long.
const DRAIN_TIMEOUT_MS = Number(process.env.DRILL_DRAIN_TIMEOUT_S ?? 900) * 1000;
const ORIGIN = `http://127.0.0.1:${PORT}`;
const COLD_RESTART = process.env.DRILL_COLD_RESTART !== "0";

const log = (message: string) => process.stderr.write(`[drill] ${message}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A tenant, project and ingest key written straight to Postgres, as the admin CLI does. */
async function seed(databaseUrl: string) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const db = drizzle({ client: pool });
    // Enterprise: no monthly event budget and 900,000 ingest requests an hour.
    const tenant = await createTenant(db, "Drill Studio", "enterprise");
    const project = await createProject(db, tenant.id, "Drill Game");
    const key = await createKey(db, project.id, "ingest");
    return { tenantId: tenant.id, projectId: project.id, key: key.key };
  } finally {
    await pool.end();
  }
}

/** The postmaster's pid, from its own pid file. */
async function postmasterPid(dataDir: string): Promise<number> {
  const pid = Number.parseInt(
    (await readFile(join(dataDir, "postmaster.pid"), "utf8")).split("\n")[0] ?? "",
    10,
  );
  if (!Number.isInteger(pid)) {
    throw new Error("no postmaster.pid");
  }
  return pid;
}

/** Restarts Postgres on the same data dir and port; its killed backends may hold on for a moment. */
async function restart(dataDir: string, port: number): Promise<LocalPostgres> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await startPostgres({ dataDir, port });
    } catch (err) {
      if (Date.now() > deadline) {
        throw err;
      }
      await sleep(500);
    }
  }
}

async function main() {
  const pgDir = await mkdtemp(join(tmpdir(), "drill-postgres-"));
  // As root, embedded Postgres runs as the postgres user, which must be able to enter the directory.
  await chmod(pgDir, 0o755);
  let postgres = await startPostgres({ dataDir: join(pgDir, "pg") });
  const pgData = join(pgDir, "pg");
  // The stack uses this Postgres instead of starting its own, so the drill owns the process.
  process.env.DATABASE_URL = postgres.url;
  try {
    return await withBenchStack("drill", async ({ stack, serve }) => {
      const ch = stack.clickhouse;
      const sql = (q: string, params?: Record<string, string>) =>
        clickhouseQuery(ch.url, { user: ch.user, password: ch.password }, q, params);
      const { tenantId, projectId, key } = await seed(stack.databaseUrl);
      let worker = await serve(PORT, ORIGIN);
      // What `npm run admin -- key create` does after committing: announce, which writes the key replica.
      const announced = await fetch(`${ORIGIN}${OPERATOR_CHANGES_PATH}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${LOCAL_OPERATOR_SECRET}`, "Content-Type": "application/json" },
        body: JSON.stringify({ tenantId, projectIds: [projectId] }),
      });
      if (announced.status !== 200) {
        throw new Error(`announcement answered ${announced.status}: ${await announced.text()}`);
      }

      // Every accepted event must reach ClickHouse; counted once per (batch, index).
      const visible = async () =>
        Number(
          (
            await sql(
              "SELECT uniqExact(batch_id, event_index) FROM telemetry.events WHERE project_id = {p:UUID} FORMAT TSV",
              { p: projectId },
            )
          ).trim() || 0,
        );
      const totals = newTotals();
      let running = true;
      let held = false;
      const sending = sendWhile(
        ORIGIN,
        key,
        {
          concurrency: CONCURRENCY,
          events: EVENTS,
          pauseMs: 1000,
          running: () => running,
          held: () => held,
        },
        totals,
      );
      await sleep(BEFORE_S * 1000);
      const pid = await postmasterPid(pgData);
      log(`SIGKILL Postgres (pid ${pid}) for ${OUTAGE_S} s`);
      const killedAt = Date.now();
      const outageEnds = killedAt + OUTAGE_S * 1000;
      process.kill(pid, "SIGKILL");
      if (COLD_RESTART) {
        await sleep((OUTAGE_S * 1000) / 2);
        // A deploy's gap is not what this drill measures: no batch is in flight while the Workers restart.
        held = true;
        // Miniflare keeps a queue's messages in memory, where Cloudflare Queues keep them durably: let
        // the accepted batches reach ClickHouse first, or the restart would lose them.
        // Held no longer than the outage: a queue that has not drained by then is not restarted away.
        let drained = false;
        while (!drained && Date.now() < outageEnds) {
          drained = totals.inFlight === 0 && (await visible()) >= totals.acceptedEvents;
          await sleep(drained ? 0 : 500);
        }
        if (drained) {
          log("restarting the Workers: cold isolates, Postgres still down");
          await stopWrangler(worker);
          worker = await serve(PORT, ORIGIN);
        } else {
          log("the queue did not drain during the outage: the Workers are not restarted");
        }
        held = false;
      }
      await sleep(Math.max(0, outageEnds - Date.now()));
      log("restarting Postgres");
      postgres = await restart(pgData, postgres.port);
      // Longer than asked when the queue took long to drain before the Workers' restart.
      const outageS = Math.round((Date.now() - killedAt) / 1000);
      log(`Postgres back; sending ${AFTER_S} s more`);
      await sleep(AFTER_S * 1000);
      running = false;
      await sending;

      let seen = await visible();
      let lastChange = Date.now();
      while (seen < totals.acceptedEvents && Date.now() - lastChange < DRAIN_TIMEOUT_MS) {
        await sleep(500);
        const n = await visible();
        if (n !== seen) {
          seen = n;
          lastChange = Date.now();
        }
      }
      log(
        `${totals.acceptedBatches} batches accepted, ${totals.droppedBatches} dropped by the SDK; ${seen} events visible`,
      );
      return {
        outage_s: outageS,
        accepted_events: totals.acceptedEvents,
        dropped_by_sdk_events: totals.droppedEvents,
        visible_events: seen,
        answers: totals.answers,
      };
    });
  } finally {
    await postgres.close().catch(() => {});
    await rm(pgDir, { recursive: true, force: true });
  }
}

// Printed after everything has shut down, so it stays the last line.
console.log(JSON.stringify(await main()));
