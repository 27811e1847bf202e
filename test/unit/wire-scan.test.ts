import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  type DeviceContext,
  type TelemetryBatch,
  TelemetryBatchSchema,
} from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { type ScanError, type ScanOk, scanTelemetryBatch } from "../../workers/ingest/wire-scan.js";
import { LIMITS } from "../../workers/shared/telemetry/limits.js";
import {
  batchOfEvents,
  cat,
  encodeBatch,
  encodeDevice,
  encodeEvent,
  f32Step,
  fDouble,
  fFloat,
  fFloatBits,
  fLen,
  fStr,
  fVarint,
  type SdkBatch,
  type SdkDevice,
  type SdkEvent,
  tag,
  utf8,
  varint,
  WT,
} from "./sdk-wire.js";

// Batches are built by ./sdk-wire.ts the way the SDK serializers build them; our generated code is
// only used to decode, in the differential tests.

const NOW_US = 1_780_000_000_000_000; // 2026-05-28
const DAY_US = 86_400_000_000;
const HOUR_US = 3_600_000_000;
const TS_OK = NOW_US - 60_000_000;
const GiB = 1024 ** 3;

const a = (n: number, ch = "a"): string => ch.repeat(n);
const CJK = "漢"; // 3 UTF-8 bytes, 1 UTF-16 unit
const ASTRAL = "😀"; // 4 UTF-8 bytes, 2 UTF-16 units (a surrogate pair)

/** A valid event with only the required fields; override anything. */
function ev(init: SdkEvent = {}): SdkEvent {
  return { eventName: "player_move", timestampUs: TS_OK, sessionId: "session-1", ...init };
}
function batch(init: Partial<SdkBatch> = {}): Uint8Array {
  return encodeBatch({ events: [ev()], ...init });
}
const one = (init: SdkEvent): Uint8Array => batch({ events: [ev(init)] });
const eventBytes = (init: SdkEvent = {}): Uint8Array => encodeEvent(ev(init));

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
const units = (n: number): string => `must be at most ${n} UTF-16 code units`;

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
  ["resolution", "resolution"],
  ["build_config", "buildConfig"],
  ["gpu", "gpu"],
  ["storage", "storage"],
  ["cpu", "cpu"],
  ["os_version", "osVersion"],
  ["device_model", "deviceModel"],
] as const;

const fullDevice: SdkDevice = {
  resolution: "2560x1440",
  buildConfig: "shipping",
  gpu: "NVIDIA GeForce RTX 4070",
  storage: "nvme",
  cpu: "AMD Ryzen 7 7800X3D",
  osVersion: "Windows 11 23H2",
  deviceModel: "Custom PC",
  memoryTotalMb: 32768,
};

/** Events of every kind the SDKs emit, as they emit them. */
const SDK_EVENTS: SdkEvent[] = [
  ev({
    eventName: "session_start",
    source: 1,
    buildId: "1.4.2+cl20011",
    platform: "Windows",
    engineVersion: "6000.0.23f1",
    attributes: { "ci.branch": "main" },
  }),
  ev({
    eventName: "perf_heartbeat",
    fps: 59.8,
    frameTimeMs: 16.72,
    memoryUsedBytes: 3_221_225_472,
    gpuTimeMs: 9.4,
    gameThreadMs: 7.1,
    renderThreadMs: 8.3,
    metrics: {
      "mem.vram": 2_147_483_648,
      "mem.heap": 805_306_368,
      "io.read_bytes": 1_048_576,
      "io.read_time_ms": 3.5,
      "io.read_ops": 0,
    },
    source: 2,
    platform: "PS5",
    engineVersion: "5.4.4-0+++UE5+Release-5.4",
  }),
  ev({
    eventName: "map_load",
    mapId: "maps/desert_outpost",
    attributes: { map_name: "Desert Outpost" },
    metrics: { load_time_ms: 2315.5 },
  }),
  ev({
    eventName: "player_death",
    playerId: "player-42",
    mapId: "maps/desert_outpost",
    position: { x: 1520.25, y: -340.5, z: 0 },
    cameraYaw: 0,
    cameraPitch: -12.5,
    attributes: { cause: "fall" },
  }),
  ev({ eventName: "checkpoint", position: { x: 0, y: 0, z: 12 }, cameraYaw: 359.99, cameraPitch: 90 }),
];

// ---------------------------------------------------------------------------

