import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { TelemetrySource } from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import type { ExportFormat } from "../../schema/pg/columns.js";
import { dataExports } from "../../schema/pg/schema.js";
import type { ExportMessage } from "../../workers/api/exports/consumer.js";
import { PartWriter, partBytesFor, streamToR2 } from "../../workers/api/exports/multipart.js";
import { carryKeyOf, planSegments } from "../../workers/api/exports/segments.js";
import worker from "../../workers/api/index.js";
import { EVENTS_COLUMNS, projectEventsSelect } from "../../workers/api/query/events-view.js";
import { chTime } from "../../workers/api/window.js";
import { QUEUES } from "../../workers/shared/queues.js";
import { event, MiB, perf } from "../support/batches.js";
import { ingestAndWait, ingestKeyFor, testClickHouse } from "../support/events.js";
import { seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import { knobs } from "../support/knobs.js";
import type { OkBody, Schemas } from "../support/schema.js";
import { waitFor } from "../support/wait.js";

type Ev = ReturnType<typeof event>;
type Export = Schemas["Export"];

let t: Tenant;
let events: Ev[];

beforeAll(async () => {
  t = await seedTenant("enterprise", "Export Studio");
  events = Array.from({ length: 30 }, (_, i) =>
    event(i, {
      eventName: i % 2 ? "kill" : "frame",
      sessionId: `s-${i}`,
      playerId: i % 5 ? `p-${i % 4}` : "",
      attributes: { weapon: i % 3 ? "rifle" : 'say "hi",\nnewline' },
      metrics: { score: i * 1.5 },
      source: i % 4 ? TelemetrySource.PLAYER : TelemetrySource.AUTOMATED,
      engineVersion: i % 2 ? "5.4.4" : "6000.0.23f1",
      ...(i % 3 === 0 ? { cameraYaw: i * 10, cameraPitch: i - 45 } : {}),
      // Every sixth event collected nothing: its performance columns are NULL.
      ...(i % 6 === 1
        ? perf()
        : perf({ fps: 30 + i, memoryUsedBytes: BigInt(1024 + i) * MiB + MiB / 2n, gameThreadMs: 5.5 })),
    }),
  );
  await ingestAndWait(t.projectId, t.keys.ingest.key, events);
  await ingestAndWait(t.siblingProjectId, await ingestKeyFor(t.siblingProjectId), [
    event(1, { eventName: "kill" }),
  ]);
});

function post(body: unknown, projectId = t.projectId) {
  return api(
    `/v1/projects/${projectId}/exports`,
    { key: t.keys.full.key },
    { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) },
  );
}

function finished(id: string, projectId = t.projectId, timeoutMs = 30_000): Promise<Export> {
  return waitFor(
    async () => {
      const res = await api(`/v1/projects/${projectId}/exports/${id}`, { key: t.keys.full.key });
      expect(res.status).toBe(200);
      return ((await res.json()) as OkBody<"/v1/projects/{id}/exports/{exportId}">).data;
    },
    (e) => e.status === "completed" || e.status === "failed",
    { timeoutMs, intervalMs: 250, message: `export ${id} finished` },
  );
}

async function exportAndDownload(body: Record<string, unknown>): Promise<{ e: Export; bytes: Uint8Array }> {
  const res = await post(body);
  expect(res.status).toBe(202);
  const queued = ((await res.json()) as OkBody<"/v1/projects/{id}/exports", "post">).data;
  expect(queued.status).toBe("queued");
  expect(queued.downloadUrl).toBeNull();
  const e = await finished(queued.id);
  expect(e.status, e.error ?? "").toBe("completed");
  expect(e.downloadUrl).toBe(`/api/v1/projects/${t.projectId}/exports/${e.id}/download`);
  const file = await api((e.downloadUrl as string).replace(/^\/api/, ""), { key: t.keys.full.key });
  expect(file.status).toBe(200);
  const bytes = new Uint8Array(await file.arrayBuffer());
  expect(bytes.byteLength).toBe(e.sizeBytes);
  // The progress ends where the file does: the rows counted at the start, the rows the consumer counted
  // in the stream (CSV's quoted newlines are not rows; Parquet takes the count), every byte.
  expect(e.rowsExpected).toBe(e.rowCount);
  expect(e.rowsWritten).toBe(e.rowCount);
  expect(e.bytesWritten).toBe(e.sizeBytes);
  return { e, bytes };
}

