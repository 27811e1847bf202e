import { loadavg } from "node:os";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { createKey, createProject, createTenant } from "../../workers/api/bootstrap.js";
import { INSERT_ROWS, insertRows } from "../../workers/ingest/consumer/events.js";
import { appendRows, INSERT_COLUMNS, RowSink } from "../../workers/ingest/consumer/wire-rows.js";
import { insertBinary } from "../../workers/shared/clickhouse.js";
import type { Config } from "../../workers/shared/config.js";
import { clickhouseQuery } from "../local/clickhouse-http.js";
import { startFrontDoor } from "../local/front.js";
import { freePort } from "../local/mail.js";
import { makeSdkBatch, type RealisticBatch } from "./generate-batch.js";
import { withBenchStack } from "./stack.js";

const BATCHES = Number(process.env.BENCH_PIPELINE_BATCHES ?? 1000);
const EVENTS = Number(process.env.BENCH_PIPELINE_EVENTS ?? 1500);
const CONCURRENCY = Number(process.env.BENCH_PIPELINE_CONCURRENCY ?? 8);
const PORT = Number(process.env.BENCH_PIPELINE_PORT ?? 8799);
/** Open-loop freshness run: offered events/s (0: none), for this long, in batches of FRESH_EVENTS. */
const RATE = Number(process.env.BENCH_PIPELINE_RATE ?? 0);
const RATE_SECONDS = Number(process.env.BENCH_PIPELINE_RATE_S ?? 30);
const FRESH_EVENTS = 1000;
/** Open-loop runs, one after another (each reported, then their medians). */
const RATE_RUNS = Number(process.env.BENCH_PIPELINE_RATE_RUNS ?? 1);
/** 1: the requests go through `npm run dev`'s front door on PORT, wrangler on a port behind it. */
const FRONT = process.env.BENCH_PIPELINE_FRONT === "1";
/** Inserts in flight in the engine's ceiling run (the consumer's own limit per invocation is 3). */
const LIMIT_PARALLEL = Number(process.env.BENCH_PIPELINE_LIMIT_PARALLEL ?? 3);
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

/**
 * The engine's own ceiling: the same batches' rows, built by the consumer's own code (RowBinary),
 * inserted straight into telemetry.events (every view on) in INSERT_ROWS slices, LIMIT_PARALLEL at a
 * time: everything the pipeline does minus the Workers, the queue and the presence checks.
 */
async function engineCeiling(
  config: Config,
  all: RealisticBatch[],
): Promise<{ events: number; ms: number; plainMs: number }> {
  const projectId = crypto.randomUUID();
  const sinks: RowSink[] = [];
  let sink = new RowSink();
  let rows = 0;
  let events = 0;
  for (const [i, b] of all.entries()) {
    const header = {
      v: 1 as const,
      projectId,
      tenantId: projectId,
      batchKey: `ceiling-${i}`,
      receivedAt: Date.now(),
      encoding: "identity" as const,
      eventCount: b.eventCount,
      sdkVersion: "ue5/0.1.13",
    };
    rows += appendRows(sink, header, b.batch).rows;
    if (rows >= INSERT_ROWS) {
      sinks.push(sink);
      events += rows;
      sink = new RowSink();
      rows = 0;
    }
  }
  if (rows) {
    sinks.push(sink);
    events += rows;
  }
  const timed = async (insert: (sink: RowSink) => Promise<void>) => {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: LIMIT_PARALLEL }, async () => {
        while (next < sinks.length) {
          await insert(sinks[next++] as RowSink);
        }
      }),
    );
    return performance.now() - started;
  };
  const ms = await timed((sink) => insertRows(config, sink));
  // The same rows into a copy of the table without its views: what the views cost the engine.
  const plain = `INSERT INTO telemetry.bench_events_plain (${INSERT_COLUMNS.join(", ")}) FORMAT RowBinary`;
  const plainMs = await timed((sink) => insertBinary(config, plain, sink.buf.subarray(0, sink.len)));
  return { events, ms, plainMs };
}

type Answers = Record<string, number>;

/**
 * Open loop at RATE events/s for RATE_SECONDS: a FRESH_EVENTS batch is sent on schedule whether or not
 * earlier ones were answered, as players' SDKs do. Each batch names itself in X-SDK-Version, so a view
 * can stamp when its rows reached telemetry.events; freshness is that stamp minus the 202.
 */
type Freshness = {
  answers: Answers;
  p50: number;
  p99: number;
  max: number;
  unseen: number;
  sent: number;
  /** Events of the run per second, first send to last batch in telemetry.events: what the stack took. */
  drainedPerS: number;
  /** Mean lateness of the sends against their schedule (the sender keeping up), ms. */
  lateMs: number;
  load: number;
};

