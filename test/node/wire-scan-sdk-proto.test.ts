import { fromBinary } from "@bufbuild/protobuf";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { TelemetryBatchSchema } from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { scanTelemetryBatch } from "../../workers/ingest/wire-scan.js";
import { LIMITS } from "../../workers/shared/telemetry/limits.js";
import { SDK_PROTO } from "../support/sdk-fixtures.js";

// The engine SDKs' wire layout as a .proto text (test/support/sdk-fixtures.ts), loaded with
// protobufjs, so these batches are encoded independently of our generated code. (In Node: protobufjs
// compiles its codecs with `new Function`, which workerd refuses.)
const root = protobuf.parse(SDK_PROTO, { keepCase: true }).root;
const Batch = root.lookupType("framedash.v1.TelemetryBatch");

const NOW_US = 1_780_000_000_000_000;
const TS = NOW_US - 5 * 60_000_000;

type Ev = Record<string, unknown>;
const ev = (e: Ev = {}): Ev => ({ event_name: "e", timestamp_us: TS, session_id: "s-1", ...e });
const encode = (events: Ev[]): Uint8Array => {
  const msg = Batch.fromObject({ events });
  return Batch.encode(msg).finish();
};
const scan = (bytes: Uint8Array) => scanTelemetryBatch(bytes, NOW_US);

const SDK_KINDS: Ev[] = [
  ev({
    event_name: "session_start",
    source: 1,
    build_id: "1.4.2",
    platform: "Windows",
    engine_version: "6000.0.23f1",
  }),
  ev({
    event_name: "perf_heartbeat",
    fps: 60,
    frame_time_ms: 16.6,
    memory_used_bytes: 3_221_225_472,
    gpu_time_ms: 9.4,
    game_thread_ms: 7.1,
    render_thread_ms: 8.2,
    metrics: {
      "mem.vram": 2_147_483_648,
      "mem.heap": 805_306_368,
      "io.read_bytes": 1_048_576,
      "io.read_time_ms": 3.5,
      "io.read_ops": 12,
    },
    source: 2,
  }),
  ev({
    event_name: "map_load",
    map_id: "maps/harbor",
    attributes: { map_name: "Harbor" },
    metrics: { load_time_ms: 2315.5 },
  }),
  ev({
    event_name: "player_jump",
    player_id: "p-1",
    map_id: "maps/harbor",
    position: { x: 10.5, y: -3, z: 1 },
    camera_yaw: 0,
    camera_pitch: -12.5,
  }),
];

describe("wire-scan on batches protobufjs encodes from the SDK layout", () => {
  it("accepts every kind of SDK event", () => {
    const bytes = encode(SDK_KINDS);
    expect(scan(bytes)).toEqual({
      ok: true,
      eventCount: 4,
      entryCount: 4 + 5 + 2,
      minTimestampUs: TS,
      maxTimestampUs: TS,
      perfEventCount: 1,
    });
  });

  it("CJK names at the bounds, 50 attributes, missing position, zero perf fields", () => {
    const attributes = Object.fromEntries(
      Array.from({ length: LIMITS.attributes.maxEntries }, (_, i) => [
        `属性${i}`.padEnd(64, "鍵"),
        "値".repeat(512),
      ]),
    );
    const ok = encode([
      ev({
        event_name: "読".repeat(128),
        map_id: "地".repeat(128),
        player_id: "😀".repeat(64),
        platform: "平".repeat(64),
        engine_version: "版".repeat(64),
        attributes,
        fps: 0,
        frame_time_ms: 0,
        memory_used_bytes: 0,
        gpu_time_ms: 0,
      }),
    ]);
    expect(scan(ok)).toMatchObject({ ok: true, eventCount: 1, entryCount: 51, perfEventCount: 0 });
    expect(scan(encode([ev({ event_name: "読".repeat(129) })]))).toEqual({
      ok: false,
      eventIndex: 0,
      field: "event_name",
      rule: "must be at most 128 UTF-16 code units",
    });
    const tooMany = { ...attributes, extra: "x" };
    expect(scan(encode([ev(), ev({ attributes: tooMany })]))).toMatchObject({
      ok: false,
      eventIndex: 1,
      field: "attributes",
    });
  });

  it("refuses a camera half-pair, naming the missing one", () => {
    expect(scan(encode([ev({ camera_yaw: 90 })]))).toMatchObject({ ok: false, field: "camera_pitch" });
    expect(scan(encode([ev({ camera_pitch: 0 })]))).toMatchObject({ ok: false, field: "camera_yaw" });
  });

  it("whatever the scanner accepts, protobufjs and protobuf-es both decode, with the same event count", () => {
    let seed = 12345;
    const rnd = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const base = encode([...SDK_KINDS, ...SDK_KINDS]);
    expect(scan(base).ok).toBe(true);
    let accepted = 0;
    for (let i = 0; i < 2000; i++) {
      const b = new Uint8Array(base); // a copy: Buffer#slice would share memory
      for (let k = 0; k < 1 + Math.floor(rnd() * 3); k++) {
        b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
      }
      const cut = rnd() < 0.2 ? b.subarray(0, Math.floor(rnd() * b.length)) : b;
      const r = scan(cut);
      if (r.ok) {
        accepted++;
        const js = Batch.decode(cut) as unknown as { events: unknown[] };
        expect(js.events.length).toBe(r.eventCount);
        expect(fromBinary(TelemetryBatchSchema, cut).events.length).toBe(r.eventCount);
      }
    }
    expect(accepted).toBeGreaterThan(100);
  });
});