const SOURCE = { [TelemetrySource.PLAYER]: "player", [TelemetrySource.AUTOMATED]: "automated" } as Record<
  number,
  string
>;

/** What was sent, in the export's terms, for comparison: the SDKs' zero is NULL, memory also in MB. */
function expected(filter: (e: Ev) => boolean = () => true) {
  const orNull = (v: number | bigint | undefined) => (v ? Number(v) : null);
  return events
    .filter(filter)
    .map((e) => ({
      session_id: e.sessionId as string,
      player_id: e.playerId as string,
      event_name: e.eventName as string,
      weapon: (e.attributes as Record<string, string>).weapon,
      score: (e.metrics as Record<string, number>).score,
      source: SOURCE[e.source as number],
      engine_version: e.engineVersion,
      camera_yaw: e.cameraYaw ?? null,
      camera_pitch: e.cameraPitch ?? null,
      fps: orNull(e.fps),
      gpu_time_ms: orNull(e.gpuTimeMs),
      game_thread_ms: orNull(e.gameThreadMs),
      memory_used_bytes: orNull(e.memoryUsedBytes),
      memory_mb: e.memoryUsedBytes ? Number(e.memoryUsedBytes) / 1_048_576 : null,
    }))
    .sort((a, b) => a.session_id.localeCompare(b.session_id));
}

/** A number as any export format spells it; NULL (CSV: \\N) as null. */
const num = (v: unknown) => (v === null || v === "\\N" ? null : Number(v));

function shape(rows: Array<Record<string, unknown>>) {
  for (const r of rows) {
    expect(r.project_id).toBe(t.projectId);
  }
  return rows
    .map((r) => ({
      session_id: r.session_id as string,
      player_id: r.player_id as string,
      event_name: r.event_name as string,
      weapon: (r.attributes as Record<string, string>).weapon,
      score: Number((r.metrics as Record<string, number>).score),
      source: r.source,
      engine_version: r.engine_version,
      camera_yaw: num(r.camera_yaw),
      camera_pitch: num(r.camera_pitch),
      fps: num(r.fps),
      gpu_time_ms: num(r.gpu_time_ms),
      game_thread_ms: num(r.game_thread_ms),
      memory_used_bytes: num(r.memory_used_bytes),
      memory_mb: num(r.memory_mb),
    }))
    .sort((a, b) => a.session_id.localeCompare(b.session_id));
}

const HEX_DIGITS = new TextEncoder().encode("0123456789abcdef");

/** A file's bytes as hex for ClickHouse's unhex(), built in one buffer (a Parquet file is megabytes). */
function hexOf(bytes: Uint8Array): string {
  const out = new Uint8Array(bytes.byteLength * 2);
  for (let i = 0; i < bytes.byteLength; i++) {
    const b = bytes[i] as number;
    out[2 * i] = HEX_DIGITS[b >> 4] as number;
    out[2 * i + 1] = HEX_DIGITS[b & 15] as number;
  }
  return new TextDecoder().decode(out);
}