describe("scanTelemetryBatch: SDK batches", () => {
  it("accepts events of every kind the SDKs emit and reports counts", () => {
    const r = expectOk(batch({ events: SDK_EVENTS }));
    expect(r).toEqual({
      ok: true,
      eventCount: 5,
      entryCount: 5 + 1 + 5 + 2 + 1,
      minTimestampUs: TS_OK,
      maxTimestampUs: TS_OK,
      perfEventCount: 1,
    });
  });

  it("accepts our device context on the batch and on events", () => {
    const r = expectOk(
      batch({ device: fullDevice, events: [ev({ device: { resolution: "1920x1080" } }), ev()] }),
    );
    expect(r.eventCount).toBe(2);
  });

  it("reports min/max timestamps and performance-bearing events", () => {
    const r = expectOk(
      batch({
        events: [
          ev({ timestampUs: NOW_US - 3 * HOUR_US, fps: 60 }),
          ev({ timestampUs: NOW_US + HOUR_US, memoryUsedBytes: 1 }),
          ev({ timestampUs: NOW_US - DAY_US, gameThreadMs: 5, renderThreadMs: 5 }), // not perf-bearing
          ev({ gpuTimeMs: 1 }),
          ev({ frameTimeMs: 16 }),
        ],
      }),
    );
    expect(r).toMatchObject({
      eventCount: 5,
      minTimestampUs: NOW_US - DAY_US,
      maxTimestampUs: NOW_US + HOUR_US,
      perfEventCount: 4,
    });
  });

  it("accepts zero perf fields, whether left out (as the SDKs do) or written explicitly", () => {
    expect(expectOk(one({ fps: 0, frameTimeMs: 0, memoryUsedBytes: 0, gpuTimeMs: 0 })).perfEventCount).toBe(
      0,
    );
    const explicit = cat(
      eventBytes(),
      fFloat(8, 0),
      fFloat(9, -0),
      fVarint(10, 0),
      fFloat(11, 0),
      fFloat(20, 0),
      fFloat(21, -0),
    );
    expect(expectOk(batchOfEvents(explicit)).perfEventCount).toBe(0);
  });

  it("accepts a missing position, a partial one and an empty one", () => {
    expectOk(one({}));
    expectOk(one({ position: { x: 3 } }));
    expectOk(batchOfEvents(cat(eventBytes(), fLen(5, []))));
  });

  it("skips reserved field 7 (zone_id) and unknown fields", () => {
    expectOk(batchOfEvents(cat(eventBytes(), fStr(7, "zone-a"))));
    expectOk(batchOfEvents(cat(eventBytes(), fVarint(7, 5))));
  });

  it("works on a Uint8Array view at any offset inside a larger buffer of non-ASCII bytes", () => {
    const ok = batch({ device: fullDevice, events: [...SDK_EVENTS, ev({ eventName: a(128, CJK) })] });
    const bad = one({ eventName: a(129, CJK) });
    for (let off = 0; off < 8; off++) {
      for (let pad = 0; pad < 5; pad++) {
        const big = new Uint8Array(ok.length + off + pad).fill(0xff);
        big.set(ok, off);
        expect(expectOk(big.subarray(off, off + ok.length)).eventCount).toBe(6);
        const big2 = new Uint8Array(bad.length + off + pad).fill(0xc3);
        big2.set(bad, off);
        expectErr(big2.subarray(off, off + bad.length), 0, "event_name", units(128));
      }
    }
  });
});

describe("scanTelemetryBatch: string bounds in UTF-16 code units", () => {
  const STRINGS = [
    ["event_name", "eventName", 128],
    ["session_id", "sessionId", 128],
    ["player_id", "playerId", 128],
    ["map_id", "mapId", 128],
    ["build_id", "buildId", 128],
    ["platform", "platform", 64],
    ["engine_version", "engineVersion", 64],
  ] as const;

  it.each(STRINGS)(
    "%s: at the bound in ASCII, CJK and surrogate pairs; one unit over refused",
    (f, k, max) => {
      expect(LIMITS.event[f]).toBe(max);
      expectOk(one({ [k]: a(max) }));
      expectOk(one({ [k]: a(max, CJK) })); // 3 × max bytes
      expectOk(one({ [k]: a(max / 2, ASTRAL) })); // 4 × max / 2 bytes, max units
      expectOk(one({ [k]: `${a(max / 2 - 1, ASTRAL)}${CJK}é` }));
      expectErr(one({ [k]: a(max + 1) }), 0, f, units(max));
      expectErr(one({ [k]: a(max + 1, CJK) }), 0, f, units(max));
      expectErr(one({ [k]: `${a(max / 2, ASTRAL)}a` }), 0, f, units(max)); // a pair counts as 2
      expectErr(one({ [k]: `${a(max - 1, CJK)}${ASTRAL}` }), 0, f, units(max));
      expectErr(one({ [k]: a(10 * max, CJK) }), 0, f, units(max));
    },
  );

  it("a CJK event name of 128 characters (384 bytes) is accepted", () => {
    const name = a(128, "測");
    expect(utf8(name).length).toBe(384);
    expectOk(one({ eventName: name }));
  });

  it.each([
    ["event_name", "eventName"],
    ["session_id", "sessionId"],
  ] as const)("%s is required", (f, k) => {
    expectErr(one({ [k]: "" }), 0, f, "required, non-empty");
    expectErr(
      batchOfEvents(cat(eventBytes(), fStr(f === "event_name" ? 1 : 3, ""))),
      0,
      f,
      "required, non-empty",
    );
    expectOk(one({ [k]: "x" }));
  });

  it.each(DEVICE_FIELDS)("device.%s: batch and event, at the bound and one unit over", (f, k) => {
    const max = LIMITS.device[f];
    expectOk(batch({ device: { [k]: a(max) }, events: [ev({ device: { [k]: a(max, CJK) } })] }));
    expectOk(batch({ device: { [k]: a(max / 2, ASTRAL) } }));
    expectErr(batch({ device: { [k]: a(max + 1) } }), null, `device.${f}`, units(max));
    expectErr(batch({ device: { [k]: `${a(max / 2, ASTRAL)}x` } }), null, `device.${f}`, units(max));
    expectErr(
      batch({ events: [ev(), ev({ device: { [k]: a(max + 1, CJK) } })] }),
      1,
      `device.${f}`,
      units(max),
    );
  });

  it("device.memory_total_mb: any uint32; larger varints are malformed", () => {
    expectOk(
      batch({ device: { memoryTotalMb: 0xffffffff }, events: [ev({ device: { memoryTotalMb: 1 } })] }),
    );
    expectErr(cat(batch(), fLen(2, fVarint(8, 2 ** 32))), null, "device.memory_total_mb", MALFORMED);
    expectErr(
      batchOfEvents(cat(eventBytes(), fLen(22, fVarint(8, -1)))),
      0,
      "device.memory_total_mb",
      MALFORMED,
    );
  });

  it("device.refresh_rate_hz: 0 (not collected) to 1000 Hz", () => {
    expectOk(
      batch({ device: { refreshRateHz: 1000 }, events: [ev({ device: { refreshRateHz: 120 } }), ev()] }),
    );
    const rule = "must be from 0 to 1000 Hz (0: not collected)";
    expectErr(batch({ device: { refreshRateHz: 1001 } }), null, "device.refresh_rate_hz", rule);
    expectErr(
      batch({ events: [ev(), ev({ device: { refreshRateHz: 4000 } })] }),
      1,
      "device.refresh_rate_hz",
      rule,
    );
    expectErr(cat(batch(), fLen(2, fVarint(9, 2 ** 32))), null, "device.refresh_rate_hz", MALFORMED);
    expectErr(cat(batch(), fLen(2, fLen(9, [1]))), null, "device.refresh_rate_hz", /wire type/);
  });

  it("strings must be valid UTF-8", () => {
    expectErr(batchOfEvents(cat(eventBytes(), fLen(16, [0x61, 0xff]))), 0, "platform", "must be valid UTF-8");
    expectErr(cat(batch(), fLen(2, fLen(3, [0xc3]))), null, "device.gpu", "must be valid UTF-8");
    // Over the byte bound but possibly within the unit bound: validated before counting.
    expectErr(batchOfEvents(cat(eventBytes(), fLen(6, [...utf8(a(127)), 0xe6, 0xbc]))), 0, "map_id", /UTF-8/);
  });
});