async function freshness(key: string, sql: (q: string) => Promise<string>, run: number): Promise<Freshness> {
  const perSecond = RATE / FRESH_EVENTS;
  const count = Math.max(1, Math.round(perSecond * RATE_SECONDS));
  const nowUs = Date.now() * 1000;
  const all = Array.from({ length: count }, (_, i) =>
    makeSdkBatch(50_000 + run * 100_000 + i, nowUs, FRESH_EVENTS),
  );
  const answers: Answers = {};
  let late = 0;
  const loadAtStart = loadavg()[0] ?? 0;
  const acceptedAt = new Map<string, number>();
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (const [i, b] of all.entries()) {
    const due = started + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) {
      await new Promise((r) => setTimeout(r, wait));
    }
    late += Math.max(0, performance.now() - due);
    const tag = `fresh-${run}-${i}`;
    inFlight.push(
      fetch(`${ORIGIN}/v1/events`, {
        method: "POST",
        headers: {
          "Content-Type": "application/x-protobuf",
          "Content-Encoding": "gzip",
          "X-API-Key": key,
          "X-SDK-Version": `bench/${tag}`,
        },
        body: b.gzipped,
      }).then(
        async (res) => {
          await res.arrayBuffer();
          const label =
            res.status === 202 || !(res.status === 429 || res.status === 503)
              ? String(res.status)
              : `${res.status}${res.headers.has("retry-after") ? " + Retry-After" : " without Retry-After"}`;
          answers[label] = (answers[label] ?? 0) + 1;
          if (res.status === 202) {
            acceptedAt.set(tag, Date.now());
          }
        },
        (err: unknown) => {
          // The socket error's code tells a keep-alive race (the server closed an idle connection as
          // the client reused it: UND_ERR_SOCKET) from a refused or reset connection.
          const cause = (err as { cause?: { code?: string } }).cause?.code ?? "no answer";
          const label = `connection closed (${cause})`;
          answers[label] = (answers[label] ?? 0) + 1;
        },
      ),
    );
  }
  await Promise.all(inFlight);
  const seen = async () =>
    new Map(
      (
        await sql(
          "SELECT sdk_version, toUnixTimestamp64Milli(min(seen_at)) FROM telemetry.bench_seen GROUP BY sdk_version FORMAT TSV",
        )
      )
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split("\t"))
        .map(([tag, at]) => [tag as string, Number(at)]),
    );
  let stamps = await seen();
  // Until every accepted batch is in (the next run starts on an empty queue), or no progress for
  // DRAIN_TIMEOUT_MS: a batch still missing then counts as unseen and its lag is not known.
  let missing = [...acceptedAt.keys()].filter((t) => !stamps.has(t)).length;
  let progressAt = performance.now();
  while (missing > 0 && performance.now() - progressAt < DRAIN_TIMEOUT_MS) {
    await new Promise((r) => setTimeout(r, 200));
    stamps = await seen();
    const now = [...acceptedAt.keys()].filter((t) => !stamps.has(t)).length;
    if (now < missing) {
      progressAt = performance.now();
    }
    missing = now;
  }
  const lags = [...acceptedAt]
    .filter(([t]) => stamps.has(t))
    .map(([t, at]) => Math.max(0, (stamps.get(t) as number) - at))
    .sort((a, b) => a - b);
  const pct = (q: number) => lags[Math.min(lags.length - 1, Math.floor(q * lags.length))] ?? 0;
  // Events per second from the first send until the last accepted batch was in telemetry.events.
  const firstSend = Date.now() - (performance.now() - started);
  const lastSeen = Math.max(0, ...[...acceptedAt.keys()].map((t) => stamps.get(t) ?? 0));
  const drainedPerS =
    lastSeen > firstSend
      ? Math.round(((acceptedAt.size - missing) * FRESH_EVENTS * 1000) / (lastSeen - firstSend))
      : 0;
  return {
    drainedPerS,
    answers,
    p50: pct(0.5),
    p99: pct(0.99),
    max: lags.at(-1) ?? 0,
    unseen: acceptedAt.size - lags.length,
    sent: count,
    lateMs: Math.round(late / count),
    load: Math.max(loadAtStart, loadavg()[0] ?? 0),
  };
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
    // When a freshness batch's rows reached telemetry.events (a view runs inside the insert).
    await sql(
      "CREATE TABLE telemetry.bench_seen (sdk_version String, seen_at DateTime64(3)) ENGINE = MergeTree ORDER BY sdk_version",
    );
    await sql(
      "CREATE MATERIALIZED VIEW telemetry.bench_seen_mv TO telemetry.bench_seen AS SELECT sdk_version, now64(3) AS seen_at FROM telemetry.events WHERE sdk_name = 'bench' GROUP BY sdk_version",
    );
    await sql("CREATE TABLE telemetry.bench_events_plain AS telemetry.events");
    const { projectId, key } = await seed(stack.databaseUrl);
    const genStart = performance.now();
    const all = batches(Date.now() * 1000);
    const totalEvents = all.reduce((s, b) => s + b.eventCount, 0);
    const bytes = all.reduce((s, b) => s + b.gzipped.length, 0);
    console.log(
      `${all.length} batches, ${totalEvents} events (${Math.round(totalEvents / all.length)} per batch, ${Math.round(bytes / all.length)} gzip'd bytes), generated in ${Math.round(performance.now() - genStart)} ms`,
    );

    // With FRONT, as `npm run dev` runs: wrangler on a loopback port of its own, the front door on PORT.
    const wranglerPort = FRONT ? await freePort() : PORT;
    const _worker = await serve(wranglerPort, `http://127.0.0.1:${wranglerPort}`);
    const door = FRONT
      ? await startFrontDoor({
          host: "127.0.0.1",
          port: PORT,
          upstreamPort: wranglerPort,
          log: (line) => console.error(`[front door] ${line}`),
        })
      : undefined;
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
    const config = {
      CLICKHOUSE_URL: ch.url,
      CLICKHOUSE_USER: ch.user,
      CLICKHOUSE_PASSWORD: ch.password,
    } as Config;
    const ceiling = await engineCeiling(config, all);
    const runs: Freshness[] = [];
    for (let run = 0; RATE > 0 && run < RATE_RUNS; run++) {
      runs.push(await freshness(key, (q) => sql(q), run));
      const r = runs.at(-1) as Freshness;
      console.log(
        `freshness run ${run + 1}: p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms, ${JSON.stringify(r.answers)}, unseen ${r.unseen}, taken ${r.drainedPerS} events/s, sender late ${r.lateMs} ms, load ${r.load.toFixed(2)}`,
      );
    }
    const retries = door?.retries() ?? 0;
    await door?.close();
    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return s.length ? (s[Math.floor((s.length - 1) / 2)] as number) : 0;
    };
    const fresh = runs.length
      ? {
          p50: median(runs.map((r) => r.p50)),
          p99: median(runs.map((r) => r.p99)),
          unseen: runs.reduce((a, r) => a + r.unseen, 0),
          sent: runs.reduce((a, r) => a + r.sent, 0),
          answers: runs.reduce<Answers>((a, r) => {
            for (const [k, v] of Object.entries(r.answers)) {
              a[k] = (a[k] ?? 0) + v;
            }
            return a;
          }, {}),
        }
      : undefined;
    const result = {
      accept_events_per_s: Math.round(sent.acceptedEvents / (sent.ms / 1000)),
      end_to_end_events_per_s: Math.round(sent.acceptedEvents / (endToEndMs / 1000)),
      limit_events_per_s: ceiling.events ? Math.round(ceiling.events / (ceiling.ms / 1000)) : 0,
      limit_without_views_events_per_s: ceiling.events
        ? Math.round(ceiling.events / (ceiling.plainMs / 1000))
        : 0,
      lost: Math.max(0, sent.acceptedEvents - distinct),
      duplicated: Math.max(0, rowsInserted - distinct),
      ...(fresh
        ? {
            offered_events_per_s: RATE,
            through_front_door: FRONT,
            front_door_retries: retries,
            freshness_runs: runs.map((r) => ({
              p50_ms: r.p50,
              p99_ms: r.p99,
              max_ms: r.max,
              unseen: r.unseen,
              taken_events_per_s: r.drainedPerS,
              load: r.load,
            })),
            freshness_p50_ms: fresh.p50,
            freshness_p99_ms: fresh.p99,
            freshness_unseen: fresh.unseen,
            answers: fresh.answers,
          }
        : {}),
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
      [
        "engine ceiling events/s (same rows, RowBinary, views on)",
        `${result.limit_events_per_s} (${ceiling.events} rows, ${LIMIT_PARALLEL} inserts in flight)`,
      ],
      ["same rows into the table without views, events/s", String(result.limit_without_views_events_per_s)],
      ...(fresh
        ? ([
            [
              `freshness at ${RATE} events/s offered${FRONT ? " (through the front door)" : ""}`,
              `${fresh.sent} batches of ${FRESH_EVENTS} over ${RATE_SECONDS} s × ${runs.length} runs`,
            ],
            [
              "freshness p50 / p99 (202 → in telemetry.events), median of runs",
              `${fresh.p50} ms / ${fresh.p99} ms`,
            ],
            [
              "freshness p99 per run",
              runs
                .map((r) => `${r.p99} ms (taken ${r.drainedPerS} events/s, load ${r.load.toFixed(1)})`)
                .join(", "),
            ],
            [
              "answers",
              Object.entries(fresh.answers)
                .map(([k, v]) => `${k}: ${v}`)
                .join(", "),
            ],
            [`accepted but not seen (no progress for ${DRAIN_TIMEOUT_MS / 1000} s)`, String(fresh.unseen)],
          ] as Array<[string, string]>)
        : []),
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
