import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { countFailingCells } from "../../workers/api/alerts/cells.js";
import { windowOf } from "../../workers/api/window.js";
import { consumeEvents } from "../../workers/ingest/consumer/events.js";
import { parseSdkVersion } from "../../workers/ingest/consumer/rows.js";
import { handleIngest } from "../../workers/ingest/handler.js";
import { openEnvelope } from "../../workers/shared/envelope.js";
import { batchOf, event, MiB, perf } from "../support/batches.js";
import { ingestAndWait, storedCount, testClickHouse } from "../support/events.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { ingest } from "../support/http.js";
import type { SdkEvent } from "../support/sdk-fixtures.js";
import { waitFor } from "../support/wait.js";

// Batches encoded in Node from the SDKs' own .proto text (test/support/sdk-fixtures.ts), never by
// our generated code: what an SDK sends, byte for byte in layout.
const fixtures = inject("sdkFixtures");
const bytesOf = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
const RAW = bytesOf(fixtures.raw);
const GZIP1 = bytesOf(fixtures.gzip1);
const GZIP9 = bytesOf(fixtures.gzip9);
const N = fixtures.events.length;
const UE5 = { "X-SDK-Version": "ue5/0.1.13" };

async function waitForCount(projectId: string, n: number): Promise<void> {
  await waitFor(
    () => storedCount(projectId),
    (stored) => stored >= n,
    { intervalMs: 200, message: `${n} events of ${projectId} stored` },
  );
}

type Row = Record<string, unknown>;

async function storedRows(projectId: string): Promise<Row[]> {
  const rs = await testClickHouse().query({
    query: `SELECT *, memory_mb, player, has_perf FROM telemetry.events
            WHERE project_id = {p:UUID} ORDER BY batch_id, event_index`,
    query_params: { p: projectId },
    format: "JSONEachRow",
  });
  const rows = await rs.json<Row>();
  // 64-bit integers may come quoted in JSON; compare them as numbers.
  return rows.map((r) => ({
    ...r,
    memory_used_bytes: r.memory_used_bytes === null ? null : Number(r.memory_used_bytes),
    memory_total_mb: Number(r.memory_total_mb),
    event_index: Number(r.event_index),
  }));
}

