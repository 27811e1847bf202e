import { env } from "cloudflare:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  GameTelemetryEventSchema,
  TelemetryBatchSchema,
  TelemetrySource,
} from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { insertRows } from "../../workers/ingest/consumer/events.js";
import { appendRows, RowSink } from "../../workers/ingest/consumer/wire-rows.js";
import { scanTelemetryBatch } from "../../workers/ingest/wire-scan.js";
import { CH_EVENTS, openClickHouse } from "../../workers/shared/clickhouse.js";
import { configOf } from "../../workers/shared/config.js";
import type { EnvelopeHeader } from "../../workers/shared/envelope.js";
import { LIMITS } from "../../workers/shared/telemetry/limits.js";
import { batch, type EventInit, event, MiB, nowUs, perf } from "../support/batches.js";
import { rowsOfMessage } from "../support/reference-rows.js";

const ch = () => openClickHouse(configOf(env));

function header(projectId: string, batchKey: string, sdkVersion?: string): EnvelopeHeader {
  return {
    v: 1,
    projectId,
    tenantId: crypto.randomUUID(),
    batchKey,
    receivedAt: Date.now(),
    encoding: "identity",
    eventCount: 0,
    ...(sdkVersion === undefined ? {} : { sdkVersion }),
  };
}

/** Every stored column of a project's rows, by event index (project_id differs by construction). */
async function stored(projectId: string): Promise<Record<string, unknown>[]> {
  const rs = await ch().query({
    query: `SELECT * EXCEPT (project_id), toString(timestamp) AS ts, toString(received_at) AS ra
            FROM ${CH_EVENTS} WHERE project_id = {p:UUID} ORDER BY event_index`,
    query_params: { p: projectId },
    format: "JSONEachRow",
  });
  return rs.json();
}

/**
 * The wire row builder against the reference: the same batch through protobuf-es (rowsOfMessage, as
 * JSONEachRow) and through the builder (RowBinary) must store the very same rows.
 */
async function expectSameRows(bytes: Uint8Array, sdkVersion?: string): Promise<Record<string, unknown>[]> {
  const key = `rows-${crypto.randomUUID()}`;
  const viaWire = crypto.randomUUID();
  const viaDecode = crypto.randomUUID();
  const sink = new RowSink();
  const built = appendRows(sink, header(viaWire, key, sdkVersion), bytes);
  await insertRows(configOf(env), sink);
  const reference = await rowsOfMessage(header(viaDecode, key, sdkVersion), bytes);
  await ch().insert({ table: CH_EVENTS, values: reference, format: "JSONEachRow" });
  const [wire, decoded] = await Promise.all([stored(viaWire), stored(viaDecode)]);
  expect(built.rows).toBe(reference.length);
  expect(wire).toHaveLength(reference.length);
  // received_at is the header's, taken separately above: equal to the second at least.
  const strip = (rows: Record<string, unknown>[]) => rows.map(({ received_at, ra, ...rest }) => rest);
  expect(strip(wire)).toEqual(strip(decoded));
  return wire;
}

const enc = (e: EventInit) => toBinary(GameTelemetryEventSchema, create(GameTelemetryEventSchema, e));

/** A batch whose events are given as raw encoded bytes (repeated fields, merged messages). */
function rawBatch(events: Uint8Array[], tail: Uint8Array = new Uint8Array()): Uint8Array {
  const parts: number[] = [];
  for (const e of events) {
    parts.push(0x0a);
    let n = e.length;
    while (n >= 0x80) {
      parts.push((n & 0x7f) | 0x80);
      n >>>= 7;
    }
    parts.push(n, ...e);
  }
  return Uint8Array.from([...parts, ...tail]);
}

