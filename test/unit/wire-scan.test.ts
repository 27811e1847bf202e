import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  type TelemetryBatch,
  TelemetryBatchSchema,
  type TelemetryEvent,
  TelemetryEventSchema,
} from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { LIMITS, type ScanError, type ScanOk, scanTelemetryBatch } from "../../workers/ingest/wire-scan.js";

// ---------------------------------------------------------------------------
// Helpers (no Node APIs: this runs in the Workers pool too)

const NOW_US = 1_780_000_000_000_000; // 2026-05-28
const DAY_US = 86_400_000_000;
const HOUR_US = 3_600_000_000;
const TS_OK = NOW_US - 60_000_000;

/** The plain-object form of the init shapes (not an already-built message). */
type EventInit = Exclude<MessageInitShape<typeof TelemetryEventSchema>, TelemetryEvent>;
type BatchInit = Exclude<MessageInitShape<typeof TelemetryBatchSchema>, TelemetryBatch>;

const enc = new TextEncoder();
const utf8 = (s: string): Uint8Array => enc.encode(s);
const a = (n: number, ch = "a"): string => ch.repeat(n);

/** A valid event with only the required fields; override anything. */
function ev(init: Partial<EventInit> = {}): EventInit {
  return { timestampUs: BigInt(TS_OK), eventName: "player_move", sessionId: "session-1", ...init };
}

function batch(init: Partial<BatchInit> = {}): Uint8Array {
  return toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { events: [ev()], ...init }));
}

function eventBytes(init: Partial<EventInit> = {}): Uint8Array {
  return toBinary(TelemetryEventSchema, create(TelemetryEventSchema, ev(init)));
}

