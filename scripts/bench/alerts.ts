// bench:alerts: alert evaluation for many studios at once on the local stack. BENCH_TENANTS enterprise
// tenants, one project each with a webhook channel pointing at a receiver this script runs, BENCH_RULES
// active rules × 2 profiles per project, BENCH_EVENTS generated events spread evenly over the projects.
// Each run seeds a fresh rule set (so every pair records its first status, one evaluation event), fires
// one Cron Trigger through `wrangler dev --test-scheduled`, and waits until every pair has recorded its
// event and every notification the events promise has reached the receiver. Duplicates are counted in
// Postgres (more than one event per pair) and at the receiver (more than one delivery per pair).
// docs/operations.md, "Benchmarks", describes the runs and knobs.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { notificationChannels } from "../../schema/pg/schema.js";
import { SIGNING_SECRET_PREFIX } from "../../workers/api/alerts/signature.js";
import { createProject, createTenant } from "../../workers/api/bootstrap.js";
import { newSecret } from "../../workers/shared/credentials/secrets.js";
import { seedAlertRules } from "./alert-rules.js";
import { DEFAULT_PLAYERS, loadBenchData } from "./analytics-data.js";
import { withBenchStack } from "./stack.js";
import { printTable } from "./table.js";

const TENANTS = Number(process.env.BENCH_TENANTS ?? 20);
const RULES = Number(process.env.BENCH_RULES ?? 100);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 3_000_000);
const PLAYERS = Number(process.env.BENCH_PLAYERS ?? DEFAULT_PLAYERS);
const PORT = Number(process.env.BENCH_PORT ?? 8796);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const CELL_SIZES = (process.env.BENCH_CELL_SIZES ?? "25,50").split(",").map(Number);
// Every other rule may trigger (any failing cell: fail percentage 0.01); the others never do (100).
const TRIGGER_EVERY = Number(process.env.BENCH_TRIGGER_EVERY ?? 2);
// "normal": one cron; "overlap": two crons at once (a slow run still going at the next tick).
const RUNS = (process.env.BENCH_RUNS ?? "normal").split(",").map((s) => s.trim()) as RunKind[];
// How long a run may take before the bench gives up on it, and the quiet time that ends it.
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 900) * 1000;
const SETTLE_MS = Number(process.env.BENCH_SETTLE_S ?? 10) * 1000;
const NOTIFY_MS = 120_000;
const INTERVAL_MS = 5 * 60 * 1000;

type RunKind = "normal" | "overlap";

type Tenant = { projectId: string; channelId: string };

type Delivery = { at: number; pair: string; eventId: string };

type RunResult = {
  cronMs: number;
  wallMs: number;
  tenantMedianMs: number;
  tenantMaxMs: number;
  slowestMessageMs: number | null;
  pairs: number;
  events: number;
  triggered: number;
  notified: number;
  delivered: number;
  duplicateEvents: number;
  duplicateNotifications: number;
  missingNotifications: number;
};

/** The local webhook endpoint every channel points at: keeps each delivery's pair and event id. */
async function startReceiver() {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          eventId: string;
          rule: { id: string };
          thresholdProfile: { id: string };
        };
        deliveries.push({
          at: Date.now(),
          pair: `${body.rule.id}:${body.thresholdProfile.id}`,
          eventId: body.eventId,
        });
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** BENCH_TENANTS enterprise tenants with one project and one signed webhook channel each. */
async function seedTenants(pool: pg.Pool, hookUrl: string): Promise<Tenant[]> {
  const db = drizzle({ client: pool });
  const tenants: Tenant[] = [];
  for (let t = 0; t < TENANTS; t++) {
    const tenant = await createTenant(db, `Bench Studio ${t}`, "enterprise");
    const project = await createProject(db, tenant.id, `Bench Game ${t}`);
    const [channel] = await db
      .insert(notificationChannels)
      .values({
        projectId: project.id,
        kind: "webhook",
        name: "bench receiver",
        url: `${hookUrl}/${t}`,
        signingSecret: newSecret(SIGNING_SECRET_PREFIX),
      })
      .returning({ id: notificationChannels.id });
    tenants.push({ projectId: project.id, channelId: (channel as { id: string }).id });
  }
  return tenants;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor(s.length / 2)] as number) : 0;
};