/** RFC 4180 as ClickHouse writes it: quoted fields, "" for a quote, newlines inside quotes. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') {
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch === '"') {
      quoted = true;
    } else if (ch === ",") {
      row.push(field);
      field = "";
    } else if (ch === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else {
      field += ch;
    }
  }
  return rows;
}

describe("data export round trip", () => {
  it("ndjson: every ingested event, wire-contract columns, this project only", async () => {
    const { e, bytes } = await exportAndDownload({ days: 7, format: "ndjson" });
    const rows = new TextDecoder()
      .decode(bytes)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(e.rowCount).toBe(events.length);
    expect(Object.keys(rows[0] as object)).toEqual([...EVENTS_COLUMNS]);
    expect(shape(rows)).toEqual(expected());
  });

  it("csv with names, filtered by event name", async () => {
    const { e, bytes } = await exportAndDownload({ days: 2, format: "csv", eventName: "kill" });
    const [header, ...lines] = parseCsv(new TextDecoder().decode(bytes));
    expect(header).toEqual([...EVENTS_COLUMNS]);
    const rows = lines.map((cells) => {
      const r = Object.fromEntries((header as string[]).map((h, i) => [h, cells[i]]));
      // ClickHouse writes maps in CSV as their text literal: {'k':'v'}.
      const map = (s: string) =>
        Object.fromEntries(
          [...s.matchAll(/'((?:[^'\\]|\\.)*)':('(?:[^'\\]|\\.)*'|[^,}]+)/g)].map((m) => [
            m[1],
            (m[2] as string).startsWith("'")
              ? (m[2] as string).slice(1, -1).replace(/\\n/g, "\n").replace(/\\(.)/g, "$1")
              : Number(m[2]),
          ]),
        );
      return { ...r, attributes: map(r.attributes as string), metrics: map(r.metrics as string) };
    });
    const kills = (ev: Ev) => ev.eventName === "kill";
    expect(e.rowCount).toBe(events.filter(kills).length);
    expect(shape(rows)).toEqual(expected(kills));
  });

  it("parquet, read back by ClickHouse's own Parquet reader", async () => {
    const from = new Date(Date.now() - 86_400_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const { e, bytes } = await exportAndDownload({ from, to, format: "parquet" });
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe("PAR1");
    const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
    const rs = await testClickHouse().query({
      query: `SELECT toString(project_id) AS project_id, session_id, player_id, event_name, attributes, metrics,
        source, engine_version, camera_yaw, camera_pitch, fps, gpu_time_ms, game_thread_ms, memory_used_bytes,
        memory_mb FROM format(Parquet, unhex('${hex}'))`,
      format: "JSONEachRow",
    });
    const rows = await rs.json<Record<string, unknown>>();
    expect(e.rowCount).toBe(events.length);
    expect(shape(rows)).toEqual(expected());
  });

  it("lists the project's exports newest first, with their progress fields", async () => {
    const res = await post({ days: 7, format: "ndjson", eventName: "kill" });
    const { id } = ((await res.json()) as OkBody<"/v1/projects/{id}/exports", "post">).data;
    const done = await finished(id);
    const listed = await api(`/v1/projects/${t.projectId}/exports`, { key: t.keys.full.key });
    expect(listed.status).toBe(200);
    const items = ((await listed.json()) as OkBody<"/v1/projects/{id}/exports">).data;
    expect(items[0]).toEqual(done);
    const times = items.map((e) => e.createdAt);
    expect(times).toEqual([...times].sort().reverse());
    expect(done.rowsWritten).toBe(events.filter((e) => e.eventName === "kill").length);
    // The sibling project's exports are not listed here.
    expect(items.every((e) => (e as Export & { projectId: string }).projectId === t.projectId)).toBe(true);
  });

  it("refuses bad requests naming the field, and creates nothing", async () => {
    const cases: Array<[unknown, string]> = [
      [{ format: "xml", days: 7 }, "format"],
      [{ format: "csv" }, "from"],
      [{ format: "csv", days: 7, from: new Date().toISOString() }, "days"],
      [{ format: "csv", from: new Date().toISOString() }, "to"],
      [{ format: "csv", from: "2026-01-02T00:00:00Z", to: "2026-01-01T00:00:00Z" }, "to"],
      [{ format: "csv", days: 0 }, "days"],
    ];
    for (const [body, field] of cases) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect((await problemOf(res)).detail).toContain(field);
    }
  });

  it("an export not yet completed cannot be downloaded (409); others' exports are 404", async () => {
    const res = await post({ days: 7, format: "csv" });
    const { id } = ((await res.json()) as OkBody<"/v1/projects/{id}/exports", "post">).data;
    const early = await api(`/v1/projects/${t.projectId}/exports/${id}/download`, { key: t.keys.full.key });
    expect([200, 409]).toContain(early.status);
    await early.body?.cancel();
    await finished(id);
    const other = await seedTenant("pro", "Export Neighbour");
    for (const path of [
      `/v1/projects/${t.projectId}/exports/${id}`,
      `/v1/projects/${t.projectId}/exports/${id}/download`,
    ]) {
      expect((await api(path, { key: other.keys.full.key })).status).toBe(404);
    }
    expect(
      (await api(`/v1/projects/${t.projectId}/exports/${crypto.randomUUID()}`, { key: t.keys.full.key }))
        .status,
    ).toBe(404);
  });
});

// A Parquet export past one 8 MiB part, through the queue. Rows of 320 random printable characters
// each (which compress to about 260 bytes) make that size with 48,000 rows rather than a million; an
// export at volume is timed by `npm run bench:writes` (BENCH_EXPORT_FORMAT=parquet), not here.
const BIG_ROWS = 48_000;

describe("an export larger than one part", () => {
  it("parquet streams into a multipart object without buffering the file", async () => {
    const big = await seedTenant("enterprise", "Large Export Studio");
    const started = Date.now();
    await testClickHouse().command({
      query: `INSERT INTO telemetry.events (project_id, timestamp, event_name, session_id, player_id, build_id,
                map_id, platform, fps, frame_time_ms, attributes, metrics, batch_id, event_index, received_at)
              SELECT {p:UUID}, now64(6) - toIntervalMillisecond(number % {sinceMidnightMs:UInt64}),
                if(number % 10 = 0, 'kill', 'frame'),
                concat('s-', toString(number % 50000)), concat('p-', toString(number % 20000)), 'build-1',
                'dust', 'windows', 30 + number % 90, 16.6, map('weapon', 'rifle', 'note', randomPrintableASCII(320)), map('score', number),
                'bulk', number, now64(3) - INTERVAL 1 MINUTE
              FROM numbers(${BIG_ROWS})`,
      // Every event today (UTC), the export's one-day window, even when the test runs just after midnight.
      query_params: { p: big.projectId, sinceMidnightMs: Math.max(1, started % 86_400_000) },
    });
    const inserted = Date.now();
    const res = await api(
      `/v1/projects/${big.projectId}/exports`,
      { key: big.keys.full.key },
      {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ days: 1, format: "parquet" }),
      },
    );
    expect(res.status).toBe(202);
    const { id } = ((await res.json()) as OkBody<"/v1/projects/{id}/exports", "post">).data;
    const e = await waitFor(
      async () => {
        const r = await api(`/v1/projects/${big.projectId}/exports/${id}`, { key: big.keys.full.key });
        return ((await r.json()) as OkBody<"/v1/projects/{id}/exports/{exportId}">).data;
      },
      (x) => x.status === "completed" || x.status === "failed",
      { timeoutMs: 55_000, intervalMs: 250, message: `export ${id} finished` },
    );
    console.log(
      `${BIG_ROWS} events: insert ${inserted - started} ms, export ${Date.now() - inserted} ms, ${e.sizeBytes} bytes parquet`,
    );
    expect(e.status, e.error ?? "").toBe("completed");
    expect(e.rowCount).toBe(BIG_ROWS);
    const object = await env.EXPORTS.head(`exports/${big.projectId}/${id}.parquet`);
    expect(object?.size).toBe(e.sizeBytes);
    const tail = await env.EXPORTS.get(`exports/${big.projectId}/${id}.parquet`, {
      range: { suffix: 4 },
    });
    expect(await tail?.text()).toBe("PAR1");
    // Not asserted larger than one 8 MiB part: it was only while the stand-in sent one Parquet file per
    // streamed block end to end. That a Parquet file streamed over many blocks decodes to the query's
    // rows is the byte-exact test's (below; a file this size is too large a literal for unhex()).
  });
});

describe("multipart upload into R2", () => {
  /** `mib` MiB of bytes whose value is their offset modulo 251, in 1 MiB chunks. */
  function bytesStream(mib: number): ReadableStream<Uint8Array> {
    let sent = 0;
    return new ReadableStream({
      pull(controller) {
        if (sent === mib) {
          controller.close();
          return;
        }
        const chunk = new Uint8Array(MiB_BYTES);
        for (let i = 0; i < chunk.length; i++) {
          chunk[i] = (sent * MiB_BYTES + i) % 251;
        }
        sent++;
        controller.enqueue(chunk);
      },
    });
  }
  const MiB_BYTES = 1024 * 1024;

  it("parts of 8 MiB for an export expected small, larger ones so a large export fits R2's 10,000", async () => {
    expect(partBytesFor(0)).toBe(8 * MiB_BYTES);
    // 100 GB in 5,000 planned parts: 20 MiB each; a terabyte is capped at 32 MiB (and refused further up).
    expect(partBytesFor(100e9)).toBe(20 * MiB_BYTES);
    expect(partBytesFor(1e12)).toBe(32 * MiB_BYTES);
    for (const [expected, partBytes, parts] of [
      [0, 8, 3],
      [60e9, 12, 2],
    ] as const) {
      const key = `test/multipart-${crypto.randomUUID()}`;
      let observed = 0;
      const uploaded = await streamToR2(
        env.EXPORTS,
        key,
        bytesStream(20),
        "application/octet-stream",
        (chunk) => {
          observed += chunk.byteLength;
          return undefined;
        },
        () => expected,
      );
      expect(uploaded).toEqual({ bytes: 20 * MiB_BYTES, parts, partBytes: partBytes * MiB_BYTES });
      expect(observed).toBe(20 * MiB_BYTES);
      const object = await env.EXPORTS.get(key);
      const body = new Uint8Array(await (object as R2ObjectBody).arrayBuffer());
      expect(body.length).toBe(20 * MiB_BYTES);
      // Every byte where it was sent, across the part boundaries.
      const wrong = body.findIndex((b, i) => b !== i % 251);
      expect(wrong).toBe(-1);
      await env.EXPORTS.delete(key);
    }
  });

  it("refuses an export larger than 10,000 parts of 32 MiB before uploading anything", async () => {
    const key = `test/multipart-${crypto.randomUUID()}`;
    await expect(
      streamToR2(env.EXPORTS, key, bytesStream(9), "application/octet-stream", undefined, () => 400e9),
    ).rejects.toThrow(/narrow its range/);
    expect(await env.EXPORTS.head(key)).toBeNull();
  });
});

