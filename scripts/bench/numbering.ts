/**
 * What dense player and session numbers (workers/shared/actors.ts) cost per maximal batch.
 *
 *   node --import tsx scripts/bench/numbering.ts
 *
 * On the consumer (the events queue's delivery), per message:
 *   collect        the walk that reads each event's timestamp, session_id and player_id and dedupes the
 *                  ids' bytes (workers/ingest/consumer/actors.ts collectActors)
 *   rpc            the call's arguments and answer through the V8 serializer (what a Durable Object call
 *                  costs its caller in CPU), and the answer spread over the message (applyNumbers)
 *   rows Δ         appendRows with the numbers minus appendRows without them (two UInt32 per row)
 *   consumer total collect + rpc + rows Δ: the target is ≤ 0.3 ms CPU per maximal batch
 * In the project's object (durable-objects/actor-numbers.ts, the same code over node:sqlite here):
 *   object, new    numbering ids none of which is known (a delivery of new players and sessions)
 *   object, known  numbering the same ids again (returning players, redeliveries)
 *
 * Batches: realistic maximal ones (generate-batch.ts: ≤ 126,000 B gzip'd, 2–4 sessions of the SDKs'
 * shape), and the worst case for numbering: 10,000 events, each its own player and session.
 * CPU = process.cpuUsage() user+system per iteration, median over timed groups, then over batches.
 * The last line printed is one JSON object with the headline numbers.
 */
import { deserialize, serialize } from "node:v8";
import { create, toBinary } from "@bufbuild/protobuf";
import { ActorNumbering, type ActorSql } from "../../durable-objects/actor-numbers.js";
import { TelemetryBatchSchema } from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { applyNumbers, collectActors, ProjectActors } from "../../workers/ingest/consumer/actors.js";
import { appendRows, RowSink } from "../../workers/ingest/consumer/wire-rows.js";
import type { ActorNumbers } from "../../workers/shared/actors.js";
import type { EnvelopeHeader } from "../../workers/shared/envelope.js";
import { LIMITS } from "../../workers/shared/telemetry/limits.js";
import { makeRealisticBatch } from "./generate-batch.js";

const BATCHES = Number(process.env.BENCH_BATCHES ?? 10);
const BUDGET_MS = 150;
const nowUs = Date.now() * 1000;

const header: EnvelopeHeader = {
  v: 1,
  projectId: "0190a6c2-1b2c-7d3e-8f40-123456789abc",
  tenantId: "0190a6c2-1b2c-7d3e-8f40-123456789abd",
  batchKey: "bench-numbering",
  receivedAt: Date.now(),
  encoding: "identity",
  eventCount: 0,
};

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

let sink = 0;

/** Median CPU ms per call of `fn` (after a warm-up, in groups of ≥ ~3 ms). */
function measure(fn: () => void): number {
  let t0 = performance.now();
  let warm = 0;
  while (warm < 3 || performance.now() - t0 < 20) {
    fn();
    warm++;
  }
  const group = Math.max(1, Math.ceil(3 / ((performance.now() - t0) / warm)));
  const cpus: number[] = [];
  const deadline = performance.now() + BUDGET_MS;
  while (cpus.length < 5 || performance.now() < deadline) {
    const c0 = cpuMs();
    t0 = performance.now();
    for (let i = 0; i < group; i++) {
      fn();
    }
    cpus.push((cpuMs() - c0) / group);
  }
  return median(cpus);
}

/** node:sqlite (Node ≥ 22.5) behind the Durable Object's `sql.exec` shape. */
async function memorySql(): Promise<ActorSql> {
  const { DatabaseSync } = (await import("node:sqlite" as string)) as {
    DatabaseSync: new (
      path: string,
    ) => { prepare(q: string): { all(...b: unknown[]): Record<string, never>[] } };
  };
  const db = new DatabaseSync(":memory:");
  // Runs at once, as the object's exec does (a statement whose rows are never read still runs).
  const exec = (query: string, ...bindings: unknown[]) => {
    const rows = db.prepare(query).all(...bindings);
    return { toArray: () => rows };
  };
  return { exec } as unknown as ActorSql;
}

/** 10,000 events, each of its own player and session (UUID-sized ids). */
function distinctBatch(): Uint8Array {
  const events = Array.from({ length: LIMITS.maxEvents }, (_, i) => ({
    eventName: "perf_heartbeat",
    timestampUs: BigInt(nowUs - 60_000_000 + i),
    sessionId: `0190a6c2-1b2c-7d3e-8f40-${String(i).padStart(12, "0")}`,
    playerId: `player_${String(1_000_000 + i)}`,
    fps: 60,
  }));
  return toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { events }));
}