/** Polls `done` every second; false when `deadline` passes first. */
const until = async (deadline: number, done: () => Promise<boolean>) => {
  while (!(await done())) {
    if (Date.now() > deadline) {
      return false;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  return true;
};

type Recorded = { pairs: number; events: number; triggered: number; notified: number; last: number };

async function recorded(pool: pg.Pool, ruleIds: string[]): Promise<Recorded> {
  const rs = await pool.query(
    `SELECT count(DISTINCT (alert_rule_id, evaluated_profile_id))::int AS pairs, count(*)::int AS events,
       count(*) FILTER (WHERE status = 'triggered')::int AS triggered,
       count(*) FILTER (WHERE notified)::int AS notified,
       coalesce(extract(epoch FROM max(created_at)) * 1000, 0)::float8 AS last
     FROM alert_evaluation_events WHERE alert_rule_id = ANY($1::uuid[])`,
    [ruleIds],
  );
  const r = rs.rows[0] as Recorded;
  return r;
}

/** When each tenant's last pair recorded its event, ms after `t0`. */
async function tenantFinishes(pool: pg.Pool, ruleIds: string[], t0: number): Promise<number[]> {
  const rs = await pool.query(
    `SELECT (extract(epoch FROM max(created_at)) * 1000)::float8 AS last
     FROM alert_evaluation_events WHERE alert_rule_id = ANY($1::uuid[]) GROUP BY project_id`,
    [ruleIds],
  );
  return rs.rows.map((r: { last: number }) => Math.round(r.last - t0));
}

/**
 * One Cron Trigger through `wrangler dev --test-scheduled`; answers its own time in ms. Plain http, not
 * fetch: a cron that evaluates everything itself may take longer than fetch's 300 s header timeout.
 */
function cron(): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(`${ORIGIN}/__scheduled?cron=*/5+*+*+*+*`, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => {
          body += c.toString("utf8");
        });
        res.on("end", () => {
          if (res.statusCode !== 200) {
            reject(new Error(`scheduled run: ${res.statusCode} ${body}`));
          } else {
            resolve(Math.round(performance.now() - t0));
          }
        });
      })
      .on("error", reject);
  });
}

async function run(
  kind: RunKind,
  databaseUrl: string,
  pool: pg.Pool,
  tenants: Tenant[],
  deliveries: Delivery[],
): Promise<RunResult> {
  const ruleIds: string[] = [];
  for (const t of tenants) {
    const ids = await seedAlertRules(databaseUrl, t.projectId, RULES, CELL_SIZES, {
      channelIds: [t.channelId],
      failPercentage: (i) => (i % TRIGGER_EVERY === 0 ? 0.01 : 100),
    });
    ruleIds.push(...ids);
  }
  const expected = ruleIds.length * 2;
  const fromDelivery = deliveries.length;
  console.log(`${kind}: ${ruleIds.length} rules, ${expected} pairs; cron…`);
  const t0 = Date.now();
  const deadline = t0 + TIMEOUT_MS;
  // Watched while the cron runs: before the queue, the invocation itself evaluates every pair.
  const crons = Promise.all(kind === "overlap" ? [cron(), cron()] : [cron()]);
  crons.catch(() => {}); // awaited below; a failure then throws there
  const all = await until(deadline, async () => {
    const r = await recorded(pool, ruleIds);
    process.stdout.write(`\r${kind}: ${r.pairs} / ${expected} pairs, ${Date.now() - t0} ms   `);
    return r.pairs >= expected;
  });
  console.log(all ? "" : ` (gave up after ${TIMEOUT_MS / 1000} s)`);
  const cronTimes = await crons;
  const cronMs = Math.max(...cronTimes);
  console.log(`${kind}: cron invocation ${cronTimes.join(" ms, ")} ms`);
  // Then every promised notification, then quiet: a late duplicate (an event or a delivery) still counts.
  const run = () => deliveries.slice(fromDelivery);
  const pairsDelivered = () => new Set(run().map((d) => d.pair)).size;
  // A notification that never arrives is reported as missing, after at most NOTIFY_MS.
  await until(
    Date.now() + NOTIFY_MS,
    async () => pairsDelivered() >= (await recorded(pool, ruleIds)).notified,
  );
  let seen = -1;
  let events = -1;
  while (seen !== deliveries.length || events !== (await recorded(pool, ruleIds)).events) {
    seen = deliveries.length;
    events = (await recorded(pool, ruleIds)).events;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
  }
  const r = await recorded(pool, ruleIds);
  const finishes = await tenantFinishes(pool, ruleIds, t0);
  const delivered = run();
  return {
    cronMs,
    wallMs: Math.round(r.last - t0),
    tenantMedianMs: median(finishes),
    tenantMaxMs: Math.max(...finishes),
    // One invocation evaluates everything: no message to time.
    slowestMessageMs: null,
    pairs: r.pairs,
    events: r.events,
    triggered: r.triggered,
    notified: r.notified,
    delivered: delivered.length,
    duplicateEvents: r.events - r.pairs,
    duplicateNotifications: delivered.length - pairsDelivered(),
    missingNotifications: r.notified - pairsDelivered(),
  };
}

