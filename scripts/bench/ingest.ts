/**
 * Ingest hot-path benchmark: CPU per maximal batch (≤ 126,000 bytes gzip'd).
 *
 *   node --import tsx scripts/bench/ingest.ts
 *
 * Methods, each measured on ~20 realistic maximal batches shaped like the engine SDKs' (see
 * generate-batch.ts):
 *   gunzip+scan       zlib.gunzipSync + scanTelemetryBatch   (the ingest hot path)
 *   scan              scanTelemetryBatch alone
 *   gunzip+protobufjs zlib.gunzipSync + protobufjs Type.decode (yardstick)
 *   gunzip+protobuf-es zlib.gunzipSync + protobuf-es fromBinary
 *
 * CPU = process.cpuUsage() user+system (all threads, so GC helpers count),
 * per iteration, median over timed groups per batch, then median over batches.
 * The last line printed is one JSON object with the headline numbers.
 */
import { fileURLToPath } from "node:url";
import { gunzipSync, gzipSync } from "node:zlib";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import protobuf from "protobufjs";
import { TelemetryBatchSchema } from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { scanTelemetryBatch } from "../../workers/ingest/wire-scan.js";
import { LIMITS } from "../../workers/shared/telemetry/limits.js";
import { makeRealisticBatch } from "./generate-batch.js";

const BATCHES = Number(process.env.BENCH_BATCHES ?? 20);
/** Time budget per method per batch, ms (wall). */
const BUDGET_MS: Record<MethodName, number> = {
  "gunzip+scan": 200,
  scan: 150,
  "gunzip+protobufjs": 300,
  "gunzip+protobuf-es": 400,
};

type MethodName = "gunzip+scan" | "scan" | "gunzip+protobufjs" | "gunzip+protobuf-es";
const METHODS: MethodName[] = ["gunzip+scan", "scan", "gunzip+protobufjs", "gunzip+protobuf-es"];

const protoPath = fileURLToPath(new URL("../../proto/telemetry/v1/telemetry.proto", import.meta.url));
const BatchType = protobuf.loadSync(protoPath).lookupType("telemetry.v1.TelemetryBatch");

const nowUs = Date.now() * 1000;

type Batch = { batch: Uint8Array; gzipped: Uint8Array; eventCount: number };

let sink = 0; // keeps results observable so nothing is optimised away