describe("scanTelemetryBatch: numeric rules", () => {
  it("timestamp_us: window edges accepted, one microsecond beyond refused, missing is 0", () => {
    const RULE = "must be within the last 30 days and at most 48 hours ahead";
    expectOk(one({ timestampUs: NOW_US - 30 * DAY_US }));
    expectOk(one({ timestampUs: NOW_US + 48 * HOUR_US }));
    expectErr(one({ timestampUs: NOW_US - 30 * DAY_US - 1 }), 0, "timestamp_us", RULE);
    expectErr(one({ timestampUs: NOW_US + 48 * HOUR_US + 1 }), 0, "timestamp_us", RULE);
    expectErr(one({ timestampUs: 0 }), 0, "timestamp_us", RULE);
    for (const t of [-1n, -(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n + 1n]) {
      expectErr(one({ timestampUs: t }), 0, "timestamp_us", RULE);
    }
    // Negative int64 (10-byte varint) is decoded exactly.
    expect(expectOk(one({ timestampUs: -1_000 }), 0).minTimestampUs).toBe(-1_000);
    // A non-canonical (padded) varint decodes like any proto3 decoder does.
    const v = varint(NOW_US);
    v[v.length - 1] = (v[v.length - 1] as number) | 0x80;
    v.push(0);
    const e = cat(fStr(1, "e"), tag(2, WT.VARINT), v, fStr(3, "s"));
    expect(expectOk(batchOfEvents(e)).minTimestampUs).toBe(NOW_US);
  });

  it("position: each coordinate finite with |v| <= 1e9", () => {
    const RULE = "must be finite, at most 1000000000 in absolute value";
    expectOk(one({ position: { x: 1e9, y: -1e9, z: 1e-45 } }));
    for (const c of ["x", "y", "z"] as const) {
      for (const bad of [
        f32Step(1e9, 1),
        -f32Step(1e9, 1),
        Number.NaN,
        Number.POSITIVE_INFINITY,
        -Infinity,
      ]) {
        expectErr(one({ position: { x: 1, y: 2, z: 3, [c]: bad } }), 0, `position.${c}`, RULE);
      }
    }
    // NaN with any payload and sign.
    for (const bits of [0x7fc00000, 0xffc00000, 0x7f800001, 0xffffffff]) {
      expectErr(batchOfEvents(cat(eventBytes(), fLen(5, fFloatBits(2, bits)))), 0, "position.y", RULE);
    }
  });

  it.each([
    ["fps", "fps", LIMITS.fpsMax, "must be finite, from 0 to 1000"],
    ["frame_time_ms", "frameTimeMs", LIMITS.timeMsMax, "must be finite, from 0 to 10000 ms"],
    ["gpu_time_ms", "gpuTimeMs", LIMITS.timeMsMax, "must be finite, from 0 to 10000 ms"],
    ["game_thread_ms", "gameThreadMs", LIMITS.timeMsMax, "must be finite, from 0 to 10000 ms"],
    ["render_thread_ms", "renderThreadMs", LIMITS.timeMsMax, "must be finite, from 0 to 10000 ms"],
  ] as const)("%s: 0 <= v <= max, finite", (f, k, max, rule) => {
    expectOk(one({ [k]: max }));
    expectOk(one({ [k]: 1e-45 }));
    expectErr(one({ [k]: f32Step(max, 1) }), 0, f, rule);
    expectErr(one({ [k]: -1e-45 }), 0, f, rule);
    expectErr(one({ [k]: -1 }), 0, f, rule);
    expectErr(one({ [k]: Number.NaN }), 0, f, rule);
    expectErr(one({ [k]: Number.POSITIVE_INFINITY }), 0, f, rule);
  });

  it("memory_used_bytes: 0 to 64 GiB; negative int64 refused", () => {
    const RULE = "must be from 0 to 68719476736 bytes (64 GiB)";
    expect(expectOk(one({ memoryUsedBytes: 64 * GiB })).perfEventCount).toBe(1);
    expectErr(one({ memoryUsedBytes: 64 * GiB + 1 }), 0, "memory_used_bytes", RULE);
    expectErr(one({ memoryUsedBytes: -1 }), 0, "memory_used_bytes", RULE);
    expectErr(one({ memoryUsedBytes: -(2n ** 63n) }), 0, "memory_used_bytes", RULE);
    expectErr(one({ memoryUsedBytes: 2n ** 63n - 1n }), 0, "memory_used_bytes", RULE);
  });

  describe("camera pair", () => {
    const YAW = "must be finite, in [0, 360) degrees";
    const PITCH = "must be finite, in [-90, 90] degrees";
    it("both present (0 included) or both absent", () => {
      expectOk(one({ cameraYaw: 0, cameraPitch: 0 }));
      expectOk(one({ cameraYaw: f32Step(360, -1), cameraPitch: -90 }));
      expectOk(one({ cameraYaw: -0, cameraPitch: 90 }));
      expectOk(one({}));
    });
    it("a half pair names the missing one", () => {
      expectErr(
        one({ cameraYaw: 10 }),
        0,
        "camera_pitch",
        "required when camera_yaw is present (camera_yaw and camera_pitch are a pair)",
      );
      expectErr(
        one({ cameraPitch: 0 }),
        0,
        "camera_yaw",
        "required when camera_pitch is present (camera_yaw and camera_pitch are a pair)",
      );
    });
    it("yaw in [0, 360), pitch in [-90, 90], both finite", () => {
      for (const yaw of [360, -1e-45, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
        expectErr(one({ cameraYaw: yaw, cameraPitch: 0 }), 0, "camera_yaw", YAW);
      }
      for (const pitch of [f32Step(90, 1), f32Step(-90, -1), Number.NaN, Number.NEGATIVE_INFINITY]) {
        expectErr(one({ cameraYaw: 0, cameraPitch: pitch }), 0, "camera_pitch", PITCH);
      }
    });
  });

  it("source: 0, 1 and 2 accepted; anything else refused", () => {
    const RULE =
      "must be 0 (TELEMETRY_SOURCE_UNSPECIFIED), 1 (TELEMETRY_SOURCE_PLAYER) or 2 (TELEMETRY_SOURCE_AUTOMATED)";
    for (const s of [0, 1, 2]) {
      expectOk(batchOfEvents(cat(eventBytes(), fVarint(14, s))));
    }
    for (const s of [3, 127, 2 ** 31 - 1, -1]) {
      expectErr(one({ source: s }), 0, "source", RULE);
    }
  });
});

describe("scanTelemetryBatch: attributes and metrics", () => {
  const attrs = (n: number, key = (i: number) => `k${i}`): [string, string][] =>
    Array.from({ length: n }, (_, i) => [key(i), "v"]);
  const mets = (n: number): [string, number][] => Array.from({ length: n }, (_, i) => [`m${i}`, i]);

  it("50 attributes accepted, 51 refused; duplicate keys on the wire count", () => {
    expectOk(one({ attributes: attrs(50) }));
    expectErr(one({ attributes: attrs(51) }), 0, "attributes", "at most 50 entries");
    expectErr(one({ attributes: attrs(51, () => "same") }), 0, "attributes", "at most 50 entries");
  });

  it("50 metrics accepted, 51 refused", () => {
    expectOk(one({ metrics: mets(50) }));
    expectErr(one({ metrics: mets(51) }), 0, "metrics", "at most 50 entries");
  });

  it("attribute key <= 64 and value <= 512 UTF-16 units; metric key <= 64", () => {
    expectOk(one({ attributes: { [a(64, CJK)]: a(512, CJK) }, metrics: { [a(32, ASTRAL)]: 1 } }));
    expectOk(one({ attributes: { [a(64)]: a(512) } }));
    expectErr(one({ attributes: { [a(65)]: "v" } }), 0, "attributes", `key ${units(64)}`);
    expectErr(one({ attributes: { [`${a(32, ASTRAL)}x`]: "v" } }), 0, "attributes", `key ${units(64)}`);
    expectErr(one({ attributes: { k: a(513) } }), 0, 'attributes["k"]', units(512));
    expectErr(one({ attributes: { 'k"é': `${a(256, ASTRAL)}!` } }), 0, 'attributes["k\\"é"]', units(512));
    expectErr(one({ metrics: { [a(65, CJK)]: 1 } }), 0, "metrics", `key ${units(64)}`);
  });

  it("an empty value or a zero metric (left out by the SDKs) is accepted; an empty key is refused", () => {
    expectOk(one({ attributes: { k: "" }, metrics: { m: 0 } }));
    expectErr(one({ attributes: [["", "v"]] }), 0, "attributes", "key must be non-empty");
    expectErr(
      batchOfEvents(cat(eventBytes(), fLen(13, fDouble(2, 1)))),
      0,
      "metrics",
      "key must be non-empty",
    );
  });

  it("metric values finite; keys and values valid UTF-8", () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expectErr(one({ metrics: { ok: 1, "io.read_ms": bad } }), 0, 'metrics["io.read_ms"]', "must be finite");
    }
    expectOk(one({ metrics: { big: Number.MAX_VALUE, neg: -1e300 } }));
    const badKey = fLen(12, cat(fLen(1, [0x6b, 0xc3]), fStr(2, "v")));
    expectErr(batchOfEvents(cat(eventBytes(), badKey)), 0, "attributes", "key must be valid UTF-8");
    const badVal = fLen(12, cat(fStr(1, "k"), fLen(2, [0xed, 0xa0, 0x80])));
    expectErr(batchOfEvents(cat(eventBytes(), badVal)), 0, 'attributes["k"]', "must be valid UTF-8");
  });
});