describe("an export in time segments", () => {
  type QueueResult = { explicitAcks: string[]; retryMessages: Array<{ msgId: string }> };
  /** Rows every 2 s over the last ~17 hours, each about 1 KB of NDJSON: about 30 MB in all. */
  const ROWS = 30_000;
  let studio: Tenant;
  let range: { rangeFrom: Date; rangeTo: Date };

  beforeAll(async () => {
    studio = await seedTenant("enterprise", "Segmented Studio");
    const now = Date.now();
    range = { rangeFrom: new Date(now - 86_400_000), rangeTo: new Date(now + 60_000) };
    await testClickHouse().command({
      query: `INSERT INTO telemetry.events (project_id, timestamp, event_name, session_id, player_id, build_id,
                map_id, platform, fps, frame_time_ms, attributes, metrics, batch_id, event_index, received_at)
              SELECT {p:UUID}, fromUnixTimestamp64Micro({nowUs:Int64} - (number * 2000000 + 1000) - number % 997),
                if(number % 10 = 0, 'kill', 'frame'),
                concat('s-', toString(number % 500)), concat('p-', toString(number % 200)), 'build-1',
                'dust', 'windows', 30 + number % 90, 16.6,
                map('weapon', 'rifle', 'note', concat('say "hi",', char(10), repeat('x', 400 + number % 50))),
                map('score', number), 'segments', number, now64(3) - INTERVAL 1 MINUTE
              FROM numbers(${ROWS})`,
      query_params: { p: studio.projectId, nowUs: String(now * 1000) },
    });
  });

  /** A queued export of the studio's range, recorded without a queue message: the test delivers it. */
  async function queued(format: ExportFormat): Promise<string> {
    const [row] = await withDb((db) =>
      db
        .insert(dataExports)
        .values({ projectId: studio.projectId, format, ...range })
        .returning({ id: dataExports.id }),
    );
    return (row as { id: string }).id;
  }

  /** One delivery of the export's message to the API Worker's queue handler, with test knobs. */
  async function deliver(exportId: string, overrides: Record<string, string> = {}, attempts = 1) {
    const b = createMessageBatch(QUEUES.exports.name, [
      { id: "m-1", timestamp: new Date(), attempts, body: { exportId } satisfies ExportMessage },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(b, { ...env, ...overrides } as Env);
    return (await getQueueResult(b, ctx)) as unknown as QueueResult;
  }

  const stored = async (id: string) =>
    (
      await withDb((db) => db.select().from(dataExports).where(eq(dataExports.id, id)))
    )[0] as typeof dataExports.$inferSelect;

  async function download(id: string): Promise<{ e: Export; bytes: Uint8Array }> {
    const e = await settled(id).catch(async (err) => {
      throw new Error(`${err}: ${JSON.stringify(await stored(id))}`);
    });
    expect(e.status, e.error ?? "").toBe("completed");
    const file = await api(`/v1/projects/${studio.projectId}/exports/${id}/download`, {
      key: studio.keys.full.key,
    });
    expect(file.status).toBe(200);
    const bytes = new Uint8Array(await file.arrayBuffer());
    expect(bytes.byteLength).toBe(e.sizeBytes);
    expect(e.rowCount).toBe(ROWS);
    expect(e.rowsExpected).toBe(ROWS);
    expect(e.rowsWritten).toBe(ROWS);
    expect(e.bytesWritten).toBe(e.sizeBytes);
    return { e, bytes };
  }

  function settled(id: string): Promise<Export> {
    return waitFor(
      async () => {
        const res = await api(`/v1/projects/${studio.projectId}/exports/${id}`, {
          key: studio.keys.full.key,
        });
        return ((await res.json()) as OkBody<"/v1/projects/{id}/exports/{exportId}">).data;
      },
      (e) => e.status === "completed" || e.status === "failed",
      { timeoutMs: 60_000, intervalMs: 250, message: `export ${id} finished` },
    );
  }

  /** The same export in one segment (the default size): the file every segmented one must equal. */
  async function whole(format: ExportFormat): Promise<Uint8Array> {
    const id = await queued(format);
    expect((await deliver(id)).explicitAcks).toEqual(["m-1"]);
    expect((await stored(id)).status).toBe("completed");
    return (await download(id)).bytes;
  }

  const equalBytes = (a: Uint8Array, b: Uint8Array) => {
    expect(a.byteLength).toBe(b.byteLength);
    expect(a.findIndex((x, i) => x !== b[i])).toBe(-1);
  };

  it("ndjson: several segments over several messages, carried bytes across part boundaries, the same file", async () => {
    const reference = await whole("ndjson");
    const id = await queued("ndjson");
    const first = await deliver(id, knobs({ exportSegmentRows: 8000, exportSegmentsPerMessage: 2 }));
    expect(first.explicitAcks).toEqual(["m-1"]);
    const midway = await stored(id);
    const upload = midway.upload;
    // Two of four segments written (16,000 rows, over 16 MB).
    expect(upload?.starts.length).toBe(4);
    expect(upload?.next).toBe(2);
    // Greedy over 5 s buckets of two or three rows: each segment just under 8,000 rows.
    expect(upload?.rows).toBeGreaterThan(15_990);
    expect(upload?.rows).toBeLessThanOrEqual(16_000);
    // Whole 8 MiB parts so far, numbered from 1; the bytes short of the next one carried.
    const part = 8 * 1024 * 1024;
    const full = Math.floor((upload?.bytes as number) / part);
    expect(full).toBeGreaterThanOrEqual(1);
    expect(upload?.parts.map((p) => p.partNumber)).toEqual(Array.from({ length: full }, (_, i) => i + 1));
    expect(upload?.partBytes).toBe(part);
    expect(upload?.carry).toBe((upload?.bytes as number) - full * part);
    expect(upload?.carry).toBeGreaterThan(0);
    expect((await env.EXPORTS.head(carryKeyOf(upload?.key as string, 2)))?.size).toBe(upload?.carry);
    expect(midway).toMatchObject({ status: "running", rowsExpected: ROWS, rowsWritten: upload?.rows });
    // The message it sent goes through the real queue: the remaining segments, then the completion.
    const { bytes } = await download(id);
    const lines = new TextDecoder().decode(bytes).trimEnd().split("\n");
    expect(lines.length).toBe(ROWS);
    equalBytes(bytes, reference);
    const done = await stored(id);
    expect(done.upload).toBeNull();
    for (const k of [1, 2, 3]) {
      expect(await env.EXPORTS.head(carryKeyOf(upload?.key as string, k))).toBeNull();
    }
  });

  it("csv: a segment that throws is redone from the stored state; one header; duplicates change nothing", async () => {
    const reference = await whole("csv");
    const id = await queued("csv");
    const small = { exportSegmentRows: 8000, exportSegmentsPerMessage: 2 };
    const faulty = await deliver(id, knobs({ ...small, exportFaultAtSegment: 1 }));
    expect(faulty.retryMessages.map((m) => m.msgId)).toEqual(["m-1"]);
    const thrown = await stored(id);
    // Segment 1's parts and carry were stored, its state not: the retry redoes segment 1.
    expect(thrown).toMatchObject({ status: "queued", rowsWritten: thrown.upload?.rows });
    expect(thrown.upload?.rows).toBeGreaterThan(7990);
    expect(thrown.error).toContain("exportFaultAtSegment");
    expect(thrown.upload?.next).toBe(1);
    // A duplicate of the first message (a first delivery, the plan already made) changes nothing.
    expect((await deliver(id, knobs(small))).explicitAcks).toEqual(["m-1"]);
    expect((await stored(id)).upload).toEqual(thrown.upload);
    const retried = await deliver(id, knobs(small), 2);
    expect(retried.explicitAcks).toEqual(["m-1"]);
    const { e, bytes } = await download(id);
    expect(e.error).toBeNull();
    equalBytes(bytes, reference);
    const text = new TextDecoder().decode(bytes);
    expect(
      text.split("\n").filter((l) => l.startsWith('"project_id"') || l.startsWith("project_id")).length,
    ).toBe(1);
    // A late duplicate of a message: the export is completed, nothing is written again.
    expect((await deliver(id, knobs(small))).explicitAcks).toEqual(["m-1"]);
    expect(await stored(id)).toMatchObject({ status: "completed", sizeBytes: bytes.byteLength });
  });

  it("every format byte-exact against its query over many blocks, segments and parts; rowCount counts rows", async () => {
    // Small blocks (ClickHouse streams a block at a time), small segments (a query each, the bytes short of
    // a part carried between them), 8 MiB parts: tens of blocks, several segments and parts per file.
    const blocks = knobs({ exportSegmentRows: 4000, exportBlockRows: 700 });
    const query = `${projectEventsSelect(
      "p",
      "timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}",
    )} ORDER BY timestamp`;
    const query_params = {
      p: studio.projectId,
      from: chTime(range.rangeFrom.getTime()),
      to: chTime(range.rangeTo.getTime()),
    };
    /** The query's whole answer in one response, as ClickHouse writes it when nothing streams. */
    const answer = async (format: string) => {
      const rs = await testClickHouse().exec({
        query: `${query} FORMAT ${format}`,
        query_params,
        clickhouse_settings: { wait_end_of_query: 1 },
      });
      return new Uint8Array(await new Response(rs.stream as ReadableStream).arrayBuffer());
    };
    const exported = async (format: ExportFormat) => {
      const id = await queued(format);
      expect((await deliver(id, blocks)).explicitAcks).toEqual(["m-1"]);
      const { e, bytes } = await download(id);
      expect(e.rowCount).toBe(ROWS);
      return bytes;
    };

    const csv = await exported("csv");
    const header = `${EVENTS_COLUMNS.map((c) => `"${c}"`).join(",")}\n`;
    expect(new TextDecoder().decode(csv.subarray(0, header.length))).toBe(header);
    equalBytes(csv, await answer("CSVWithNames"));

    const ndjson = await exported("ndjson");
    expect(ndjson.byteLength).toBeGreaterThan(16 * 1024 * 1024);
    equalBytes(ndjson, await answer("JSONEachRow"));

    // Parquet: the file decoded by ClickHouse's own reader into the query's column types, row for row.
    const parquet = await exported("parquet");
    const described = await testClickHouse().query({
      query: `DESCRIBE (${query})`,
      query_params,
      format: "JSONEachRow",
    });
    const structure = (await described.json<{ name: string; type: string }>())
      .map((c) => `${c.name} ${c.type}`)
      .join(", ");
    const hex = hexOf(parquet);
    const decoded = await testClickHouse().exec({
      query: `SELECT * FROM format(Parquet, {structure:String}, unhex('${hex}')) FORMAT JSONEachRow`,
      query_params: { structure },
      clickhouse_settings: { wait_end_of_query: 1, max_query_size: String(hex.length + 4096) },
    });
    const rows = new Uint8Array(await new Response(decoded.stream as ReadableStream).arrayBuffer());
    equalBytes(rows, await answer("JSONEachRow"));
  });

  it("the ClickHouse stand-in streams a format's header and framing once per response, as ClickHouse does", async () => {
    const streamed = async (format: string) => {
      const rs = await testClickHouse().exec({
        query: `SELECT number, toString(number) AS s FROM numbers(1000) FORMAT ${format}`,
        clickhouse_settings: { wait_end_of_query: 0, max_block_size: "7" },
      });
      return new Uint8Array(await new Response(rs.stream as ReadableStream).arrayBuffer());
    };
    const text = async (format: string) => new TextDecoder().decode(await streamed(format));
    const lines = (await text("CSVWithNames")).trimEnd().split("\n");
    expect(lines.length).toBe(1001);
    expect(lines.filter((l) => l === '"number","s"')).toHaveLength(1);
    expect((await text("TSVWithNamesAndTypes")).trimEnd().split("\n").slice(0, 3)).toEqual([
      "number\ts",
      "UInt64\tString",
      "0\t0",
    ]);
    expect((await text("TSVWithNamesAndTypes")).trimEnd().split("\n")).toHaveLength(1002);
    expect(JSON.parse(await text("JSON")).rows).toBe(1000);
    const parquet = await streamed("Parquet");
    const hex = hexOf(parquet);
    const rs = await testClickHouse().query({
      query: `SELECT count() AS n, sum(number) AS total FROM format(Parquet, unhex('${hex}'))`,
      format: "JSONEachRow",
    });
    const [counted] = await rs.json<{ n: string | number; total: string | number }>();
    expect([Number(counted?.n), Number(counted?.total)]).toEqual([1000, 499500]);
  });

  it("parquet stays one run: more rows than one run writes fail at once, naming format and the limit", async () => {
    const id = await queued("parquet");
    const refused = await deliver(id, knobs({ exportParquetMaxRows: 1000 }));
    // Not retried into the same wall: acked, failed, with the rule.
    expect(refused.explicitAcks).toEqual(["m-1"]);
    const failed = await stored(id);
    expect(failed).toMatchObject({ status: "failed", rowsExpected: ROWS, upload: null });
    expect(failed.error).toContain("format: a Parquet export holds at most 1,000 events");
    expect(failed.error).toContain("30,000");
    expect(await env.EXPORTS.head(`exports/${studio.projectId}/${id}.parquet`)).toBeNull();
  });

  it("plans segments at bucket starts: at most N rows unless one bucket holds more, every row once", () => {
    const buckets = [
      { at: 1000, rows: 3 },
      { at: 2000, rows: 2 },
      { at: 3000, rows: 9 },
      { at: 4000, rows: 1 },
      { at: 5000, rows: 4 },
    ];
    expect(planSegments(buckets, 500, 5)).toEqual([500, 3000, 4000]);
    expect(planSegments(buckets, 500, 100)).toEqual([500]);
    expect(planSegments([], 500, 5)).toEqual([500]);
  });
});

describe("parts written across segments", () => {
  it("a carry shorter than a part joins the next segment's bytes; parts keep one size", async () => {
    const key = `test/segments-${crypto.randomUUID()}`;
    const upload = await env.EXPORTS.createMultipartUpload(key);
    const bytes = (from: number, n: number) => Uint8Array.from({ length: n }, (_, i) => (from + i) % 251);
    const MiB_BYTES = 1024 * 1024;
    // Three segments of 6 MiB: the first carries all of itself, the second fills one 8 MiB part.
    let carry: Uint8Array | undefined;
    const parts: Array<{ partNumber: number; etag: string }> = [];
    for (let s = 0; s < 3; s++) {
      const resumed = env.EXPORTS.resumeMultipartUpload(key, upload.uploadId);
      const writer = new PartWriter(resumed, {
        firstPart: parts.length + 1,
        partBytes: s ? 8 * MiB_BYTES : 0,
        carry,
      });
      await writer.write(bytes(s * 6 * MiB_BYTES, 6 * MiB_BYTES));
      carry = await writer.finish(s === 2);
      parts.push(...writer.parts);
      expect(writer.size).toBe(8 * MiB_BYTES);
    }
    expect(parts.map((p) => p.partNumber)).toEqual([1, 2, 3]);
    await upload.complete(parts);
    const body = new Uint8Array(await ((await env.EXPORTS.get(key)) as R2ObjectBody).arrayBuffer());
    expect(body.length).toBe(18 * MiB_BYTES);
    expect(body.findIndex((b, i) => b !== i % 251)).toBe(-1);
    await env.EXPORTS.delete(key);
  });
});
