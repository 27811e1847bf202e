// bench:alerts: alert evaluation for many studios at once on the local stack, through the jobs queue.
// BENCH_TENANTS enterprise tenants, one project each with a webhook channel pointing at a receiver this
// script runs, BENCH_RULES active rules × 2 profiles per project, BENCH_EVENTS generated events spread
// evenly over the projects. Each run seeds a fresh rule set (so every pair records its first status as
// one evaluation event), fires the Cron Trigger through `wrangler dev --test-scheduled` (which only plans
// and sends the work to the jobs queue), and waits until every pair's state holds the run, every
// notification the events promise has reached the receiver, and nothing more arrives. Duplicates are
// counted in Postgres (more than one event per pair) and at the receiver (more than one delivery per
// pair); each message's own time comes from the consumer's log line. docs/benchmarks.md, "bench:alerts".
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { notificationChannels } from "../../schema/pg/schema.js";
import { MAX_PAIRS_PER_MESSAGE } from "../../workers/api/alerts/plan.js";
import { DELIVERY_HEADER, SIGNING_SECRET_PREFIX } from "../../workers/api/alerts/signature.js";
import { createProject, createTenant } from "../../workers/api/bootstrap.js";
import { newSecret } from "../../workers/shared/credentials/secrets.js";
import { seedAlertRules } from "./alert-rules.js";
import { loadBenchData, PLAYERS } from "./analytics-data.js";
import { withBenchStack } from "./stack.js";
import { printTable } from "./table.js";

const TENANTS = Number(process.env.BENCH_TENANTS ?? 20);
const RULES = Number(process.env.BENCH_RULES ?? 100);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 3_000_000);
const PORT = Number(process.env.BENCH_PORT ?? 8796);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const CELL_SIZES = (process.env.BENCH_CELL_SIZES ?? "25,50").split(",").map(Number);
// Every other rule may trigger (any failing cell: fail percentage 0.01); the others never do (100).
const TRIGGER_EVERY = Number(process.env.BENCH_TRIGGER_EVERY ?? 2);
// "normal": one cron; "overlap": two crons for the same minute at once (a slow run still going at the
// next tick, or a retried invocation); "fault": one cron whose consumers throw halfway through each
// message on its first delivery (the local knob alertFaultThrowAfter in LOCAL_KNOBS, workers/shared/config.ts).
const RUNS = (process.env.BENCH_RUNS ?? "normal,overlap,fault").split(",").map((s) => s.trim()) as RunKind[];
// Pairs a consumer records before it throws in the fault run; by default half the median message.
const FAULT_AFTER = process.env.BENCH_FAULT_AFTER ? Number(process.env.BENCH_FAULT_AFTER) : undefined;
// How long a run may take before the bench gives up on it, and the quiet time that ends it.
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 900) * 1000;
const SETTLE_MS = Number(process.env.BENCH_SETTLE_S ?? 10) * 1000;
const NOTIFY_MS = 120_000;
const INTERVAL_MS = 5 * 60 * 1000;

type RunKind = "normal" | "overlap" | "fault";

type Tenant = { projectId: string; channelId: string };

type Delivery = { at: number; pair: string; eventId: string };

/** What the Workers logged during a run: the plan's summary, each message's, injected failures. */
type Logged = {
  plans: Array<{ ms: number; planMs: number; messages: number; pairs: number }>;
  messages: Array<{ ms: number; pairs: number; evaluated: number; skipped: number }>;
  injected: number;
};

