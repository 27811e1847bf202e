import { loadavg } from "node:os";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { createKey, createProject, createTenant } from "../../workers/shared/bootstrap.js";
import { clickhouseQuery } from "../local/clickhouse-http.js";
import { makeSdkBatch, type RealisticBatch } from "./generate-batch.js";
import { withBenchStack } from "./stack.js";

const BATCHES = Number(process.env.BENCH_PIPELINE_BATCHES ?? 1000);
const EVENTS = Number(process.env.BENCH_PIPELINE_EVENTS ?? 1500);
const CONCURRENCY = Number(process.env.BENCH_PIPELINE_CONCURRENCY ?? 8);
const PORT = Number(process.env.BENCH_PIPELINE_PORT ?? 8799);
const DRAIN_TIMEOUT_MS = Number(process.env.BENCH_PIPELINE_DRAIN_TIMEOUT_S ?? 300) * 1000;
const ORIGIN = `http://127.0.0.1:${PORT}`;

async function seed(databaseUrl: string) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const db = drizzle({ client: pool });
    // Enterprise: no monthly event budget and 900,000 ingest requests an hour.
    const tenant = await createTenant(db, "Bench Pipeline Studio", "enterprise");
    const project = await createProject(db, tenant.id, "Bench Pipeline Game");
    const key = await createKey(db, project.id, "ingest");
    return { projectId: project.id, key: key.key };
  } finally {
    await pool.end();
  }
}

/** N distinct batches, each its own seeded SDK session stream (so each has its own batch key). */
function batches(nowUs: number): RealisticBatch[] {
  return Array.from({ length: BATCHES }, (_, i) => makeSdkBatch(1000 + i, nowUs, EVENTS));
}

type SendResult = { accepted: number; acceptedEvents: number; retries: number; ms: number };

async function send(all: RealisticBatch[], key: string): Promise<SendResult> {
  let next = 0;
  let accepted = 0;
  let acceptedEvents = 0;
  let retries = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < all.length) {
      const b = all[next++] as RealisticBatch;
      for (let attempt = 0; ; attempt++) {
        const res = await fetch(`${ORIGIN}/v1/events`, {
          method: "POST",
          headers: {
            "Content-Type": "application/x-protobuf",
            "Content-Encoding": "gzip",
            "X-API-Key": key,
            "X-SDK-Version": "ue5/0.1.13",
          },
          body: b.gzipped,
        });
        const text = await res.text();
        if (res.status === 202) {
          accepted++;
          acceptedEvents += b.eventCount;
          break;
        }
        if ((res.status === 429 || res.status === 503) && attempt < 5) {
          retries++;
          await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get("retry-after") ?? 1)));
          continue;
        }
        throw new Error(`ingest answered ${res.status}: ${text}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { accepted, acceptedEvents, retries, ms: performance.now() - started };
}

async function main() {
  return withBenchStack("pipeline", async ({ stack, serve }) => {
    const ch = stack.clickhouse;
    const sql = (q: string, params?: Record<string, string>) =>
      clickhouseQuery(ch.url, { user: ch.user, password: ch.password }, q, params);
    // Rows per INSERT, summed per batch: counts a second insert of a row even after a merge removed it.
    await sql(
      "CREATE TABLE telemetry.bench_inserted (batch_id String, rows UInt64) ENGINE = SummingMergeTree ORDER BY batch_id",
    );
    await sql(
      "CREATE MATERIALIZED VIEW telemetry.bench_inserted_mv TO telemetry.bench_inserted AS SELECT batch_id, count() AS rows FROM telemetry.events GROUP BY batch_id",
    );
    const { projectId, key } = await seed(stack.databaseUrl);
    const genStart = performance.now();
    const all = batches(Date.now() * 1000);
    const totalEvents = all.reduce((s, b) => s + b.eventCount, 0);
    const bytes = all.reduce((s, b) => s + b.gzipped.length, 0);
    console.log(
      `${all.length} batches, ${totalEvents} events (${Math.round(totalEvents / all.length)} per batch, ${Math.round(bytes / all.length)} gzip'd bytes), generated in ${Math.round(performance.now() - genStart)} ms`,
    );

    const _worker = await serve(PORT, ORIGIN);
    const loads: number[] = [];
    const sampler = setInterval(() => loads.push(loadavg()[0] ?? 0), 1000);

    const started = performance.now();
    const sent = await send(all, key);
    console.log(
      `sent: ${sent.accepted} accepted (${sent.acceptedEvents} events) in ${Math.round(sent.ms)} ms, ${sent.retries} retries`,
    );
    const inserted = async () =>
      Number((await sql("SELECT sum(rows) FROM telemetry.bench_inserted FORMAT TSV")).trim() || 0);
    let last = -1;
    let lastChange = performance.now();
    let drainedAt = 0;
    for (;;) {
      const n = await inserted();
      const now = performance.now();
      if (n >= sent.acceptedEvents) {
        drainedAt = now;
        break;
      }
      if (n !== last) {
        last = n;
        lastChange = now;
      }
      if (now - lastChange > DRAIN_TIMEOUT_MS) {
        drainedAt = now;
        console.log(`no progress for ${DRAIN_TIMEOUT_MS / 1000} s at ${n} rows; giving up`);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    clearInterval(sampler);
    // Late copies (a redelivery racing the first insert) have a few seconds to show before counting.
    await new Promise((r) => setTimeout(r, 3000));
    const [rowsInserted = 0, distinct = 0] = (
      await sql(
        "SELECT (SELECT sum(rows) FROM telemetry.bench_inserted), uniqExact(batch_id, event_index) FROM telemetry.events WHERE project_id = {p:UUID} FORMAT TSV",
        { p: projectId },
      )
    )
      .trim()
      .split("\t")
      .map(Number);
    const endToEndMs = drainedAt - started;
    const result = {
      accept_events_per_s: Math.round(sent.acceptedEvents / (sent.ms / 1000)),
      end_to_end_events_per_s: Math.round(sent.acceptedEvents / (endToEndMs / 1000)),
      lost: Math.max(0, sent.acceptedEvents - distinct),
      duplicated: Math.max(0, rowsInserted - distinct),
    };
    const load = loads.length ? loads.reduce((a, b) => a + b, 0) / loads.length : 0;
    const rows: Array<[string, string]> = [
      ["batches accepted", `${sent.accepted} of ${all.length} (C = ${CONCURRENCY})`],
      ["events accepted", String(sent.acceptedEvents)],
      ["sending", `${(sent.ms / 1000).toFixed(1)} s`],
      ["accept events/s", String(result.accept_events_per_s)],
      ["drained (first request → last queryable)", `${(endToEndMs / 1000).toFixed(1)} s`],
      ["end-to-end events/s", String(result.end_to_end_events_per_s)],
      ["rows inserted / distinct rows", `${rowsInserted} / ${distinct}`],
      ["lost / duplicated", `${result.lost} / ${result.duplicated}`],
      ["load average (1 min), mean / max", `${load.toFixed(2)} / ${Math.max(0, ...loads).toFixed(2)}`],
    ];
    const width = Math.max(...rows.map(([k]) => k.length));
    console.log("");
    for (const [k, v] of rows) {
      console.log(`${k.padEnd(width)}  ${v}`);
    }
    return result;
  });
}

// Printed after everything has shut down, so it stays the last line.
console.log(JSON.stringify(await main()));