function runOnce(method: MethodName, b: Batch): void {
  switch (method) {
    case "gunzip+scan": {
      const raw = gunzipSync(b.gzipped);
      const r = scanTelemetryBatch(raw, nowUs);
      sink += r.ok ? r.eventCount : -1;
      break;
    }
    case "scan": {
      const r = scanTelemetryBatch(b.batch, nowUs);
      sink += r.ok ? r.eventCount : -1;
      break;
    }
    case "gunzip+protobufjs": {
      const raw = gunzipSync(b.gzipped);
      const m = BatchType.decode(raw) as unknown as { events: unknown[] };
      sink += m.events.length;
      break;
    }
    case "gunzip+protobuf-es": {
      const raw = gunzipSync(b.gzipped);
      sink += fromBinary(TelemetryBatchSchema, raw).events.length;
      break;
    }
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Median CPU ms and wall ms per iteration for one method on one batch. */
function measure(method: MethodName, b: Batch): { cpu: number; wall: number } {
  // Warm up and size the timing groups (each group ≥ ~3 ms of work).
  let t0 = performance.now();
  let warm = 0;
  while (warm < 3 || performance.now() - t0 < 20) {
    runOnce(method, b);
    warm++;
  }
  const perIterMs = (performance.now() - t0) / warm;
  const group = Math.max(1, Math.ceil(3 / perIterMs));
  const cpus: number[] = [];
  const walls: number[] = [];
  const deadline = performance.now() + BUDGET_MS[method];
  while (cpus.length < 5 || performance.now() < deadline) {
    const c0 = cpuMs();
    t0 = performance.now();
    for (let i = 0; i < group; i++) {
      runOnce(method, b);
    }
    walls.push((performance.now() - t0) / group);
    cpus.push((cpuMs() - c0) / group);
  }
  return { cpu: median(cpus), wall: median(walls) };
}

// ---------------------------------------------------------------------------

const genStart = performance.now();
const batches: Batch[] = [];
for (let i = 0; i < BATCHES; i++) {
  const b = makeRealisticBatch(1000 + i, nowUs, LIMITS.maxCompressedBytes);
  // Sanity: the scanner accepts it and every decoder agrees on the event count.
  const r = scanTelemetryBatch(b.batch, nowUs);
  if (!r.ok || r.eventCount !== b.eventCount) {
    throw new Error(`batch ${i}: scanner disagrees: ${JSON.stringify(r)}`);
  }
  const js = BatchType.decode(b.batch) as unknown as { events: unknown[] };
  if (
    js.events.length !== b.eventCount ||
    fromBinary(TelemetryBatchSchema, b.batch).events.length !== b.eventCount
  ) {
    throw new Error(`batch ${i}: decoders disagree on event count`);
  }
  batches.push(b);
}
console.log(
  `generated ${batches.length} batches in ${((performance.now() - genStart) / 1000).toFixed(1)} s ` +
    `(target ≤ ${LIMITS.maxCompressedBytes} gzip bytes), node ${process.version}`,
);

// Global JIT warm-up on a couple of batches before any measurement.
for (const m of METHODS) {
  for (let i = 0; i < 30; i++) {
    runOnce(m, batches[i % Math.min(2, batches.length)] as Batch);
  }
}

type Row = { batch: Batch; res: Record<MethodName, { cpu: number; wall: number }> };
const rows: Row[] = [];
const benchStart = performance.now();
for (const b of batches) {
  const res = {} as Row["res"];
  for (const m of METHODS) {
    res[m] = measure(m, b);
  }
  rows.push({ batch: b, res });
}

// ---------------------------------------------------------------------------
// Report

const fmt = (n: number, d = 3): string => n.toFixed(d);
const fmtInt = (n: number): string => Math.round(n).toLocaleString("en-US");
const pad = (s: string, w: number): string => s.padStart(w);

const header = ["#", "events", "gzip B", "raw B", ...METHODS.map((m) => `${m} ms`)];
const widths = header.map((h) => Math.max(h.length, 9));
const line = (cells: string[]): string => cells.map((c, i) => pad(c, widths[i] as number)).join("  ");
console.log("\nPer batch: median CPU ms per batch (user+system)");
console.log(line(header));
rows.forEach((r, i) => {
  console.log(
    line([
      String(i),
      fmtInt(r.batch.eventCount),
      fmtInt(r.batch.gzipped.length),
      fmtInt(r.batch.batch.length),
      ...METHODS.map((m) => fmt(r.res[m].cpu)),
    ]),
  );
});

const medEvents = median(rows.map((r) => r.batch.eventCount));
const medGzip = median(rows.map((r) => r.batch.gzipped.length));
const medRaw = median(rows.map((r) => r.batch.batch.length));
const summary = METHODS.map((m) => {
  const cpu = median(rows.map((r) => r.res[m].cpu));
  const wall = median(rows.map((r) => r.res[m].wall));
  const eps = median(rows.map((r) => r.batch.eventCount / (r.res[m].cpu / 1000)));
  return { m, cpu, wall, eps };
});

console.log(
  `\nMedians over ${rows.length} batches: ${fmtInt(medEvents)} events/batch, ` +
    `${fmtInt(medGzip)} B gzip'd, ${fmtInt(medRaw)} B decompressed`,
);
const sHeader = ["method", "CPU ms/batch", "wall ms/batch", "events/s (1 core)", "vs gunzip+scan"];
const sWidths = [20, 12, 13, 17, 14];
const sLine = (cells: string[]): string =>
  cells.map((c, i) => (i === 0 ? c.padEnd(sWidths[i] as number) : pad(c, sWidths[i] as number))).join("  ");
console.log(sLine(sHeader));
const base = summary[0]?.cpu ?? 1;
for (const s of summary) {
  console.log(sLine([s.m, fmt(s.cpu), fmt(s.wall), fmtInt(s.eps), `${fmt(s.cpu / base, 1)}x`]));
}
console.log(
  `(bench ${((performance.now() - benchStart) / 1000).toFixed(1)} s; sink ${sink > 0 ? "ok" : "?"}; ` +
    `budget target: gunzip+scan < 5 ms CPU per maximal batch)`,
);

// Adversarial worst case (not a realistic batch): a tiny gzip body that inflates to ~8 MiB of
// maximal attributes, so every byte is string data to validate. Multi-byte text is over its bound
// in bytes, so its UTF-16 length is counted too.
function adversarialBatch(ch: string): Batch {
  const units = ch.length; // UTF-16 units per character
  const attributes: Record<string, string> = {};
  for (let i = 0; i < LIMITS.attributes.maxEntries; i++) {
    const key =
      ch.repeat(Math.floor((LIMITS.attributes.keyMaxUnits - 3) / units)) + String(i).padStart(3, "0");
    attributes[key] = ch.repeat(Math.floor(LIMITS.attributes.valueMaxUnits / units));
  }
  const one = toBinary(
    TelemetryBatchSchema,
    create(TelemetryBatchSchema, {
      events: [{ timestampUs: BigInt(nowUs), eventName: "x", sessionId: "s", attributes }],
    }),
  );
  const n = Math.min(
    LIMITS.maxEvents,
    Math.floor(LIMITS.maxDecodedEntries / (1 + LIMITS.attributes.maxEntries)),
    Math.floor(LIMITS.maxDecompressedBytes / one.length),
  );
  const batch = new Uint8Array(one.length * n);
  for (let i = 0; i < n; i++) {
    batch.set(one, i * one.length);
  }
  const r = scanTelemetryBatch(batch, nowUs);
  if (!r.ok || r.eventCount !== n) {
    throw new Error(`adversarial batch rejected: ${JSON.stringify(r)}`);
  }
  return { batch, gzipped: gzipSync(batch), eventCount: n };
}
console.log("\nAdversarial worst case (up to 8 MiB of string data behind a small gzip body; not realistic):");
for (const [label, ch] of [
  ["ASCII", "a"],
  ["2-byte UTF-8", "\u00e9"],
  ["3-byte (CJK)", "\u6f22"],
  ["4-byte pairs", "\u{1f600}"],
] as const) {
  const b = adversarialBatch(ch);
  const both = measure("gunzip+scan", b);
  const scanOnly = measure("scan", b);
  console.log(
    `  ${label.padEnd(13)} ${fmtInt(b.gzipped.length)} B gzip'd -> ${fmtInt(b.batch.length)} B: ` +
      `gunzip+scan ${fmt(both.cpu)} ms CPU (scan ${fmt(scanOnly.cpu)} ms)`,
  );
}

const hot = summary[0] as (typeof summary)[number];
const pbjs = summary[2] as (typeof summary)[number];
console.log(
  JSON.stringify({
    cpu_ms_per_max_batch: Number(fmt(hot.cpu)),
    events_per_s: Math.round(hot.eps),
    decompressed_bytes: Math.round(medRaw),
    protobufjs_cpu_ms_per_max_batch: Number(fmt(pbjs.cpu)),
  }),
);