type RunResult = {
  cronMs: number;
  planMs: number;
  wallMs: number;
  tenantMedianMs: number;
  tenantMaxMs: number;
  messages: number;
  messageMedianMs: number;
  slowestMessageMs: number;
  faultAfter: number | null;
  injectedFailures: number;
  pairs: number;
  errors: number;
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
          eventId: String(req.headers[DELIVERY_HEADER.toLowerCase()] ?? body.eventId),
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

type Recorded = {
  pairs: number;
  errors: number;
  last: number;
  events: number;
  eventPairs: number;
  triggered: number;
  notified: number;
};

/** Pairs of `ruleIds` whose state holds the run at `runAt` (or a newer one), and the rules' events. */
async function recorded(pool: pg.Pool, ruleIds: string[], runAt: number): Promise<Recorded> {
  const rs = await pool.query(
    `SELECT s.pairs, s.errors, s.last, e.events, e.event_pairs AS "eventPairs", e.triggered, e.notified
     FROM (SELECT count(*)::int AS pairs, count(*) FILTER (WHERE result = 'error')::int AS errors,
             coalesce(extract(epoch FROM max(evaluated_at)) * 1000, 0)::float8 AS last
           FROM alert_pair_states WHERE alert_rule_id = ANY($1::uuid[]) AND run_at >= $2) s,
          (SELECT count(*)::int AS events,
             count(DISTINCT (alert_rule_id, evaluated_profile_id))::int AS event_pairs,
             count(*) FILTER (WHERE status = 'triggered')::int AS triggered,
             count(*) FILTER (WHERE notified)::int AS notified
           FROM alert_evaluation_events WHERE alert_rule_id = ANY($1::uuid[])) e`,
    [ruleIds, new Date(runAt)],
  );
  return rs.rows[0] as Recorded;
}

/** When each studio's last pair of the run was recorded, ms after `t0`. */
async function tenantFinishes(pool: pg.Pool, ruleIds: string[], runAt: number, t0: number) {
  const rs = await pool.query(
    `SELECT (extract(epoch FROM max(s.evaluated_at)) * 1000)::float8 AS last
     FROM alert_pair_states s JOIN alert_rules r ON r.id = s.alert_rule_id
     WHERE s.alert_rule_id = ANY($1::uuid[]) AND s.run_at >= $2 GROUP BY r.project_id`,
    [ruleIds, new Date(runAt)],
  );
  return rs.rows.map((r: { last: number }) => Math.round(r.last - t0));
}

/**
 * One Cron Trigger through `wrangler dev --test-scheduled`; its own time in ms. wrangler's route takes no
 * scheduled time: the run is keyed by the time it fires (later than the caller's Date.now()).
 */
function cron(): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    // Plain http, not fetch: nothing caps how long the invocation may take to answer.
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

type RunContext = {
  databaseUrl: string;
  pool: pg.Pool;
  tenants: Tenant[];
  deliveries: Delivery[];
  logged: Logged;
};

async function run(kind: RunKind, ctx: RunContext, faultAfter: number | null) {
  const { pool, deliveries, logged } = ctx;
  const ruleIds: string[] = [];
  for (const t of ctx.tenants) {
    const ids = await seedAlertRules(ctx.databaseUrl, t.projectId, RULES, CELL_SIZES, {
      channelIds: [t.channelId],
      failPercentage: (i) => (i % TRIGGER_EVERY === 0 ? 0.01 : 100),
    });
    ruleIds.push(...ids);
  }
  const expected = ruleIds.length * 2;
  const fromDelivery = deliveries.length;
  logged.plans.length = 0;
  logged.messages.length = 0;
  logged.injected = 0;
  console.log(`${kind}: ${ruleIds.length} rules, ${expected} pairs; cron…`);
  const t0 = Date.now();
  // The rules are new: any state of theirs is this run's (both runs' when two overlap), so the bound
  // only has to be below the run's scheduled time, whatever the Worker's clock granularity.
  const runAt = t0 - 60_000;
  const cronTimes = await Promise.all(kind === "overlap" ? [cron(), cron()] : [cron()]);
  const cronMs = Math.max(...cronTimes);
  console.log(`${kind}: cron invocation ${cronTimes.join(" ms, ")} ms`);
  const all = await until(t0 + TIMEOUT_MS, async () => {
    const r = await recorded(pool, ruleIds, runAt);
    process.stdout.write(`\r${kind}: ${r.pairs} / ${expected} pairs, ${Date.now() - t0} ms   `);
    return r.pairs >= expected;
  });
  console.log(all ? "" : ` (gave up after ${TIMEOUT_MS / 1000} s)`);
  // Then every promised notification, then quiet: a late duplicate (an event or a delivery) still counts.
  const delivered = () => deliveries.slice(fromDelivery);
  const pairsDelivered = () => new Set(delivered().map((d) => d.pair)).size;
  // A notification that never arrives is reported as missing, after at most NOTIFY_MS.
  await until(
    Date.now() + NOTIFY_MS,
    async () => pairsDelivered() >= (await recorded(pool, ruleIds, runAt)).notified,
  );
  let seen = -1;
  let events = -1;
  while (seen !== deliveries.length || events !== (await recorded(pool, ruleIds, runAt)).events) {
    seen = deliveries.length;
    events = (await recorded(pool, ruleIds, runAt)).events;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
  }
  const r = await recorded(pool, ruleIds, runAt);
  const finishes = await tenantFinishes(pool, ruleIds, runAt, t0);
  const messageMs = logged.messages.map((m) => m.ms);
  return {
    cronMs,
    planMs: Math.max(0, ...logged.plans.map((p) => p.ms)),
    wallMs: Math.round(r.last - t0),
    tenantMedianMs: median(finishes),
    tenantMaxMs: Math.max(0, ...finishes),
    messages: logged.messages.length,
    messageMedianMs: median(messageMs),
    slowestMessageMs: Math.max(0, ...messageMs),
    faultAfter,
    injectedFailures: logged.injected,
    pairs: r.pairs,
    errors: r.errors,
    events: r.events,
    triggered: r.triggered,
    notified: r.notified,
    delivered: delivered().length,
    duplicateEvents: r.events - r.eventPairs,
    duplicateNotifications: delivered().length - pairsDelivered(),
    missingNotifications: r.notified - pairsDelivered(),
  } satisfies RunResult;
}

/** Keeps the Workers' alert log lines (plan, message, injected failure); prints the rest. */
function watchOutput(logged: Logged) {
  return (line: string) => {
    const plan = /alert plan (\{.*\})/.exec(line);
    const message = /alert message \S+ (\{.*\})/.exec(line);
    if (plan?.[1]) {
      logged.plans.push(JSON.parse(plan[1]));
    } else if (message?.[1]) {
      logged.messages.push(JSON.parse(message[1]));
    } else if (/alert message failed.*\(injected\)/.test(line)) {
      logged.injected++;
    } else if (!/\[wrangler:info\]|alert evaluation failed.*fault injection/.test(line)) {
      console.log(line);
    }
  };
}

async function main(): Promise<Record<string, number | null>> {
  const receiver = await startReceiver();
  // The Workers' console.log lines (the plan's and each message's summary) are at wrangler's "log" level.
  process.env.WRANGLER_LOG ??= "log";
  const logged: Logged = { plans: [], messages: [], injected: 0 };
  try {
    return await withBenchStack("alerts", async ({ stack, serve }) => {
      const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
      try {
        const tenants = await seedTenants(pool, receiver.url);
        const projects = tenants.map((t) => t.projectId);
        console.log(`loading ${EVENTS.toLocaleString("en")} events over ${TENANTS} projects…`);
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
        const ctx: RunContext = {
          databaseUrl: stack.databaseUrl,
          pool,
          tenants,
          deliveries: receiver.deliveries,
          logged,
        };
        let served = false;
        const result: Record<string, number | null> = {
          tenants: TENANTS,
          rules: RULES,
          pairs_expected: TENANTS * RULES * 2,
          events: EVENTS,
        };
        const rows: string[][] = [];
        const pairsPerMessage: number[] = [];
        for (const kind of RUNS) {
          let faultAfter: number | null = null;
          if (kind === "fault") {
            // Half of the median message of the runs before, and only for runs from this one on.
            faultAfter =
              FAULT_AFTER ?? Math.max(1, Math.floor((median(pairsPerMessage) || MAX_PAIRS_PER_MESSAGE) / 2));
            process.env.LOCAL_KNOBS = JSON.stringify({ alertFaultThrowAfter: `${faultAfter}:${Date.now()}` });
            console.log(`fault: consumers throw after ${faultAfter} pairs of each message's first delivery`);
            served = false;
          } else if (process.env.LOCAL_KNOBS) {
            // A run after the fault run: no injected faults again.
            delete process.env.LOCAL_KNOBS;
            served = false;
          }
          if (!served) {
            await serve(PORT, `${ORIGIN}/api`, watchOutput(logged));
            served = true;
          }
          const r = await run(kind, ctx, faultAfter);
          pairsPerMessage.push(...logged.messages.filter((m) => !m.skipped).map((m) => m.pairs));
          rows.push([
            kind,
            String(r.cronMs),
            String(r.planMs),
            String(r.wallMs),
            r.wallMs <= INTERVAL_MS ? "yes" : "no",
            `${r.tenantMedianMs} / ${r.tenantMaxMs}`,
            `${r.messageMedianMs} / ${r.slowestMessageMs} (${r.messages})`,
            r.faultAfter === null ? "—" : `${r.injectedFailures} (after ${r.faultAfter})`,
            `${r.pairs} / ${TENANTS * RULES * 2}`,
            String(r.errors),
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
            "plan ms",
            "wall to last evaluation ms",
            "within 5 min",
            "studio finish median / max ms",
            "message median / max ms (messages)",
            "injected failures",
            "pairs evaluated",
            "errors",
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