describe("scanTelemetryBatch: batch caps", () => {
  const repeat = (unit: Uint8Array, n: number): Uint8Array => {
    const out = new Uint8Array(unit.length * n);
    for (let i = 0; i < n; i++) {
      out.set(unit, i * unit.length);
    }
    return out;
  };

  it("10,000 events accepted, 10,001 refused", () => {
    const e = fLen(1, eventBytes());
    expect(expectOk(repeat(e, LIMITS.maxEvents)).eventCount).toBe(10_000);
    expectErr(repeat(e, LIMITS.maxEvents + 1), null, "events", "at most 10000 events");
  });

  it("100,000 decoded entries (events plus map entries) accepted, 100,001 refused", () => {
    // 2,000 events × (1 + 30 attributes + 19 metrics) = 100,000 entries.
    const attributes = Array.from({ length: 30 }, (_, i): [string, string] => [`a${i}`, "v"]);
    const metrics = Array.from({ length: 19 }, (_, i): [string, number] => [`m${i}`, i + 0.5]);
    const full = repeat(fLen(1, eventBytes({ attributes, metrics })), 2_000);
    const r = expectOk(full);
    expect(r).toMatchObject({ eventCount: 2_000, entryCount: 100_000 });
    const rule = "at most 100000 decoded entries per batch (events plus attributes and metrics entries)";
    expectErr(cat(full, fLen(1, eventBytes())), null, "events", rule);
    const lastWithOneMore = fLen(1, eventBytes({ attributes, metrics: [...metrics, ["m19", 1]] }));
    const e1 = fLen(1, eventBytes({ attributes, metrics }));
    expectErr(cat(repeat(e1, 1_999), lastWithOneMore), null, "events", rule);
  });

  it("at least one event", () => {
    expectErr(new Uint8Array(0), null, "events", "must contain at least 1 event");
    expectErr(fLen(2, encodeDevice(fullDevice)), null, "events", "must contain at least 1 event");
  });

  it("a decompressed batch over 8 MiB is refused", () => {
    expectErr(new Uint8Array(LIMITS.maxDecompressedBytes + 1), null, "batch", /at most 8388608 bytes/);
  });

  it("reports the first offending event and field in wire order", () => {
    const bytes = batch({
      events: [ev(), ev({ fps: 2000, cameraYaw: 400, cameraPitch: 0 }), ev({ eventName: "" })],
    });
    expectErr(bytes, 1, "fps", /from 0 to 1000/);
  });
});

