/**
 * What dense player and session numbers (workers/shared/actors.ts) cost per maximal batch.
 *
 *   npm run bench:numbering        (node --import tsx scripts/bench/numbering.ts)
 *
 * On the consumer (the events queue's delivery), per message:
 *   rows        appendRows without numbers (the row builder as before, for scale)
 *   ids         what numbering adds to it: SliceNumbers.row for every row, i.e. each row's ids deduped
 *               from the spans the builder has read anyway (workers/ingest/consumer/actors.ts) and 8
 *               placeholder bytes, replayed on the batch's spans (a difference of two row builds is
 *               too noisy on a loaded machine)
 *   rpc+fill    the object call's arguments and answer through the V8 serializer (what a Durable Object
 *               call costs its caller in CPU), and the numbers written into the rows (fill)
 *   consumer    ids + rpc+fill: the target is ≤ 0.3 ms CPU per maximal batch
 * In the project's object (durable-objects/actor-numbers.ts, the same code over node:sqlite here):
 *   object new    numbering ids none of which it knows (new players and sessions)
 *   object known  numbering the same ids again (returning players)
 *
 * Batches: realistic maximal ones (generate-batch.ts: ≤ 126,000 B gzip'd, 2–4 interleaved sessions of
 * the SDKs' shape), and the worst case for numbering: 10,000 events, each its own player and session.
 * CPU = process.cpuUsage() user+system per iteration, median over timed groups, then over batches.
 * The last line printed is one JSON object with the headline numbers.
 */
import { deserialize, serialize } from "node:v8";
import { create, toBinary } from "@bufbuild/protobuf";
import { ActorNumbering, type ActorSql } from "../../durable-objects/actor-numbers.js";
import { TelemetryBatchSchema } from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { ProjectActors, SliceNumbers } from "../../workers/ingest/consumer/actors.js";
import { appendRows, RowSink } from "../../workers/ingest/consumer/wire-rows.js";
import type { ActorIds, ActorNumbers } from "../../workers/shared/actors.js";
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
  rows: number;
  ids: number;
  rpcFill: number;
  consumer: number;
  objectNew: number;
  objectKnown: number;
};

/** The rows of `batch` with a fresh project's SliceNumbers. */
function build(batch: Uint8Array, out: RowSink): { slice: SliceNumbers; project: ProjectActors } {
  const project = new ProjectActors(header.projectId);
  const slice = new SliceNumbers();
  slice.forProject(project);
  out.len = 0;
  sink += appendRows(out, header, batch, undefined, slice).rows;
  return { slice, project };
}

async function bench(batch: Uint8Array): Promise<Result> {
  const out = new RowSink(8 << 20);
  let seen: ActorIds | null = null;
  await build(batch, out).project.numberWith(async (ids) => {
    seen = ids;
    return { players: ids.players.map((_, i) => i + 1), sessions: ids.sessions.map((_, i) => i + 1) };
  });
  const asked = seen as unknown as ActorIds;
  const answer: ActorNumbers = {
    players: asked.players.map((_, i) => i + 1),
    sessions: asked.sessions.map((_, i) => i + 1),
  };
  const rows = measure(() => {
    out.len = 0;
    sink += appendRows(out, header, batch).rows;
  });
  // Every row's spans, as the builder hands them over.
  const spans: number[] = [];
  appendRows(new RowSink(8 << 20), header, batch, undefined, {
    row: (o, _b, ss, se, ps, pe, ts) => {
      spans.push(ss, se, ps, pe, ts);
      o.u32(0);
      o.u32(0);
    },
  });
  const scratch = new RowSink(1 << 20);
  const ids = measure(() => {
    const slice = new SliceNumbers();
    slice.forProject(new ProjectActors(header.projectId));
    scratch.len = 0;
    for (let i = 0; i < spans.length; i += 5) {
      slice.row(
        scratch,
        batch,
        spans[i] as number,
        spans[i + 1] as number,
        spans[i + 2] as number,
        spans[i + 3] as number,
        spans[i + 4] as number,
      );
      if (scratch.len > 1 << 19) {
        scratch.len = 0;
      }
    }
    sink += slice.rows;
  });
  const built = build(batch, out);
  const rpcFill = measure(() => {
    built.project.players.numbers.length = 0;
    built.project.sessions.numbers.length = 0;
    const sent = deserialize(serialize(asked)) as ActorIds;
    const back = deserialize(serialize(answer)) as ActorNumbers;
    built.project.players.numbered(back.players, sent.players.length);
    built.project.sessions.numbered(back.sessions, sent.sessions.length);
    built.slice.fill(out);
  });
  // "new": each call's ids carry a fresh suffix (making them is inside the clock, a fraction of the SQL).
  const fresh = async () => new ActorNumbering(await memorySql());
  const growing = await fresh();
  let call = 0;
  const objectNew = measure(() => {
    const k = `#${call++}`;
    sink += growing.number({
      players: asked.players.map((p) => p + k),
      playerDays: asked.playerDays,
      sessions: asked.sessions.map((p) => p + k),
      sessionDays: asked.sessionDays,
    }).players.length;
  });
  const known = await fresh();
  known.number(asked);
  const objectKnown = measure(() => {
    sink += known.number(asked).players.length;
  });
  return {
    events: built.slice.rows,
    players: asked.players.length,
    sessions: asked.sessions.length,
    rows,
    ids,
    rpcFill,
    consumer: ids + rpcFill,
    objectNew,
    objectKnown,
  };
}

const realistic: Result[] = [];
for (let i = 0; i < BATCHES; i++) {
  realistic.push(await bench(makeRealisticBatch(1000 + i, nowUs, LIMITS.maxCompressedBytes).batch));
}
const worst = await bench(distinctBatch());

const KEYS: Array<keyof Result> = [
  "events",
  "players",
  "sessions",
  "rows",
  "ids",
  "rpcFill",
  "consumer",
  "objectNew",
  "objectKnown",
];
const LABELS = [
  "events",
  "players",
  "sessions",
  "rows",
  "ids",
  "rpc+fill",
  "consumer",
  "object new",
  "object known",
];
const cell = (k: keyof Result, v: number) =>
  (k === "events" || k === "players" || k === "sessions" ? String(Math.round(v)) : v.toFixed(3)).padStart(13);
const line = (label: string, r: Result) => label.padEnd(18) + KEYS.map((k) => cell(k, r[k])).join("");
const medianRow = Object.fromEntries(KEYS.map((k) => [k, median(realistic.map((r) => r[k]))])) as Result;
console.log(`node ${process.version}; CPU ms per batch, medians (${BATCHES} realistic maximal batches)`);
console.log("batch".padEnd(18) + LABELS.map((l) => l.padStart(13)).join(""));
realistic.forEach((r, i) => {
  console.log(line(`realistic ${i}`, r));
});
console.log(line("realistic median", medianRow));
console.log(line("all distinct", worst));
console.log(`(sink ${sink > 0 ? "ok" : "?"}; target: consumer ≤ 0.3 ms CPU per maximal batch)`);
console.log(
  JSON.stringify({ bench: "numbering", realistic: medianRow, allDistinct: worst, targetConsumerMs: 0.3 }),
);