function cat(...parts: (Uint8Array | number[])[]): Uint8Array {
  const n = parts.reduce((s, p) => s + p.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Unsigned LEB128 of the uint64 two's complement of v. */
function varint(v: number | bigint): number[] {
  let x = BigInt.asUintN(64, BigInt(v));
  const out: number[] = [];
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
  return out;
}
const tag = (no: number, wt: number): number[] => varint(BigInt(no) * 8n + BigInt(wt));
const fLen = (no: number, payload: Uint8Array | number[]): Uint8Array =>
  cat(tag(no, 2), varint(payload.length), payload);
const fVarint = (no: number, v: number | bigint): Uint8Array => cat(tag(no, 0), varint(v));
function fFloat(no: number, f: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setFloat32(0, f, true);
  return cat(tag(no, 5), b);
}
function fDouble(no: number, d: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, d, true);
  return cat(tag(no, 1), b);
}
/** A batch whose events are the given already-encoded event messages. */
const batchOfEvents = (...events: Uint8Array[]): Uint8Array => cat(...events.map((e) => fLen(5, e)));

function scan(bytes: Uint8Array, nowUs = NOW_US): ScanOk | ScanError {
  return scanTelemetryBatch(bytes, nowUs);
}
function expectOk(bytes: Uint8Array, nowUs = NOW_US): ScanOk {
  const r = scan(bytes, nowUs);
  if (!r.ok) {
    throw new Error(`expected ok, got ${JSON.stringify(r)}`);
  }
  return r;
}
function expectErr(
  bytes: Uint8Array,
  eventIndex: number | null,
  field: string,
  rule: string | RegExp,
  nowUs = NOW_US,
): ScanError {
  const r = scan(bytes, nowUs);
  if (r.ok) {
    throw new Error(`expected error ${field}, got ok`);
  }
  expect({ eventIndex: r.eventIndex, field: r.field }).toEqual({ eventIndex, field });
  if (typeof rule === "string") {
    expect(r.rule).toBe(rule);
  } else {
    expect(r.rule).toMatch(rule);
  }
  return r;
}
const MALFORMED = /^malformed protobuf: /;

function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DEVICE_FIELDS = [
  ["platform", "platform"],
  ["resolution", "resolution"],
  ["build_config", "buildConfig"],
  ["gpu", "gpu"],
  ["storage", "storage"],
  ["cpu", "cpu"],
  ["os_version", "osVersion"],
  ["device_model", "deviceModel"],
] as const;

const fullDevice = {
  platform: "windows",
  resolution: "2560x1440",
  buildConfig: "shipping",
  gpu: "NVIDIA GeForce RTX 4070",
  storage: "nvme",
  cpu: "AMD Ryzen 7 7800X3D",
  osVersion: "Windows 11 23H2",
  deviceModel: "Custom PC",
  memoryTotalMb: 32768,
};

// ---------------------------------------------------------------------------

describe("scanTelemetryBatch: valid batches", () => {
  it("accepts a minimal batch and reports counts", () => {
    expect(expectOk(batch())).toEqual({
      ok: true,
      eventCount: 1,
      minTimestampUs: TS_OK,
      maxTimestampUs: TS_OK,
      perfEventCount: 0,
    });
  });

  it("accepts a realistic batch with every field and reports min/max timestamps and perf events", () => {
    const bytes = batch({
      batchId: "3f0c7a4e-1b2d-4c5e-9f60-7a8b9c0d1e2f",
      sdkName: "telemetry-sdk-unreal",
      sdkVersion: "2.4.1",
      device: fullDevice,
      events: [
        ev({
          timestampUs: BigInt(NOW_US - 3 * HOUR_US),
          playerId: "player_1",
          buildId: "1.42.0+cl2001234",
          mapId: "maps/desert_outpost",
          position: { x: 1.5, y: -2.25, z: 30 },
          cameraPosition: { x: 1, y: 2, z: 3 },
          cameraRotation: { x: -10, y: 270, z: 0 },
          perf: { fps: 60, frameTimeMs: 16.6, memoryMb: 4096, gpuTimeMs: 9.1, cpuTimeMs: 7.2 },
          properties: { weapon: "rifle", zone: "market" },
          metrics: { damage: 37.5, health: 0 },
          device: { resolution: "1920x1080" },
        }),
        ev({ timestampUs: BigInt(NOW_US + HOUR_US), perf: { fps: 0 } }),
        ev({ timestampUs: BigInt(NOW_US - DAY_US), perf: {} }), // present but empty: not counted
      ],
    });
    expect(expectOk(bytes)).toEqual({
      ok: true,
      eventCount: 3,
      minTimestampUs: NOW_US - DAY_US,
      maxTimestampUs: NOW_US + HOUR_US,
      perfEventCount: 2,
    });
  });

  it("accepts every bound exactly at its limit", () => {
    const props: Record<string, string> = {};
    const metrics: Record<string, number> = {};
    for (let i = 0; i < LIMITS.properties.maxEntries; i++) {
      props[`${a(LIMITS.properties.keyMaxBytes - 3)}${String(i).padStart(3, "0")}`] = a(
        LIMITS.properties.valueMaxBytes,
        "v",
      );
    }
    for (let i = 0; i < LIMITS.metrics.maxEntries; i++) {
      metrics[`${a(LIMITS.metrics.keyMaxBytes - 3, "m")}${String(i).padStart(3, "0")}`] = i * 1.5;
    }
    const maxDevice = {
      platform: a(64),
      resolution: a(32),
      buildConfig: a(64),
      gpu: a(256),
      storage: a(64),
      cpu: a(256),
      osVersion: a(128),
      deviceModel: a(128),
      memoryTotalMb: 0xffffffff,
    };
    const bytes = batch({
      batchId: a(128),
      sdkName: a(64),
      sdkVersion: a(64),
      device: maxDevice,
      events: [
        ev({
          timestampUs: BigInt(NOW_US - 30 * DAY_US),
          eventName: a(128),
          sessionId: a(128),
          playerId: a(128),
          buildId: a(128),
          mapId: a(255),
          properties: props,
          metrics,
          device: maxDevice,
          position: { x: 3.4028234663852886e38, y: -3.4028234663852886e38, z: 1e-45 },
        }),
        ev({ timestampUs: BigInt(NOW_US + 48 * HOUR_US), eventName: "x", sessionId: "y" }),
      ],
    });
    const r = expectOk(bytes);
    expect(r.minTimestampUs).toBe(NOW_US - 30 * DAY_US);
    expect(r.maxTimestampUs).toBe(NOW_US + 48 * HOUR_US);
  });

  it("measures string bounds in UTF-8 bytes, not characters", () => {
    expectOk(batch({ events: [ev({ eventName: a(64, "é") })] })); // 128 bytes
    expectErr(
      batch({ events: [ev({ eventName: `${a(64, "é")}a` })] }),
      0,
      "event_name",
      "must be at most 128 bytes",
    );
    expectOk(batch({ events: [ev({ mapId: `${a(63, "😀")}abc` })] })); // 252 + 3 = 255 bytes
    expectErr(batch({ events: [ev({ mapId: a(64, "😀") })] }), 0, "map_id", "must be at most 255 bytes");
  });

  it("works on a Uint8Array view at any offset inside a larger buffer of non-ASCII bytes", () => {
    const ok = batch({
      batchId: "batch-id-with-some-length",
      device: fullDevice,
      events: [ev({ properties: { k: "v", kk: a(37) } }), ev({ playerId: "p" })],
    });
    const bad = batch({ events: [ev({ eventName: a(129) })] });
    for (let off = 0; off < 8; off++) {
      for (let pad = 0; pad < 5; pad++) {
        const big = new Uint8Array(ok.length + off + pad).fill(0xff);
        big.set(ok, off);
        expect(expectOk(big.subarray(off, off + ok.length)).eventCount).toBe(2);
        const big2 = new Uint8Array(bad.length + off + pad).fill(0xc3);
        big2.set(bad, off);
        expectErr(big2.subarray(off, off + bad.length), 0, "event_name", "must be at most 128 bytes");
      }
    }
  });

  it("accepts 10,000 events and rejects 10,001", () => {
    const one = fLen(5, eventBytes());
    const many = (n: number): Uint8Array => {
      const out = new Uint8Array(one.length * n);
      for (let i = 0; i < n; i++) {
        out.set(one, i * one.length);
      }
      return out;
    };
    expect(expectOk(many(LIMITS.maxEvents)).eventCount).toBe(10_000);
    expectErr(many(LIMITS.maxEvents + 1), null, "events", "at most 10000 events");
  });

  it("rejects a batch without events", () => {
    expectErr(new Uint8Array(0), null, "events", "must contain at least 1 event");
    expectErr(batch({ events: [], batchId: "b" }), null, "events", "must contain at least 1 event");
  });

  it("rejects a decompressed batch over the size limit", () => {
    expectErr(new Uint8Array(LIMITS.maxDecompressedBytes + 1), null, "batch", /at most 8388608 bytes/);
  });
});

describe("scanTelemetryBatch: batch fields", () => {
  it.each([
    ["batch_id", "batchId", 128],
    ["sdk_name", "sdkName", 64],
    ["sdk_version", "sdkVersion", 64],
  ] as const)("%s: bound", (field, key, max) => {
    expectOk(batch({ [key]: a(max) }));
    expectErr(batch({ [key]: a(max + 1) }), null, field, `must be at most ${max} bytes`);
  });

  it.each(DEVICE_FIELDS)("batch device.%s: bound", (field, key) => {
    const max = LIMITS.device[field];
    expectOk(batch({ device: { [key]: a(max) } }));
    expectErr(
      batch({ device: { [key]: a(max + 1) } }),
      null,
      `device.${field}`,
      `must be at most ${max} bytes`,
    );
  });

  it("rejects invalid UTF-8 in batch strings", () => {
    expectErr(cat(fLen(2, [0x61, 0xff]), batch()), null, "sdk_name", "must be valid UTF-8");
    expectErr(cat(fLen(4, fLen(4, [0xc3])), batch()), null, "device.gpu", "must be valid UTF-8");
  });
});

describe("scanTelemetryBatch: event rules", () => {
  describe("timestamp_us", () => {
    const RULE = "must be within the last 30 days and at most 48 hours ahead";
    const at = (ts: number | bigint): Uint8Array => batch({ events: [ev({ timestampUs: BigInt(ts) })] });

    it("accepts the window edges and rejects one microsecond beyond", () => {
      expectOk(at(NOW_US - 30 * DAY_US));
      expectOk(at(NOW_US + 48 * HOUR_US));
      expectErr(at(NOW_US - 30 * DAY_US - 1), 0, "timestamp_us", RULE);
      expectErr(at(NOW_US + 48 * HOUR_US + 1), 0, "timestamp_us", RULE);
    });

    it("treats a missing timestamp as 0", () => {
      expectErr(at(0), 0, "timestamp_us", RULE);
      expectErr(batchOfEvents(cat(fLen(2, utf8("e")), fLen(3, utf8("s")))), 0, "timestamp_us", RULE);
    });

    it("rejects negative and huge values without crashing", () => {
      expectErr(at(-1), 0, "timestamp_us", RULE);
      expectErr(at(-BigInt(NOW_US)), 0, "timestamp_us", RULE);
      expectErr(at(2n ** 63n - 1n), 0, "timestamp_us", RULE);
      expectErr(at(-(2n ** 63n)), 0, "timestamp_us", RULE);
      expectErr(at(2n ** 53n + 1n), 0, "timestamp_us", RULE);
      expectErr(at(2n ** 56n + BigInt(NOW_US)), 0, "timestamp_us", RULE);
    });

    it("decodes negative int64 (10-byte varints) exactly", () => {
      const r = expectOk(at(-1_000), 0);
      expect(r.minTimestampUs).toBe(-1_000);
      expect(expectOk(at(-(29 * DAY_US)), 0).minTimestampUs).toBe(-(29 * DAY_US));
      expectErr(at(-(30 * DAY_US) - 1), 0, "timestamp_us", RULE, 0);
    });

    it("decodes non-canonical (padded) varints", () => {
      // NOW_US as a 9-byte varint with a redundant 0x80 continuation.
      const v = varint(NOW_US);
      v[v.length - 1] = (v[v.length - 1] as number) | 0x80;
      v.push(0);
      const e = cat(tag(1, 0), v, fLen(2, utf8("e")), fLen(3, utf8("s")));
      expect(expectOk(batchOfEvents(e)).minTimestampUs).toBe(NOW_US);
    });
  });

  it.each([
    ["event_name", "eventName"],
    ["session_id", "sessionId"],
  ] as const)("%s: required, 1..128 bytes", (field, key) => {
    expectErr(batch({ events: [ev({ [key]: "" })] }), 0, field, "required, non-empty");
    expectOk(batch({ events: [ev({ [key]: "x" })] }));
    expectOk(batch({ events: [ev({ [key]: a(128) })] }));
    expectErr(batch({ events: [ev({ [key]: a(129) })] }), 0, field, "must be at most 128 bytes");
  });

  it.each([
    ["player_id", "playerId", 128],
    ["build_id", "buildId", 128],
    ["map_id", "mapId", 255],
  ] as const)("%s: optional, bounded", (field, key, max) => {
    expectOk(batch({ events: [ev({ [key]: "" })] }));
    expectOk(batch({ events: [ev({ [key]: a(max) })] }));
    expectErr(batch({ events: [ev({ [key]: a(max + 1) })] }), 0, field, `must be at most ${max} bytes`);
  });

  it.each(DEVICE_FIELDS)("event device.%s: bound", (field, key) => {
    const max = LIMITS.device[field];
    expectOk(batch({ events: [ev(), ev({ device: { [key]: a(max) } })] }));
    expectErr(
      batch({ events: [ev(), ev({ device: { [key]: a(max + 1) } })] }),
      1,
      `device.${field}`,
      `must be at most ${max} bytes`,
    );
  });

  it("device.memory_total_mb: any uint32; larger varints are malformed", () => {
    expectOk(
      batch({ device: { memoryTotalMb: 0xffffffff }, events: [ev({ device: { memoryTotalMb: 1 } })] }),
    );
    expectErr(cat(fLen(4, fVarint(9, 2 ** 32)), batch()), null, "device.memory_total_mb", MALFORMED);
    expectErr(
      batchOfEvents(cat(eventBytes(), fLen(13, fVarint(9, -1)))),
      0,
      "device.memory_total_mb",
      MALFORMED,
    );
  });

  describe("Vec3 coordinates must be finite", () => {
    const cases = [
      ["position", "position"],
      ["camera_position", "cameraPosition"],
      ["camera_rotation", "cameraRotation"],
    ] as const;
    for (const [field, key] of cases) {
      for (const c of ["x", "y", "z"] as const) {
        it(`${field}.${c}`, () => {
          const pair = { cameraPosition: { x: 1 }, cameraRotation: { y: 1 } };
          for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
            expectErr(
              batch({ events: [ev({ ...pair, [key]: { x: 1, y: 2, z: 3, [c]: bad } })] }),
              0,
              `${field}.${c}`,
              "must be finite",
            );
          }
          expectOk(batch({ events: [ev({ ...pair, [key]: { [c]: -3.4e38 } })] }));
        });
      }
    }
    it("NaN with any payload and sign is rejected", () => {
      for (const bits of [0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fffffff, 0xffffffff]) {
        const x = cat(tag(1, 5), [bits & 0xff, (bits >>> 8) & 0xff, (bits >>> 16) & 0xff, bits >>> 24]);
        expectErr(batchOfEvents(cat(eventBytes(), fLen(7, x))), 0, "position.x", "must be finite");
      }
    });
  });

  it("camera_position and camera_rotation must be sent together", () => {
    const RULE = "camera_position and camera_rotation must be sent together";
    expectErr(batch({ events: [ev({ cameraPosition: { x: 1 } })] }), 0, "camera_rotation", RULE);
    expectErr(batch({ events: [ev({ cameraRotation: { x: 1 } })] }), 0, "camera_position", RULE);
    expectErr(batch({ events: [ev({ cameraRotation: {} })] }), 0, "camera_position", RULE); // empty = present
    expectOk(batch({ events: [ev({ cameraPosition: {}, cameraRotation: {} })] }));
    expectOk(batch({ events: [ev({ position: { x: 1 } })] }));
  });

  describe("perf values must be finite and >= 0", () => {
    const fields = [
      ["fps", "fps"],
      ["frame_time_ms", "frameTimeMs"],
      ["memory_mb", "memoryMb"],
      ["gpu_time_ms", "gpuTimeMs"],
      ["cpu_time_ms", "cpuTimeMs"],
    ] as const;
    it.each(fields)("perf.%s", (field, key) => {
      for (const bad of [-1, -1e-45, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        expectErr(
          batch({ events: [ev({ perf: { fps: 60, [key]: bad } })] }),
          0,
          `perf.${field}`,
          "must be finite and >= 0",
        );
      }
      for (const good of [0, -0, 1e-45, 3.4e38]) {
        expect(expectOk(batch({ events: [ev({ perf: { [key]: good } })] })).perfEventCount).toBe(1);
      }
    });

    it("counts an event as performance-bearing only when perf has a field", () => {
      const r = expectOk(
        batch({
          events: [
            ev({ perf: {} }),
            ev({ perf: { cpuTimeMs: 0 } }),
            ev(),
            ev({ perf: { fps: 1, memoryMb: 2 } }),
          ],
        }),
      );
      expect(r.perfEventCount).toBe(2);
      // Unknown fields alone do not make a perf sample.
      expect(expectOk(batchOfEvents(cat(eventBytes(), fLen(10, fVarint(99, 1))))).perfEventCount).toBe(0);
    });
  });

  describe("properties", () => {
    const withProps = (props: Record<string, string>): Uint8Array =>
      batch({ events: [ev(), ev({ properties: props })] });
    const n = (count: number): Record<string, string> =>
      Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, "v"]));

    it("at most 64 entries", () => {
      expectOk(withProps(n(64)));
      expectErr(withProps(n(65)), 1, "properties", "at most 64 entries");
    });
    it("duplicate keys on the wire count as entries", () => {
      const entry = fLen(11, cat(fLen(1, utf8("k")), fLen(2, utf8("v"))));
      const e = cat(eventBytes(), ...Array.from({ length: 65 }, () => entry));
      expectErr(batchOfEvents(e), 0, "properties", "at most 64 entries");
    });
    it("key 1..128 bytes", () => {
      expectOk(withProps({ [a(128)]: "v" }));
      expectErr(withProps({ [a(129)]: "v" }), 1, "properties", "key must be at most 128 bytes");
      expectErr(withProps({ "": "v" }), 1, "properties", "key must be non-empty");
      // An entry without a key field has the empty key.
      expectErr(batchOfEvents(cat(eventBytes(), fLen(11, fLen(2, utf8("v"))))), 0, "properties", /non-empty/);
    });
    it("value at most 1024 bytes", () => {
      expectOk(withProps({ k: a(1024) }));
      expectOk(withProps({ k: "" }));
      expectErr(
        withProps({ ok: "v", 'we"ird': a(1025) }),
        1,
        'properties["we\\"ird"]',
        "must be at most 1024 bytes",
      );
    });
    it("keys and values must be valid UTF-8", () => {
      const bad = (k: number[], v: number[]): Uint8Array =>
        batchOfEvents(cat(eventBytes(), fLen(11, cat(fLen(1, k), fLen(2, v)))));
      expectErr(bad([0x6b, 0x80], [0x76]), 0, "properties", "key must be valid UTF-8");
      expectErr(bad([0x6b], [0x76, 0xed, 0xa0, 0x80]), 0, 'properties["k"]', "must be valid UTF-8");
    });
  });

  describe("metrics", () => {
    const withMetrics = (m: Record<string, number>): Uint8Array => batch({ events: [ev({ metrics: m })] });
    it("at most 64 entries", () => {
      const n = (count: number): Record<string, number> =>
        Object.fromEntries(Array.from({ length: count }, (_, i) => [`m${i}`, i]));
      expectOk(withMetrics(n(64)));
      expectErr(withMetrics(n(65)), 0, "metrics", "at most 64 entries");
    });
    it("key 1..128 bytes", () => {
      expectOk(withMetrics({ [a(128)]: 1 }));
      expectErr(withMetrics({ [a(129)]: 1 }), 0, "metrics", "key must be at most 128 bytes");
      expectErr(withMetrics({ "": 1 }), 0, "metrics", "key must be non-empty");
    });
    it("values must be finite", () => {
      for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        expectErr(withMetrics({ ok: 1, fps: bad }), 0, 'metrics["fps"]', "must be finite");
      }
      expectOk(withMetrics({ big: Number.MAX_VALUE, small: -Number.MIN_VALUE, zero: -0 }));
    });
  });

  it("reports the first offending event and field in wire order", () => {
    const bytes = batch({
      events: [ev(), ev({ mapId: a(256), position: { x: Number.NaN } }), ev({ timestampUs: 0n })],
    });
    expectErr(bytes, 1, "map_id", "must be at most 255 bytes"); // field 6 precedes field 7
    // Same two faults, position written first on the wire.
    const e = cat(
      tag(1, 0),
      varint(TS_OK),
      fLen(7, fFloat(1, Number.NaN)),
      fLen(6, utf8(a(256))),
      fLen(2, utf8("e")),
      fLen(3, utf8("s")),
    );
    expectErr(batchOfEvents(eventBytes(), e), 1, "position.x", "must be finite");
    // A batch-level fault after the events is reported after event faults.
    expectErr(
      cat(batch({ events: [ev({ eventName: "" })] }), fLen(1, utf8(a(129)))),
      0,
      "event_name",
      /required/,
    );
    expectErr(cat(batch(), fLen(1, utf8(a(129)))), null, "batch_id", "must be at most 128 bytes");
  });

  it("validates every occurrence of a repeated singular field", () => {
    const e = cat(eventBytes(), fLen(7, fFloat(2, 1)), fLen(7, fFloat(3, Number.POSITIVE_INFINITY)));
    expectErr(batchOfEvents(e), 0, "position.z", "must be finite");
    // Later event_name overrides an earlier empty one (last wins, as on decode).
    const e2 = cat(fLen(2, []), eventBytes());
    expectOk(batchOfEvents(e2));
  });
});