describe("consumer rows built from the wire", () => {
  it("stores exactly what the protobuf decode stores, for SDK-shaped events", async () => {
    const events = Array.from({ length: 25 }, (_, i) =>
      event(i, i % 4 === 0 ? { position: undefined, ...perf() } : {}),
    );
    events.push(
      event(30, {
        source: TelemetrySource.AUTOMATED,
        cameraYaw: 359.5,
        cameraPitch: -12.25,
        metrics: { "mem.vram": 6_442_450_944, tiny: 1e-300, big: 1.5e300, neg: -0 },
      }),
    );
    const rows = await expectSameRows(batch(events), "ue5/0.1.13");
    expect(rows[0]).toMatchObject({ sdk_name: "ue5", sdk_version: "0.1.13", fps: null, position_x: null });
    expect(rows[25]).toMatchObject({ camera_yaw: 359.5, camera_pitch: -12.25, source: "automated" });
  });

  it("escapes tabs, newlines, backslashes, quotes and non-ASCII text in strings and map entries", async () => {
    const tricky = "a\tb\nc\\d'e\"f\r g — é 漢字 🎮";
    const rows = await expectSameRows(
      batch([
        event(1, {
          eventName: tricky,
          playerId: "\\N",
          mapId: "\\",
          attributes: { [tricky]: tricky, "k'": "\\", empty: "" },
          metrics: { [tricky]: 2.5 },
        }),
      ]),
      "0.1.7",
    );
    expect(rows[0]).toMatchObject({
      event_name: tricky,
      player_id: "\\N",
      map_id: "\\",
      attributes: { [tricky]: tricky, "k'": "\\", empty: "" },
      sdk_name: "",
      sdk_version: "0.1.7",
    });
  });

  it("merges the batch's device context under the event's, field by field", async () => {
    const rows = await expectSameRows(
      batch(
        [
          event(1, { device: { gpu: "RTX 4090", memoryTotalMb: 0 } }),
          event(2, { device: { resolution: "3840x2160", memoryTotalMb: 65_536 } }),
          event(3),
        ],
        { device: { gpu: "GTX 1060", cpu: "Ryzen 7", resolution: "1920x1080", memoryTotalMb: 16_384 } },
      ),
    );
    expect(rows.map((r) => [r.gpu, r.cpu, r.resolution, r.memory_total_mb])).toEqual([
      ["RTX 4090", "Ryzen 7", "1920x1080", 16_384],
      ["GTX 1060", "Ryzen 7", "3840x2160", 65_536],
      ["GTX 1060", "Ryzen 7", "1920x1080", 16_384],
    ]);
  });

  it("the device's refresh rate becomes metrics['display.hz'] where the event sent none", async () => {
    const rows = await expectSameRows(
      batch(
        [
          // The event's own device wins over the batch's.
          event(1, { device: { refreshRateHz: 144 }, metrics: { "io.read_ops": 3 } }),
          // The measured rate the event sent wins over the device's.
          event(2, { metrics: { "display.hz": 59 } }),
          // The batch's rate; an event device without one (or with 0) leaves it.
          event(3, { device: { gpu: "RTX 4090", refreshRateHz: 0 } }),
          event(4),
        ],
        { device: { refreshRateHz: 120 } },
      ),
    );
    expect(rows.map((r) => r.metrics)).toEqual([
      { "io.read_ops": 3, "display.hz": 144 },
      { "display.hz": 59 },
      { kills: 3, "display.hz": 120 },
      { kills: 4, "display.hz": 120 },
    ]);
    // Without a rate anywhere, the metrics are as sent.
    const plain = await expectSameRows(batch([event(1, { metrics: { m: 1 } }), event(2)]));
    expect(plain.map((r) => r.metrics)).toEqual([{ m: 1 }, { kills: 2 }]);
  });

  it("decodes the protobuf way: last occurrence wins, messages merge, unknown fields are skipped", async () => {
    const base = event(1, { attributes: { a: "1" }, metrics: { m: 1 } });
    // The same event sent as two concatenated halves: scalars of the second win, positions merge,
    // map keys repeat (the later value wins), and an unknown field 99 sits in between.
    const unknown = Uint8Array.from([0x98, 0x06, 0x2a]); // field 99, varint 42
    const merged = new Uint8Array([
      ...enc(base),
      ...unknown,
      ...enc({
        eventName: "renamed",
        position: { y: 7 },
        attributes: { a: "2", b: "3" },
        metrics: { m: 9 },
        fps: 0,
        memoryUsedBytes: 512n * MiB,
      }),
    ]);
    // A batch-level unknown field after the events.
    const rows = await expectSameRows(rawBatch([merged, enc(event(2))], Uint8Array.from([0xf8, 0x01, 0x01])));
    expect(rows[0]).toMatchObject({
      event_name: "renamed",
      attributes: { a: "2", b: "3" },
      metrics: { m: 9 },
      memory_used_bytes: 536_870_912,
    });
    expect(rows[0]?.position_y).toBe(7);
    // proto3 writes no implicit zero, so the second half's fps: 0 leaves the first half's value.
    expect(rows[0]?.fps).toBe(59);
  });

  it("stores every field at the edges ingest allows exactly as sent", async () => {
    // Multi-byte text at the UTF-16 bounds: 3-byte characters make a 2-byte length varint, emoji count
    // two units each; keys and values of full maps; numbers at their bounds; -0 and subnormals.
    const han = (units: number) => "漢".repeat(units);
    const emoji = (units: number) => "🎮".repeat(units / 2);
    const attributes = Object.fromEntries(
      Array.from({ length: LIMITS.attributes.maxEntries }, (_, i) => [
        `${i}${han(LIMITS.attributes.keyMaxUnits - String(i).length)}`,
        i === 0 ? "" : emoji(LIMITS.attributes.valueMaxUnits),
      ]),
    );
    const metrics = Object.fromEntries(
      Array.from({ length: LIMITS.metrics.maxEntries }, (_, i) => [
        `${i}${"m".repeat(LIMITS.metrics.keyMaxUnits - String(i).length)}`,
        [Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, -1e-300, 2 ** 53 + 2][i % 5] as number,
      ]),
    );
    const full = event(1, {
      eventName: han(LIMITS.event.event_name),
      sessionId: emoji(LIMITS.event.session_id),
      playerId: "p\0\t",
      mapId: han(LIMITS.event.map_id),
      buildId: "b".repeat(LIMITS.event.build_id),
      platform: "é".repeat(LIMITS.event.platform),
      engineVersion: "",
      source: TelemetrySource.AUTOMATED,
      position: { x: LIMITS.positionAbsMax, y: -LIMITS.positionAbsMax, z: -0 },
      fps: LIMITS.fpsMax,
      frameTimeMs: LIMITS.timeMsMax,
      gpuTimeMs: 1e-45, // the smallest float32 above zero: a sample, not "not collected"
      gameThreadMs: 0.1,
      renderThreadMs: 0, // not collected: NULL
      memoryUsedBytes: BigInt(LIMITS.memoryUsedBytesMax),
      cameraYaw: Math.fround(359.99999),
      cameraPitch: -LIMITS.cameraPitchAbsMax,
      attributes,
      metrics,
      device: {
        resolution: "r".repeat(LIMITS.device.resolution),
        gpu: han(LIMITS.device.gpu),
        cpu: emoji(LIMITS.device.cpu),
        memoryTotalMb: 4_294_967_295,
      },
    });
    const bare = {
      timestampUs: nowUs() - 1n,
      eventName: "e",
      sessionId: "s",
    } satisfies EventInit;
    const rows = await expectSameRows(batch([full, bare]), `${"n".repeat(40)}/${"9".repeat(40)}`);
    expect(rows[0]).toMatchObject({
      event_name: han(LIMITS.event.event_name),
      session_id: emoji(LIMITS.event.session_id),
      player_id: "p\0\t",
      render_thread_ms: null,
      map_id: han(LIMITS.event.map_id),
      platform: "é".repeat(LIMITS.event.platform),
      engine_version: "",
      source: "automated",
      position_x: LIMITS.positionAbsMax,
      position_y: -LIMITS.positionAbsMax,
      fps: LIMITS.fpsMax,
      frame_time_ms: LIMITS.timeMsMax,
      memory_used_bytes: LIMITS.memoryUsedBytesMax,
      camera_pitch: -LIMITS.cameraPitchAbsMax,
      attributes,
      metrics,
      gpu: han(LIMITS.device.gpu),
      cpu: emoji(LIMITS.device.cpu),
      memory_total_mb: 4_294_967_295,
      sdk_name: "n".repeat(40),
      sdk_version: "9".repeat(40),
    });
    expect(Object.is(rows[0]?.position_z, 0)).toBe(true);
    expect(rows[0]?.gpu_time_ms).toBeGreaterThan(0);
    expect(rows[0]?.camera_yaw).toBe(Math.fround(359.99999));
    // An event with nothing but its required fields: NULLs, empty strings and empty maps.
    expect(rows[1]).toMatchObject({
      player_id: "",
      position_x: null,
      fps: null,
      memory_used_bytes: null,
      camera_yaw: null,
      attributes: {},
      metrics: {},
      source: "unspecified",
      gpu: "",
      memory_total_mb: 0,
    });
  });

  it("never sees a non-finite number: ingest refuses NaN and ±Infinity before a row is built", () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      for (const over of [{ fps: bad }, { metrics: { m: bad } }, { position: { x: bad, y: 0, z: 0 } }]) {
        const scan = scanTelemetryBatch(batch([event(1, over)]), Number(nowUs()));
        expect(scan).toMatchObject({ ok: false, eventIndex: 0 });
        expect(scan.ok === false && scan.rule).toMatch(/finite/);
      }
    }
  });

  it("leaves out the rows the consumer was told are stored", async () => {
    const projectId = crypto.randomUUID();
    const sink = new RowSink();
    const bytes = toBinary(
      TelemetryBatchSchema,
      create(TelemetryBatchSchema, { events: [0, 1, 2, 3].map((i) => event(i)) }),
    );
    const built = appendRows(sink, header(projectId, "skip-test"), bytes, new Set([0, 2]));
    expect(built.rows).toBe(4);
    expect(built.minTimestampUs).toBeLessThan(built.maxTimestampUs);
    expect(built.maxTimestampUs).toBeLessThan(Number(nowUs()));
    await insertRows(configOf(env), sink);
    expect((await stored(projectId)).map((r) => r.event_index)).toEqual([1, 3]);
  });
});