describe("scanTelemetryBatch: malformed wire format", () => {
  const valid = batch({ device: fullDevice, events: SDK_EVENTS });

  it("never throws on any prefix; a cut inside a message is malformed", () => {
    for (let n = 0; n < valid.length; n++) {
      const r = scan(valid.subarray(0, n));
      if (r.ok) {
        expect(() => fromBinary(TelemetryBatchSchema, valid.subarray(0, n))).not.toThrow();
      }
    }
    const first = fLen(1, eventBytes()).length;
    const r = scan(batchOfEvents(eventBytes(), eventBytes()).subarray(0, first + 5));
    expect(r).toMatchObject({ ok: false, eventIndex: 1, rule: expect.stringMatching(MALFORMED) });
  });

  it("field number 0, over-long tags and varints, wire types 6 and 7, groups", () => {
    expectErr(cat(batch(), [0x00, 0x00]), null, "batch", "malformed protobuf: field number 0");
    expectErr(batchOfEvents(cat(eventBytes(), [0x02, 0x00])), 0, "event", MALFORMED);
    expectErr(cat(batch(), [0x88, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00]), null, "batch", MALFORMED);
    expectErr(cat(batch(), [0xf8, 0xff, 0xff, 0xff, 0x1f, 0x00]), null, "batch", MALFORMED);
    expectOk(cat(batch(), fVarint(2 ** 29 - 1, 1))); // largest field number: unknown, skipped
    const eleven = [...Array.from({ length: 10 }, () => 0x80), 0x00];
    expectErr(cat(batch(), tag(99, 0), eleven), null, "batch", /varint longer than 10 bytes/);
    expectErr(batchOfEvents(cat(tag(2, 0), eleven)), 0, "timestamp_us", /varint longer than 10 bytes/);
    expectErr(cat(batch(), tag(99, 6)), null, "batch", MALFORMED);
    expectErr(cat(batch(), tag(99, 7)), null, "batch", MALFORMED);
    const group = cat(tag(99, 3), fVarint(1, 1), tag(99, 4));
    expect(() => fromBinary(TelemetryBatchSchema, cat(batch(), group))).not.toThrow(); // protobuf-es accepts
    expectErr(cat(batch(), group), null, "batch", /group/);
    expectErr(batchOfEvents(cat(eventBytes(), tag(50, 4))), 0, "event", /group/);
  });

  it.each([
    ["events as varint", () => cat(batch(), fVarint(1, 5)), null, "events"],
    ["device as fixed32", () => cat(batch(), tag(2, 5), [0, 0, 0, 0]), null, "device"],
    [
      "event_name as fixed64",
      () => batchOfEvents(cat(eventBytes(), tag(1, 1), new Uint8Array(8))),
      0,
      "event_name",
    ],
    ["timestamp_us as LEN", () => batchOfEvents(cat(eventBytes(), fLen(2, [1]))), 0, "timestamp_us"],
    ["position as varint", () => batchOfEvents(cat(eventBytes(), fVarint(5, 1))), 0, "position"],
    ["position.x as double", () => batchOfEvents(cat(eventBytes(), fLen(5, fDouble(1, 1)))), 0, "position.x"],
    ["fps as double", () => batchOfEvents(cat(eventBytes(), fDouble(8, 60))), 0, "fps"],
    [
      "memory_used_bytes as fixed64",
      () => batchOfEvents(cat(eventBytes(), fDouble(10, 1))),
      0,
      "memory_used_bytes",
    ],
    ["source as LEN", () => batchOfEvents(cat(eventBytes(), fLen(14, [1]))), 0, "source"],
    ["platform as varint", () => batchOfEvents(cat(eventBytes(), fVarint(16, 1))), 0, "platform"],
    ["camera_yaw as double", () => batchOfEvents(cat(eventBytes(), fDouble(18, 1))), 0, "camera_yaw"],
    [
      "render_thread_ms as varint",
      () => batchOfEvents(cat(eventBytes(), fVarint(21, 1))),
      0,
      "render_thread_ms",
    ],
    [
      "attributes value as varint",
      () => batchOfEvents(cat(eventBytes(), fLen(12, cat(fStr(1, "k"), fVarint(2, 1))))),
      0,
      "attributes.value",
    ],
    [
      "metrics value as float",
      () => batchOfEvents(cat(eventBytes(), fLen(13, cat(fStr(1, "k"), fFloat(2, 1))))),
      0,
      "metrics.value",
    ],
    ["device as varint", () => batchOfEvents(cat(eventBytes(), fVarint(22, 1))), 0, "device"],
    ["device.gpu as fixed32", () => cat(batch(), fLen(2, fFloat(3, 1))), null, "device.gpu"],
  ] as const)("a known field with the wrong wire type is refused: %s", (_name, make, eventIndex, field) => {
    expectErr(make(), eventIndex, field, /^malformed protobuf: wrong wire type/);
  });

  it("lengths beyond the buffer or the enclosing message are refused", () => {
    expectErr(cat(batch(), tag(2, 2), varint(1000), [0x0a]), null, "device", MALFORMED);
    expectErr(cat(batch(), tag(1, 2), varint(2 ** 40)), 1, "event", MALFORMED);
    // An inner string runs past the end of its event but stays within the buffer:
    // protobuf-es tolerates this, the scanner does not.
    const e = eventBytes();
    const overrun = cat(tag(1, 2), varint(e.length + 2), e, tag(6, 2), varint(4), utf8("abcd"));
    expectErr(overrun, 0, "map_id", MALFORMED);
    expectErr(batchOfEvents(cat(eventBytes(), fLen(5, [0x0d, 0, 0]))), 0, "position.x", MALFORMED);
    expectErr(batchOfEvents(cat(eventBytes(), [0x95, 0x01, 0, 0])), 0, "camera_yaw", MALFORMED);
    expectErr(
      batchOfEvents(cat(eventBytes(), fLen(13, cat(fStr(1, "k"), [0x11, 0])))),
      0,
      "metrics.value",
      MALFORMED,
    );
  });

  it("unknown fields of every wire type are skipped at every level", () => {
    const unknown = cat(
      fVarint(100, 2n ** 64n - 1n),
      fVarint(101, 0),
      cat(tag(102, WT.I64), new Uint8Array(8).fill(0xff)),
      fLen(103, new Uint8Array(300).fill(0xfe)),
      cat(tag(104, WT.I32), [0xff, 0xff, 0xff, 0xff]),
    );
    const pos = cat(unknown, fFloat(1, 1), unknown);
    const attr = cat(unknown, fStr(1, "k"), unknown, fStr(2, "v"), unknown);
    const metric = cat(unknown, fStr(1, "m"), unknown, fDouble(2, 1.5), unknown);
    const device = cat(unknown, fStr(1, "1920x1080"), unknown, fVarint(8, 1024));
    const e = cat(
      unknown,
      eventBytes({ fps: 60 }),
      fLen(5, pos),
      fLen(12, attr),
      fLen(13, metric),
      fLen(22, device),
      fVarint(23, 1),
      unknown,
    );
    const bytes = cat(unknown, fLen(2, device), batchOfEvents(e, e), unknown);
    expect(expectOk(bytes)).toMatchObject({ eventCount: 2, entryCount: 6, perfEventCount: 2 });
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
      cat(fLen(4, new Uint8Array(lead)), fLen(1, s), fVarint(2, TS_OK), fStr(3, "s")),
    );
    if (s.length === 0) {
      return;
    }
    const r = scan(bytes);
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

  it("edge cases, on the fast path and on the counting path", () => {
    const cases = [
      [0xef, 0xbb, 0xbf],
      [0xc2, 0x80],
      [0xc1, 0xbf],
      [0xc0, 0x80],
      [0xe0, 0x9f, 0xbf],
      [0xe0, 0xa0, 0x80],
      [0xed, 0x9f, 0xbf],
      [0xed, 0xa0, 0x80],
      [0xed, 0xbf, 0xbf],
      [0xee, 0x80, 0x80],
      [0xef, 0xbf, 0xbf],
      [0xf0, 0x8f, 0xbf, 0xbf],
      [0xf0, 0x90, 0x80, 0x80],
      [0xf4, 0x8f, 0xbf, 0xbf],
      [0xf4, 0x90, 0x80, 0x80],
      [0xf5, 0x80, 0x80, 0x80],
      [0xff],
      [0x80],
      [0xe2, 0x82],
      [0xf0, 0x9f, 0x98],
      [0x61, 0xe2, 0x82, 0xac, 0x62],
      [0xc3, 0xa9, 0xc3],
    ];
    for (const c of cases) {
      for (let lead = 0; lead < 4; lead++) {
        check(new Uint8Array(c), lead);
        check(cat(utf8(a(13)), c, utf8(a(6))), lead);
        // Over the byte bound, within the unit bound: the counting validator.
        check(cat(utf8(a(110, CJK)), c, utf8(a(6))), lead);
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

  it("random byte strings, including ones over the byte bound but within the unit bound", () => {
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
      check(i % 5 === 0 ? cat(utf8(a(110, CJK)), s) : s, i & 3);
    }
  });
});

// ---------------------------------------------------------------------------
// Differential tests: a reference check on what protobuf-es (our generated schema) decodes.

function referenceValid(m: TelemetryBatch, nowUs: number): boolean {
  const within = (s: string, max: number): boolean => s.length <= max; // JS length = UTF-16 units
  const f32In = (x: number, lo: number, hi: number): boolean => Number.isFinite(x) && x >= lo && x <= hi;
  const devOk = (d: DeviceContext | undefined): boolean =>
    !d ||
    (DEVICE_FIELDS.every(([f, k]) => within(d[k], LIMITS.device[f])) &&
      d.refreshRateHz <= LIMITS.refreshRateHzMax);
  if (!devOk(m.device) || m.events.length < 1 || m.events.length > LIMITS.maxEvents) {
    return false;
  }
  let entries = 0;
  for (const e of m.events) {
    const ts = Number(e.timestampUs);
    if (ts < nowUs - 30 * DAY_US || ts > nowUs + 48 * HOUR_US) {
      return false;
    }
    if (e.eventName.length < 1 || e.sessionId.length < 1) {
      return false;
    }
    for (const [f, k] of [
      ["event_name", "eventName"],
      ["session_id", "sessionId"],
      ["player_id", "playerId"],
      ["map_id", "mapId"],
      ["build_id", "buildId"],
      ["platform", "platform"],
      ["engine_version", "engineVersion"],
    ] as const) {
      if (!within(e[k], LIMITS.event[f])) {
        return false;
      }
    }
    if (!devOk(e.device)) {
      return false;
    }
    const p = e.position;
    if (p && ![p.x, p.y, p.z].every((c) => f32In(c, -1e9, 1e9))) {
      return false;
    }
    if (!f32In(e.fps, 0, 1000)) {
      return false;
    }
    for (const t of [e.frameTimeMs, e.gpuTimeMs, e.gameThreadMs, e.renderThreadMs]) {
      if (!f32In(t, 0, 10_000)) {
        return false;
      }
    }
    if (e.memoryUsedBytes < 0n || e.memoryUsedBytes > BigInt(64 * GiB)) {
      return false;
    }
    if ((e.cameraYaw === undefined) !== (e.cameraPitch === undefined)) {
      return false;
    }
    if (e.cameraYaw !== undefined && !(f32In(e.cameraYaw, 0, 360) && e.cameraYaw < 360)) {
      return false;
    }
    if (e.cameraPitch !== undefined && !f32In(e.cameraPitch, -90, 90)) {
      return false;
    }
    if (![0, 1, 2].includes(e.source)) {
      return false;
    }
    const attrs = Object.entries(e.attributes);
    const mets = Object.entries(e.metrics);
    if (attrs.length > 50 || mets.length > 50) {
      return false;
    }
    if (!attrs.every(([k, v]) => k.length >= 1 && k.length <= 64 && v.length <= 512)) {
      return false;
    }
    if (!mets.every(([k, v]) => k.length >= 1 && k.length <= 64 && Number.isFinite(v))) {
      return false;
    }
    entries += 1 + attrs.length + mets.length;
  }
  return entries <= LIMITS.maxDecodedEntries;
}

const perfBearing = (m: TelemetryBatch): number =>
  m.events.filter((e) => e.fps > 0 || e.frameTimeMs > 0 || e.memoryUsedBytes > 0n || e.gpuTimeMs > 0).length;

/** Random SDK-shaped batch whose values sit around the bounds, so a good share is invalid. */
function randomBatch(rng: () => number): SdkBatch {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)] as T;
  const maybe = (p: number): boolean => rng() < p;
  const str = (max: number, min = 0): string => {
    const r = rng();
    const n = r < 0.03 ? max + 1 : r < 0.1 ? max : r < 0.13 && min > 0 ? 0 : min + Math.floor(rng() * 12);
    const ch = pick(["a", "a", "a", CJK, "é"]);
    if (maybe(0.1) && n >= 2) {
      return `${a(Math.floor(n / 2) - 1, ASTRAL)}${a(n - 2 * (Math.floor(n / 2) - 1))}`;
    }
    return a(n, ch);
  };
  const float = (max: number): number => {
    const r = rng();
    return r < 0.02
      ? pick([Number.NaN, Number.POSITIVE_INFINITY, -1, -0, f32Step(max, 1), max])
      : r < 0.3
        ? 0
        : Math.fround(rng() * max);
  };
  const device = (): SdkDevice => ({
    gpu: maybe(0.5) ? str(256) : "",
    resolution: maybe(0.5) ? str(32) : "",
    memoryTotalMb: Math.floor(rng() * 2 ** 32),
    refreshRateHz: maybe(0.5) ? 0 : maybe(0.1) ? Math.floor(rng() * 2 ** 32) : Math.floor(rng() * 1_001),
  });
  const events: SdkEvent[] = [];
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
            : NOW_US - Math.floor(rng() * 29 * DAY_US);
    const e: SdkEvent = {
      eventName: str(128, 1),
      timestampUs: ts,
      sessionId: str(128, 1),
      playerId: maybe(0.5) ? str(128) : "",
      mapId: maybe(0.5) ? str(128) : "",
      platform: maybe(0.5) ? str(64) : "",
      engineVersion: maybe(0.3) ? str(64) : "",
      buildId: maybe(0.3) ? str(128) : "",
      source: maybe(0.97) ? Math.floor(rng() * 3) : 3,
    };
    if (maybe(0.5)) {
      e.position = { x: float(1e9) * (maybe(0.5) ? -1 : 1), y: float(2000), z: float(100) };
    }
    if (maybe(0.5)) {
      e.fps = float(1000);
      e.frameTimeMs = float(10_000);
      e.gpuTimeMs = float(50);
      e.gameThreadMs = float(50);
      e.renderThreadMs = float(10_000);
      e.memoryUsedBytes = maybe(0.03) ? pick([-1, 64 * GiB + 1, 64 * GiB]) : Math.floor(rng() * 8 * GiB);
    }
    if (maybe(0.5)) {
      const r = rng();
      if (r > 0.05) {
        e.cameraYaw = maybe(0.03) ? 360 : Math.fround(rng() * 359.99);
      }
      if (r < 0.95) {
        e.cameraPitch = maybe(0.03) ? f32Step(90, 1) : Math.fround(rng() * 180 - 90);
      }
    }
    if (maybe(0.4)) {
      const n = maybe(0.05) ? 51 : Math.floor(rng() * 4);
      e.attributes = Array.from({ length: n }, (_, j): [string, string] => [`${str(62, 1)}${j}`, str(512)]);
    }
    if (maybe(0.4)) {
      const n = maybe(0.05) ? 51 : Math.floor(rng() * 4);
      e.metrics = Array.from({ length: n }, (_, j): [string, number] => [
        `m${j}${maybe(0.05) ? a(64) : ""}`,
        maybe(0.05) ? Number.NaN : maybe(0.2) ? 0 : rng() * 1e6,
      ]);
    }
    if (maybe(0.2)) {
      e.device = device();
    }
    events.push(e);
  }
  return { events, device: maybe(0.5) ? device() : undefined };
}

describe("scanTelemetryBatch: differential and fuzz", () => {
  it("agrees with a reference check on what protobuf-es decodes, for random SDK-shaped batches", () => {
    const rng = mulberry32(42);
    let valid = 0;
    for (let i = 0; i < 800; i++) {
      const bytes = encodeBatch(randomBatch(rng));
      const decoded = fromBinary(TelemetryBatchSchema, bytes);
      const ref = referenceValid(decoded, NOW_US);
      const r = scan(bytes);
      expect(r.ok, `case ${i}: ${JSON.stringify(r)}`).toBe(ref);
      if (r.ok) {
        valid++;
        expect(r.eventCount).toBe(decoded.events.length);
        expect(r.perfEventCount).toBe(perfBearing(decoded));
        const n = decoded.events.reduce(
          (s, e) => s + 1 + Object.keys(e.attributes).length + Object.keys(e.metrics).length,
          0,
        );
        expect(r.entryCount).toBe(n);
        const ts = decoded.events.map((e) => Number(e.timestampUs));
        expect(r.minTimestampUs).toBe(Math.min(...ts));
        expect(r.maxTimestampUs).toBe(Math.max(...ts));
      }
    }
    expect(valid).toBeGreaterThan(100);
    expect(valid).toBeLessThan(700);
  });

  it("never throws on ~3,000 mutated buffers; whenever it accepts, protobuf-es decodes the same events", () => {
    const rng = mulberry32(0xc0ffee);
    const bases: Uint8Array[] = [encodeBatch({ events: SDK_EVENTS, device: fullDevice })];
    while (bases.length < 16) {
      const b = encodeBatch(randomBatch(rng));
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
          case 1: // an interesting byte: tags of this layout, lengths, float exponents
            if (b.length > 0) {
              b[pos % b.length] = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x0a, 0x12, 0x45, 0x70, 0x95][
                int(10)
              ] as number;
            }
            break;
          case 2: // truncate
            b = b.slice(0, pos);
            break;
          case 3: // delete a range
            b = cat(b.subarray(0, pos), b.subarray(Math.min(b.length, pos + 1 + int(16))));
            break;
          case 4: // insert random bytes
            b = cat(
              b.subarray(0, pos),
              Array.from({ length: 1 + int(8) }, () => int(256)),
              b.subarray(pos),
            );
            break;
          case 5: {
            // duplicate a range elsewhere
            const from = int(b.length + 1);
            b = cat(b.subarray(0, pos), b.slice(from, from + 1 + int(40)), b.subarray(pos));
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
    for (let i = 0; i < 3000; i++) {
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
        expect(r.field.length).toBeGreaterThan(0);
        expect(r.rule.length).toBeGreaterThan(0);
      }
    }
    expect(accepted).toBeGreaterThan(100);
  });
});