describe("scanTelemetryBatch: malformed wire format", () => {
  const valid = batch({
    device: fullDevice,
    events: [
      ev({ position: { x: 1, y: 2, z: 3 }, properties: { a: "b" }, metrics: { m: 1 } }),
      ev({ perf: { fps: 60 } }),
    ],
  });

  it("never throws on any prefix; a cut inside a message is malformed", () => {
    const first = fLen(5, eventBytes()).length;
    for (let n = 0; n < valid.length; n++) {
      const r = scan(valid.subarray(0, n));
      if (r.ok) {
        expect(() => fromBinary(TelemetryBatchSchema, valid.subarray(0, n))).not.toThrow();
      }
    }
    const cut = batchOfEvents(eventBytes(), eventBytes());
    const r = scan(cut.subarray(0, first + 5));
    expect(r.ok).toBe(false);
    expect((r as ScanError).eventIndex).toBe(1);
    expect((r as ScanError).rule).toMatch(MALFORMED);
  });

  it("rejects field number 0", () => {
    expectErr(cat(batch(), [0x00, 0x00]), null, "batch", "malformed protobuf: field number 0");
    expectErr(batchOfEvents(cat(eventBytes(), [0x02, 0x00])), 0, "event", MALFORMED);
  });

  it("rejects tags longer than 5 bytes or beyond uint32, and varints longer than 10 bytes", () => {
    expectErr(cat(batch(), [0x88, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00]), null, "batch", MALFORMED);
    expectErr(cat(batch(), [0xf8, 0xff, 0xff, 0xff, 0x1f, 0x00]), null, "batch", MALFORMED);
    // Largest field number is fine (unknown, skipped).
    expectOk(cat(batch(), fVarint(2 ** 29 - 1, 1)));
    const eleven = [...Array.from({ length: 10 }, () => 0x80), 0x00];
    expectErr(cat(batch(), tag(99, 0), eleven), null, "batch", /varint longer than 10 bytes/);
    expectErr(batchOfEvents(cat(tag(1, 0), eleven)), 0, "timestamp_us", /varint longer than 10 bytes/);
    expectErr(cat(batch(), tag(99, 0), [0x80, 0x80]), null, "batch", MALFORMED); // truncated varint
  });

  it("rejects wire types 6 and 7 and groups (3, 4), even on unknown fields", () => {
    expectErr(cat(batch(), tag(99, 6)), null, "batch", MALFORMED);
    expectErr(cat(batch(), tag(99, 7)), null, "batch", MALFORMED);
    const group = cat(tag(99, 3), fVarint(1, 1), tag(99, 4));
    expect(() => fromBinary(TelemetryBatchSchema, cat(batch(), group))).not.toThrow(); // protobuf-es accepts
    expectErr(cat(batch(), group), null, "batch", /group/);
    expectErr(batchOfEvents(cat(eventBytes(), tag(50, 4))), 0, "event", /group/);
  });

  it.each([
    ["batch_id as varint", () => cat(fVarint(1, 5), batch()), null, "batch_id"],
    ["device as fixed32", () => cat(tag(4, 5), [0, 0, 0, 0], batch()), null, "device"],
    ["events as varint", () => cat(batch(), fVarint(5, 1)), null, "events"],
    ["timestamp_us as LEN", () => batchOfEvents(cat(eventBytes(), fLen(1, [1]))), 0, "timestamp_us"],
    [
      "event_name as fixed64",
      () => batchOfEvents(cat(eventBytes(), tag(2, 1), new Uint8Array(8))),
      0,
      "event_name",
    ],
    ["position as varint", () => batchOfEvents(cat(eventBytes(), fVarint(7, 1))), 0, "position"],
    ["position.x as double", () => batchOfEvents(cat(eventBytes(), fLen(7, fDouble(1, 1)))), 0, "position.x"],
    ["perf.fps as varint", () => batchOfEvents(cat(eventBytes(), fLen(10, fVarint(1, 60)))), 0, "perf.fps"],
    [
      "properties value as varint",
      () => batchOfEvents(cat(eventBytes(), fLen(11, cat(fLen(1, utf8("k")), fVarint(2, 1))))),
      0,
      "properties.value",
    ],
    [
      "metrics value as float",
      () => batchOfEvents(cat(eventBytes(), fLen(12, cat(fLen(1, utf8("k")), fFloat(2, 1))))),
      0,
      "metrics.value",
    ],
    [
      "memory_total_mb as LEN",
      () => batchOfEvents(cat(eventBytes(), fLen(13, fLen(9, [1])))),
      0,
      "device.memory_total_mb",
    ],
    ["device.gpu as fixed32", () => cat(fLen(4, fFloat(4, 1)), batch()), null, "device.gpu"],
  ] as const)("rejects a known field with the wrong wire type: %s", (_name, make, eventIndex, field) => {
    expectErr(make(), eventIndex, field, /^malformed protobuf: wrong wire type/);
  });

  it("rejects lengths beyond the buffer or the enclosing message", () => {
    expectErr(cat(batch(), tag(1, 2), varint(1000), [0x61]), null, "batch_id", MALFORMED);
    expectErr(cat(batch(), tag(5, 2), varint(2 ** 40)), 1, "event", MALFORMED);
    // Inner string runs past the end of its event but stays within the buffer:
    // protobuf-es tolerates this, the scanner does not.
    const e = eventBytes();
    const overrun = cat(tag(5, 2), varint(e.length + 2), e, tag(6, 2), varint(4), utf8("abcd"));
    expectErr(overrun, 0, "map_id", MALFORMED);
    // Fixed-width values cut by the end of the message.
    expectErr(batchOfEvents(cat(eventBytes(), fLen(7, [0x0d, 0, 0]))), 0, "position.x", MALFORMED);
    expectErr(
      batchOfEvents(cat(eventBytes(), fLen(12, cat(fLen(1, [0x6b]), [0x11, 0])))),
      0,
      "metrics.value",
      MALFORMED,
    );
  });
});