async function main(): Promise<Record<string, number | null>> {
  const receiver = await startReceiver();
  try {
    return await withBenchStack("alerts", async ({ stack, serve }) => {
      const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
      try {
        const tenants = await seedTenants(pool, receiver.url);
        const projects = tenants.map((t) => t.projectId);
        console.log(
          `loading ${EVENTS.toLocaleString("en")} events of ${PLAYERS.toLocaleString("en")} players over ${TENANTS} projects…`,
        );
        const seconds = await loadBenchData(
          stack.clickhouse,
          // Every event goes to `otherProjects`, round robin.
          {
            mainProject: projects[0] as string,
            mainEvents: 0,
            otherProjects: projects,
            otherEvents: EVENTS,
            players: PLAYERS,
          },
          (line) => process.stdout.write(`\r${line}   `),
        );
        console.log(`\nloaded in ${seconds.toFixed(1)} s`);
        await serve(PORT, `${ORIGIN}/api`);
        const result: Record<string, number | null> = {
          tenants: TENANTS,
          rules: RULES,
          pairs_expected: TENANTS * RULES * 2,
          events: EVENTS,
        };
        const rows: string[][] = [];
        for (const kind of RUNS) {
          const r = await run(kind, stack.databaseUrl, pool, tenants, receiver.deliveries);
          rows.push([
            kind,
            String(r.cronMs),
            String(r.wallMs),
            r.wallMs <= INTERVAL_MS ? "yes" : "no",
            String(r.tenantMedianMs),
            String(r.tenantMaxMs),
            r.slowestMessageMs === null ? "—" : String(r.slowestMessageMs),
            `${r.pairs} / ${TENANTS * RULES * 2}`,
            String(r.triggered),
            `${r.delivered} / ${r.notified}`,
            String(r.duplicateEvents),
            String(r.duplicateNotifications),
          ]);
          for (const [k, v] of Object.entries(r)) {
            result[`${kind}_${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`] = v;
          }
        }
        console.log();
        printTable(
          [
            "run",
            "cron ms",
            "wall to last evaluation ms",
            "within 5 min",
            "tenant finish median ms",
            "tenant finish max ms",
            "slowest message ms",
            "pairs evaluated",
            "triggered",
            "delivered / notified",
            "duplicate events",
            "duplicate notifications",
          ],
          rows,
        );
        return result;
      } finally {
        await pool.end();
      }
    });
  } finally {
    await receiver.close();
  }
}

// Printed after everything has shut down, so it stays the last line.
console.log(JSON.stringify(await main()));