type Result = {
  events: number;
  players: number;
  sessions: number;
  collect: number;
  rpc: number;
  rowsDelta: number;
  total: number;
  objectNew: number;
  objectKnown: number;
};

async function bench(batch: Uint8Array): Promise<Result> {
  const first = new ProjectActors();
  const probe = collectActors(first, batch);
  const ids = first.ids();
  const answer: ActorNumbers = {
    players: ids.players.map((_, i) => i + 1),
    sessions: ids.sessions.map((_, i) => i + 1),
  };
  const collect = measure(() => {
    sink += collectActors(new ProjectActors(), batch).events;
  });
  const rpc = measure(() => {
    const sent = deserialize(serialize(first.ids())) as { players: string[] };
    const back = deserialize(serialize(answer)) as ActorNumbers;
    applyNumbers([probe], back);
    sink += sent.players.length;
  });
  applyNumbers([probe], answer);
  const out = new RowSink(8 << 20);
  const plain = measure(() => {
    out.len = 0;
    sink += appendRows(out, header, batch).rows;
  });
  const numbered = measure(() => {
    out.len = 0;
    sink += appendRows(out, header, batch, undefined, probe).rows;
  });
  const rowsDelta = Math.max(0, numbered - plain);
  // The object: "new" numbers ids it has not seen (each call's ids carry a fresh suffix; making them
  // is inside the clock, a fraction of the SQL); "known" numbers the same ids again.
  const fresh = async () => new ActorNumbering(await memorySql());
  const growing = await fresh();
  let call = 0;
  const objectNew = measure(() => {
    const k = `#${call++}`;
    sink += growing.number({
      players: ids.players.map((p) => p + k),
      playerDays: ids.playerDays,
      sessions: ids.sessions.map((p) => p + k),
      sessionDays: ids.sessionDays,
    }).players.length;
  });
  const known = await fresh();
  known.number(ids);
  const objectKnown = measure(() => {
    sink += known.number(ids).players.length;
  });
  return {
    events: probe.events,
    players: ids.players.length,
    sessions: ids.sessions.length,
    collect,
    rpc,
    rowsDelta,
    total: collect + rpc + rowsDelta,
    objectNew,
    objectKnown,
  };
}

const realistic: Result[] = [];
for (let i = 0; i < BATCHES; i++) {
  realistic.push(await bench(makeRealisticBatch(1000 + i, nowUs, LIMITS.maxCompressedBytes).batch));
}
const worst = await bench(distinctBatch());

const f = (n: number) => n.toFixed(3);
const cols = [
  "batch",
  "events",
  "players",
  "sessions",
  "collect",
  "rpc",
  "rows Δ",
  "consumer",
  "object new",
  "object known",
];
const row = (label: string, r: Result) =>
  [
    label,
    String(r.events),
    String(r.players),
    String(r.sessions),
    f(r.collect),
    f(r.rpc),
    f(r.rowsDelta),
    f(r.total),
    f(r.objectNew),
    f(r.objectKnown),
  ]
    .map((c, i) => (i === 0 ? c.padEnd(18) : c.padStart(12)))
    .join("");
const med = (k: keyof Result) => median(realistic.map((r) => r[k]));
const medianRow: Result = {
  events: med("events"),
  players: med("players"),
  sessions: med("sessions"),
  collect: med("collect"),
  rpc: med("rpc"),
  rowsDelta: med("rowsDelta"),
  total: med("total"),
  objectNew: med("objectNew"),
  objectKnown: med("objectKnown"),
};
console.log(`node ${process.version}; CPU ms per batch (median; ${BATCHES} realistic maximal batches)`);
console.log(cols.map((c, i) => (i === 0 ? c.padEnd(18) : c.padStart(12))).join(""));
realistic.forEach((r, i) => {
  console.log(row(`realistic ${i}`, r));
});
console.log(row("realistic median", medianRow));
console.log(row("all distinct", worst));
console.log(`(sink ${sink > 0 ? "ok" : "?"}; target: consumer ≤ 0.3 ms CPU per maximal batch)`);
console.log(
  JSON.stringify({
    bench: "numbering",
    realistic: { ...medianRow },
    allDistinct: worst,
    targetConsumerMs: 0.3,
  }),
);