describe("scanTelemetryBatch: forward compatibility", () => {
  it("skips unknown fields of every wire type at every level", () => {
    const unknown = cat(
      fVarint(100, 2n ** 64n - 1n),
      fVarint(101, 0),
      cat(tag(102, 1), new Uint8Array(8).fill(0xff)),
      fLen(103, new Uint8Array(300).fill(0xfe)),
      cat(tag(104, 5), [0xff, 0xff, 0xff, 0xff]),
    );
    const vec = cat(unknown, fFloat(1, 1), unknown);
    const perf = cat(unknown, fFloat(1, 60), unknown);
    const prop = cat(unknown, fLen(1, utf8("k")), unknown, fLen(2, utf8("v")), unknown);
    const metric = cat(unknown, fLen(1, utf8("m")), unknown, fDouble(2, 1.5), unknown);
    const device = cat(unknown, fLen(1, utf8("windows")), unknown, fVarint(9, 1024));
    const e = cat(
      unknown,
      eventBytes(),
      fLen(7, vec),
      fLen(8, vec),
      fLen(9, vec),
      fLen(10, perf),
      fLen(11, prop),
      fLen(12, metric),
      fLen(13, device),
      unknown,
    );
    const bytes = cat(unknown, fLen(4, device), batchOfEvents(e, e), unknown);
    const r = expectOk(bytes);
    expect(r.eventCount).toBe(2);
    expect(r.perfEventCount).toBe(2);
    const decoded = fromBinary(TelemetryBatchSchema, bytes);
    expect(decoded.events.length).toBe(2);
    expect(decoded.events[0]?.metrics.m).toBe(1.5);
  });
});