/** DateTime64(6) as ClickHouse prints it, from the wire's microseconds (written here, not borrowed). */
function chTimeOf(us: string): string {
  const micros = BigInt(us);
  const iso = new Date(Number(micros / 1000n)).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${(micros % 1_000_000n).toString().padStart(6, "0")}`;
}

/**
 * The dense numbers (workers/shared/actors.ts) a new project's first delivery gives its events: each
 * effective player and each session 1, 2, 3… in the order the batch first holds them.
 */
function denseNumbers(events: SdkEvent[]): Array<{ player_idx: number; session_idx: number }> {
  const players = new Map<string, number>();
  const sessions = new Map<string, number>();
  const numberOf = (m: Map<string, number>, id: string) => {
    if (!m.has(id)) {
      m.set(id, m.size + 1);
    }
    return m.get(id) as number;
  };
  return events.map((e) => ({
    player_idx: numberOf(players, e.player_id || e.session_id),
    session_idx: numberOf(sessions, e.session_id),
  }));
}

/** The row an SDK event must become: the SDKs' zero is NULL, memory also in megabytes. */
function expectedRow(e: SdkEvent, index: number, projectId: string, sdk: { name: string; version: string }) {
  const collected = (v: number | undefined) => (v ? v : null);
  const bytes = e.memory_used_bytes ? Number(e.memory_used_bytes) : null;
  return {
    project_id: projectId,
    event_name: e.event_name,
    timestamp: chTimeOf(e.timestamp_us),
    session_id: e.session_id,
    player_id: e.player_id ?? "",
    position_x: e.position?.x ?? null,
    position_y: e.position?.y ?? null,
    position_z: e.position?.z ?? null,
    map_id: e.map_id ?? "",
    fps: collected(e.fps),
    frame_time_ms: collected(e.frame_time_ms),
    memory_used_bytes: bytes,
    memory_mb: bytes === null ? null : bytes / 1_048_576,
    gpu_time_ms: collected(e.gpu_time_ms),
    game_thread_ms: collected(e.game_thread_ms),
    render_thread_ms: collected(e.render_thread_ms),
    attributes: e.attributes ?? {},
    metrics: e.metrics ?? {},
    source: ["unspecified", "player", "automated"][e.source ?? 0],
    build_id: e.build_id ?? "",
    platform: e.platform ?? "",
    engine_version: e.engine_version ?? "",
    camera_yaw: e.camera_yaw ?? null,
    camera_pitch: e.camera_pitch ?? null,
    // The SDKs send no device context.
    resolution: "",
    build_config: "",
    gpu: "",
    storage: "",
    cpu: "",
    os_version: "",
    device_model: "",
    memory_total_mb: 0,
    sdk_name: sdk.name,
    sdk_version: sdk.version,
    batch_id: expect.stringMatching(/^[0-9a-f]{32}$/),
    event_index: index,
    received_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/),
    player: e.player_id || e.session_id,
    has_perf: [e.fps, e.frame_time_ms, bytes, e.gpu_time_ms].some((v) => (v ?? 0) > 0),
  };
}

describe("SDK-encoded batches through POST /v1/events and POST /api/v1/events", () => {
  it("the fixtures cover every kind of event the SDKs emit", () => {
    const names = fixtures.events.map((e) => e.event_name);
    expect(names).toEqual(
      expect.arrayContaining(["session_start", "perf_heartbeat", "map_load", "ui_click"]),
    );
    const heartbeat = fixtures.events.find((e) => e.event_name === "perf_heartbeat");
    expect(Object.keys(heartbeat?.metrics ?? {})).toEqual(
      expect.arrayContaining(["mem.vram", "mem.heap", "io.read_bytes", "io.read_time_ms", "io.read_ops"]),
    );
    expect(
      fixtures.events.some((e) => e.event_name.length === 128 && e.event_name.charCodeAt(0) > 0x3000),
    ).toBe(true);
    expect(fixtures.events.some((e) => Object.keys(e.attributes ?? {}).length === 50)).toBe(true);
    expect(fixtures.events.some((e) => !e.position && !e.fps && !e.memory_used_bytes)).toBe(true);
  });

  it.each(["/v1/events", "/api/v1/events"] as const)(
    "through %s, stores every event exactly once with every column as sent",
    async (path) => {
      const t = await seedTenant("pro", "SDK Fixture Studio");
      const res = await ingest(GZIP9, t.keys.ingest.key, { gzip: true, headers: UE5, path });
      expect(res.status, await res.clone().text()).toBe(202);
      expect(await res.json()).toEqual({ status: "accepted" });
      await waitForCount(t.projectId, N);

      const rows = await storedRows(t.projectId);
      expect(rows).toHaveLength(N);
      const numbers = denseNumbers(fixtures.events as SdkEvent[]);
      rows.forEach((row, i) => {
        const sent = fixtures.events[i] as SdkEvent;
        expect(row, sent.event_name).toEqual({
          ...expectedRow(sent, i, t.projectId, { name: "ue5", version: "0.1.13" }),
          ...numbers[i],
        });
      });
      expect(new Set(rows.map((r) => r.batch_id)).size).toBe(1);
    },
  );

  it("counts the same events once, gzip'd at two levels and sent raw", async () => {
    expect(GZIP1).not.toEqual(GZIP9);
    const t = await seedTenant("pro", "SDK Retry Studio");
    for (const [body, gzip] of [
      [GZIP1, true],
      [GZIP9, true],
      // The UE5 SDK's fallback: the same batch without Content-Encoding.
      [RAW, false],
    ] as const) {
      const res = await ingest(body, t.keys.ingest.key, { gzip, headers: UE5 });
      expect(res.status, await res.clone().text()).toBe(202);
    }
    await waitForCount(t.projectId, N);
    // A later batch of other events: once it is stored, the queue has delivered the three before it.
    expect((await ingest(batchOf(3), t.keys.ingest.key)).status).toBe(202);
    await waitForCount(t.projectId, N + 3);
    const rows = await storedRows(t.projectId);
    expect(rows).toHaveLength(N + 3);
    expect(new Set(rows.map((r) => `${r.batch_id}:${r.event_index}`)).size).toBe(N + 3);
  });
});

describe("the batch key is the decoded batch's", () => {
  /** Runs the real ingest handler with a queue that keeps what it is sent. */
  async function envelopeOf(t: Tenant, body: Uint8Array, gzip: boolean, sdkVersion: string) {
    const sent: Uint8Array[] = [];
    const keeping = {
      ...env,
      EVENTS_QUEUE: { send: (m: Uint8Array) => Promise.resolve(void sent.push(m)) },
    } as unknown as Env;
    const request = new Request("http://127.0.0.1:8787/api/v1/events", {
      method: "POST",
      body,
      headers: {
        "Content-Type": "application/x-protobuf",
        "Content-Length": String(body.length),
        "X-SDK-Version": sdkVersion,
        "X-API-Key": t.keys.ingest.key,
        ...(gzip ? { "Content-Encoding": "gzip" } : {}),
      },
    });
    const ctx = createExecutionContext();
    const res = await handleIngest(request, keeping, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(202);
    expect(sent).toHaveLength(1);
    return sent[0] as Uint8Array;
  }

  function message(id: string, bytes: Uint8Array, attempts = 1) {
    const body = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    return { id, timestamp: new Date(), attempts, body };
  }

  async function consume(messages: ReturnType<typeof message>[]) {
    const b = createMessageBatch("telemetry-events", messages);
    await consumeEvents(b, env);
    return (await getQueueResult(b, createExecutionContext())) as unknown as { explicitAcks: string[] };
  }

  it("gives one key to the same events however compressed; the consumer stores them once", async () => {
    const t = await seedTenant("pro", "SDK Key Studio");
    const sealed = [
      await envelopeOf(t, GZIP1, true, "ue5/0.1.13"),
      await envelopeOf(t, GZIP9, true, "ue5/0.1.13"),
      await envelopeOf(t, RAW, false, "ue5/0.1.13"),
    ];
    const headers = sealed.map((m) => openEnvelope(m).header);
    expect(headers.map((h) => h.encoding)).toEqual(["gzip", "gzip", "identity"]);
    expect(new Set(headers.map((h) => h.batchKey)).size).toBe(1);
    expect(headers.every((h) => h.sdkVersion === "ue5/0.1.13" && h.eventCount === N)).toBe(true);
    // Another project's identical events are another batch.
    const other = await seedTenant("pro", "SDK Key Neighbour");
    expect(openEnvelope(await envelopeOf(other, RAW, false, "0.1.7")).header.batchKey).not.toBe(
      headers[0]?.batchKey,
    );

    // All three in one consumer batch, then each redelivered alone: stored once.
    const first = await consume(sealed.map((m, i) => message(`k-${i}`, m)));
    expect(first.explicitAcks.sort()).toEqual(["k-0", "k-1", "k-2"]);
    expect(await storedCount(t.projectId)).toBe(N);
    for (const [i, m] of sealed.entries()) {
      expect((await consume([message(`k-${i}`, m, 2)])).explicitAcks).toEqual([`k-${i}`]);
    }
    expect(await storedCount(t.projectId)).toBe(N);
  });
});

describe("X-SDK-Version → sdk_name, sdk_version", () => {
  it("reads `name/version` as both and a bare version (Unity, Godot) as the version only", () => {
    expect(parseSdkVersion("ue5/0.1.13")).toEqual({ name: "ue5", version: "0.1.13" });
    expect(parseSdkVersion("0.1.7")).toEqual({ name: "", version: "0.1.7" });
    expect(parseSdkVersion(" godot/0.1.8 ")).toEqual({ name: "godot", version: "0.1.8" });
    expect(parseSdkVersion("")).toEqual({ name: "", version: "" });
  });

  it("stores a Unity SDK's bare version as sdk_version with no name", async () => {
    const t = await seedTenant("pro", "SDK Unity Studio");
    const res = await ingest(RAW, t.keys.ingest.key, { headers: { "X-SDK-Version": "0.1.7" } });
    expect(res.status).toBe(202);
    await waitForCount(t.projectId, N);
    const rows = await storedRows(t.projectId);
    expect(new Set(rows.map((r) => `${r.sdk_name}|${r.sdk_version}`))).toEqual(new Set(["|0.1.7"]));
  });
});

describe("memory arrives in bytes and is compared in megabytes", () => {
  it("a memory threshold of 1000 MB fails the cell averaging 1000.5 MB, not the one at 999.5 MB", async () => {
    const t = await seedTenant("pro", "SDK Memory Studio");
    const at = (i: number, x: number, mb: bigint) =>
      event(i, { mapId: "mem-map", position: { x, y: 1, z: 0 }, ...perf({ memoryUsedBytes: mb * MiB }) });
    await ingestAndWait(t.projectId, t.keys.ingest.key, [
      at(0, 1, 999n),
      at(1, 2, 1000n),
      at(2, 11, 1000n),
      at(3, 12, 1001n),
      // Memory not collected: no sample, no cell.
      event(4, { mapId: "mem-map", position: { x: 21, y: 1, z: 0 }, ...perf({ fps: 30 }) }),
    ]);
    const counts = await countFailingCells(testClickHouse(), {
      projectId: t.projectId,
      mapId: "mem-map",
      window: windowOf(2, Date.now()),
      cellSize: 10,
      metric: "memory",
      threshold: 1000,
      filters: { platform: null, resolution: null, buildConfig: null, gpu: null, storage: null },
    });
    expect(counts).toEqual({ failCount: 1, totalCount: 2 });
  });
});