describe("scanTelemetryBatch: UTF-8 validation matches TextDecoder({fatal: true})", () => {
  const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const isValid = (b: Uint8Array): boolean => {
    try {
      strict.decode(b);
      return true;
    } catch {
      return false;
    }
  };
  const check = (s: Uint8Array, lead = 0): void => {
    const bytes = batchOfEvents(
      cat(tag(1, 0), varint(TS_OK), fLen(4, new Uint8Array(lead)), fLen(2, s), fLen(3, utf8("s"))),
    );
    const r = scan(bytes);
    if (s.length === 0) {
      return;
    }
    if (isValid(s)) {
      expect(r.ok, `valid ${Array.from(s)}`).toBe(true);
    } else {
      expect(r, `invalid ${Array.from(s)}`).toEqual({
        ok: false,
        eventIndex: 0,
        field: "event_name",
        rule: "must be valid UTF-8",
      });
    }
  };

  it("edge cases", () => {
    const cases = [
      [0xef, 0xbb, 0xbf], // BOM: text
      [0xc2, 0x80],
      [0xc1, 0xbf], // overlong
      [0xc0, 0x80],
      [0xe0, 0x9f, 0xbf], // overlong
      [0xe0, 0xa0, 0x80],
      [0xed, 0x9f, 0xbf],
      [0xed, 0xa0, 0x80], // surrogate
      [0xed, 0xbf, 0xbf],
      [0xee, 0x80, 0x80],
      [0xef, 0xbf, 0xbf],
      [0xf0, 0x8f, 0xbf, 0xbf], // overlong
      [0xf0, 0x90, 0x80, 0x80],
      [0xf4, 0x8f, 0xbf, 0xbf], // U+10FFFF
      [0xf4, 0x90, 0x80, 0x80], // > U+10FFFF
      [0xf5, 0x80, 0x80, 0x80],
      [0xff],
      [0x80],
      [0xe2, 0x82], // truncated
      [0xf0, 0x9f, 0x98], // truncated
      [0x61, 0xe2, 0x82, 0xac, 0x62],
      [0xc3, 0xa9, 0xc3],
    ];
    for (const c of cases) {
      for (let lead = 0; lead < 4; lead++) {
        check(new Uint8Array(c), lead);
        check(cat(utf8(a(13)), c, utf8(a(6))), lead);
      }
    }
  });

  it("a single high byte anywhere in an ASCII string, at every alignment", () => {
    for (let len = 1; len <= 40; len++) {
      for (let pos = 0; pos < len; pos++) {
        for (let lead = 0; lead < 4; lead++) {
          const s = utf8(a(len));
          s[pos] = 0x80;
          check(s, lead);
        }
      }
    }
  });

  it("random byte strings", () => {
    const rng = mulberry32(7);
    const alphabet = [
      0x00, 0x41, 0x7f, 0x80, 0xbf, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0xa0, 0x90,
    ];
    for (let i = 0; i < 3000; i++) {
      const n = 1 + Math.floor(rng() * 12);
      const s = new Uint8Array(n);
      for (let j = 0; j < n; j++) {
        s[j] =
          rng() < 0.5 ? (alphabet[Math.floor(rng() * alphabet.length)] as number) : Math.floor(rng() * 256);
      }
      check(s, i & 3);
    }
    // Random valid text, including astral characters.
    for (let i = 0; i < 300; i++) {
      let str = "";
      for (let j = 0; j < 1 + Math.floor(rng() * 20); j++) {
        const cp = [0x41, 0xe9, 0x20ac, 0xfeff, 0x1f600, 0x10ffff][Math.floor(rng() * 6)] as number;
        str += String.fromCodePoint(cp);
      }
      check(utf8(str), i & 3);
    }
  });
});

// ---------------------------------------------------------------------------
// Reference check on a decoded message, for differential tests.

function referenceValid(m: TelemetryBatch, nowUs: number): boolean {
  const len = (s: string): number => enc.encode(s).length;
  const fin = (x: number): boolean => Number.isFinite(x);
  const devOk = (d: TelemetryBatch["device"]): boolean =>
    !d || DEVICE_FIELDS.every(([f, k]) => len(d[k]) <= LIMITS.device[f]);
  if (len(m.batchId) > 128 || len(m.sdkName) > 64 || len(m.sdkVersion) > 64 || !devOk(m.device)) {
    return false;
  }
  if (m.events.length < 1 || m.events.length > LIMITS.maxEvents) {
    return false;
  }
  for (const e of m.events) {
    const ts = Number(e.timestampUs);
    if (ts < nowUs - 30 * DAY_US || ts > nowUs + 48 * HOUR_US) {
      return false;
    }
    if (len(e.eventName) < 1 || len(e.eventName) > 128 || len(e.sessionId) < 1 || len(e.sessionId) > 128) {
      return false;
    }
    if (len(e.playerId) > 128 || len(e.buildId) > 128 || len(e.mapId) > 255 || !devOk(e.device)) {
      return false;
    }
    for (const v of [e.position, e.cameraPosition, e.cameraRotation]) {
      if (v && !(fin(v.x) && fin(v.y) && fin(v.z))) {
        return false;
      }
    }
    if (!e.cameraPosition !== !e.cameraRotation) {
      return false;
    }
    const p = e.perf;
    if (p) {
      for (const x of [p.fps, p.frameTimeMs, p.memoryMb, p.gpuTimeMs, p.cpuTimeMs]) {
        if (x !== undefined && !(fin(x) && x >= 0)) {
          return false;
        }
      }
    }
    const props = Object.entries(e.properties);
    const metrics = Object.entries(e.metrics);
    if (props.length > 64 || metrics.length > 64) {
      return false;
    }
    for (const [k, v] of props) {
      if (len(k) < 1 || len(k) > 128 || len(v) > 1024) {
        return false;
      }
    }
    for (const [k, v] of metrics) {
      if (len(k) < 1 || len(k) > 128 || !fin(v)) {
        return false;
      }
    }
  }
  return true;
}

function perfBearing(m: TelemetryBatch): number {
  return m.events.filter(
    (e) =>
      e.perf &&
      [e.perf.fps, e.perf.frameTimeMs, e.perf.memoryMb, e.perf.gpuTimeMs, e.perf.cpuTimeMs].some(
        (x) => x !== undefined,
      ),
  ).length;
}

/** Random batch whose values sit around the bounds, so roughly half the batches are invalid. */
function randomBatch(rng: () => number): Uint8Array {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)] as T;
  const maybe = (p: number): boolean => rng() < p;
  const str = (max: number, min = 0): string => {
    const r = rng();
    const n = r < 0.03 ? max + 1 : r < 0.1 ? max : r < 0.13 && min > 0 ? 0 : min + Math.floor(rng() * 12);
    return maybe(0.2) ? `${a(Math.max(0, n - 2))}é`.slice(0, Math.max(0, n - 1)) : a(n);
  };
  const float = (): number =>
    maybe(0.03) ? pick([Number.NaN, Number.POSITIVE_INFINITY, -1, -0]) : Math.fround(rng() * 1000);
  const vec = () => ({ x: float(), y: float(), z: maybe(0.3) ? 0 : float() });
  const device = () => ({
    platform: str(64),
    gpu: maybe(0.5) ? str(256) : "",
    resolution: maybe(0.5) ? str(32) : "",
    memoryTotalMb: Math.floor(rng() * 2 ** 32),
  });
  const events: EventInit[] = [];
  const nEvents = maybe(0.02) ? 0 : 1 + Math.floor(rng() * 4);
  for (let i = 0; i < nEvents; i++) {
    const tsr = rng();
    const ts =
      tsr < 0.03
        ? NOW_US - 30 * DAY_US - 1
        : tsr < 0.06
          ? NOW_US + 48 * HOUR_US + 1
          : tsr < 0.08
            ? 0
            : tsr < 0.1
              ? -5
              : NOW_US - Math.floor(rng() * 29 * DAY_US);
    const e: EventInit = {
      timestampUs: BigInt(ts),
      eventName: str(128, 1),
      sessionId: str(128, 1),
      playerId: maybe(0.5) ? str(128) : "",
      mapId: maybe(0.5) ? str(255) : "",
    };
    if (maybe(0.5)) {
      e.position = vec();
    }
    if (maybe(0.5)) {
      e.cameraPosition = vec();
    }
    if (maybe(0.5)) {
      e.cameraRotation = vec();
    }
    if (maybe(0.5)) {
      e.perf = maybe(0.5) ? { fps: float(), cpuTimeMs: float() } : maybe(0.5) ? {} : { memoryMb: float() };
    }
    if (maybe(0.4)) {
      const n = maybe(0.05) ? 65 : Math.floor(rng() * 4);
      e.properties = Object.fromEntries(
        Array.from({ length: n }, (_, j) => [`${str(128, 1)}${j}`, str(1024)]),
      );
    }
    if (maybe(0.4)) {
      const n = maybe(0.05) ? 65 : Math.floor(rng() * 4);
      e.metrics = Object.fromEntries(
        Array.from({ length: n }, (_, j) => [
          `m${j}${maybe(0.05) ? a(128) : ""}`,
          maybe(0.05) ? Number.NaN : rng(),
        ]),
      );
    }
    if (maybe(0.2)) {
      e.device = device();
    }
    events.push(e);
  }
  return toBinary(
    TelemetryBatchSchema,
    create(TelemetryBatchSchema, {
      batchId: str(128),
      sdkName: str(64),
      device: maybe(0.5) ? device() : undefined,
      events,
    }),
  );
}

describe("scanTelemetryBatch: differential and fuzz", () => {
  it("agrees with a reference validator on random protobuf-es encoded batches", () => {
    const rng = mulberry32(42);
    let valid = 0;
    for (let i = 0; i < 600; i++) {
      const bytes = randomBatch(rng);
      const decoded = fromBinary(TelemetryBatchSchema, bytes);
      const ref = referenceValid(decoded, NOW_US);
      const r = scan(bytes);
      expect(r.ok, `case ${i}: ${JSON.stringify(r)}`).toBe(ref);
      if (r.ok) {
        valid++;
        expect(r.eventCount).toBe(decoded.events.length);
        expect(r.perfEventCount).toBe(perfBearing(decoded));
        const ts = decoded.events.map((e) => Number(e.timestampUs));
        expect(r.minTimestampUs).toBe(Math.min(...ts));
        expect(r.maxTimestampUs).toBe(Math.max(...ts));
      }
    }
    expect(valid).toBeGreaterThan(50);
    expect(valid).toBeLessThan(550);
  });

  it("never throws on ~2,000 mutated buffers; whenever it accepts, protobuf-es decodes the same events", () => {
    const rng = mulberry32(0xc0ffee);
    const bases: Uint8Array[] = [];
    while (bases.length < 12) {
      const b = randomBatch(rng);
      if (scan(b).ok) {
        bases.push(b);
      }
    }
    const int = (n: number): number => Math.floor(rng() * n);
    const mutate = (src: Uint8Array): Uint8Array => {
      let b: Uint8Array = src.slice();
      const rounds = 1 + int(3);
      for (let k = 0; k < rounds; k++) {
        const pos = int(b.length + 1);
        switch (int(8)) {
          case 0: // flip a bit
            if (b.length > 0) {
              b[pos % b.length] = (b[pos % b.length] as number) ^ (1 << int(8));
            }
            break;
          case 1: // interesting byte
            if (b.length > 0) {
              b[pos % b.length] = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x0a, 0x12, 0x2a][int(8)] as number;
            }
            break;
          case 2: // truncate
            b = b.slice(0, pos);
            break;
          case 3: // delete a range
            b = cat(b.subarray(0, pos), b.subarray(Math.min(b.length, pos + 1 + int(16))));
            break;
          case 4: {
            // insert random bytes
            const ins = Array.from({ length: 1 + int(8) }, () => int(256));
            b = cat(b.subarray(0, pos), ins, b.subarray(pos));
            break;
          }
          case 5: {
            // duplicate a range elsewhere
            const from = int(b.length + 1);
            const chunk = b.slice(from, from + 1 + int(40));
            b = cat(b.subarray(0, pos), chunk, b.subarray(pos));
            break;
          }
          case 6: {
            // splice in a chunk of another base
            const other = bases[int(bases.length)] as Uint8Array;
            const from = int(other.length);
            b = cat(b.subarray(0, pos), other.subarray(from, from + 1 + int(60)), b.subarray(pos));
            break;
          }
          default: // random byte
            if (b.length > 0) {
              b[pos % b.length] = int(256);
            }
        }
      }
      return b;
    };

    let accepted = 0;
    for (let i = 0; i < 2000; i++) {
      const bytes = mutate(bases[i % bases.length] as Uint8Array);
      let r: ScanOk | ScanError | undefined;
      expect(() => {
        r = scan(bytes);
      }).not.toThrow();
      if (!r) {
        throw new Error("unreachable");
      }
      if (r.ok) {
        accepted++;
        let decoded: TelemetryBatch | undefined;
        expect(() => {
          decoded = fromBinary(TelemetryBatchSchema, bytes);
        }, `case ${i}: scanner accepted what protobuf-es rejects`).not.toThrow();
        if (!decoded) {
          throw new Error("unreachable");
        }
        expect(decoded.events.length).toBe(r.eventCount);
        expect(perfBearing(decoded)).toBe(r.perfEventCount);
        expect(referenceValid(decoded, NOW_US), `case ${i}`).toBe(true);
      } else {
        expect(typeof r.field).toBe("string");
        expect(r.rule.length).toBeGreaterThan(0);
      }
    }
    expect(accepted).toBeGreaterThan(100);
  });
});
