import { describe, expect, it } from "vitest";
import { LIMITS as SERVICE } from "../../../workers/shared/telemetry/limits.js";
import { attributes, camera, clampEvent, coordinate, metrics, position, truncate } from "../src/clamp.js";
import { LIMITS } from "../src/limits.js";

describe("clamps", () => {
  it("are the service's bounds, number for number", () => {
    expect(LIMITS.event).toEqual(SERVICE.event);
    expect(LIMITS.device).toEqual(SERVICE.device);
    expect(LIMITS.attributes).toEqual(SERVICE.attributes);
    expect(LIMITS.metrics).toEqual(SERVICE.metrics);
    for (const k of [
      "maxEvents",
      "maxDecodedEntries",
      "maxCompressedBytes",
      "positionAbsMax",
      "fpsMax",
      "timeMsMax",
      "memoryUsedBytesMax",
      "cameraYawMaxExclusive",
      "cameraPitchAbsMax",
    ] as const) {
      expect(LIMITS[k], k).toBe(SERVICE[k]);
    }
  });

  it("truncate counts UTF-16 units and never splits a surrogate pair", () => {
    expect(truncate("abcdef", 4)).toBe("abcd");
    expect(truncate("abc", 4)).toBe("abc");
    expect(truncate(undefined, 4)).toBe("");
    // "🌊" is two units: cutting after its first would leave half of it.
    expect(truncate("abc🌊d", 4)).toBe("abc");
    expect(truncate("abc🌊d", 5)).toBe("abc🌊");
    expect(truncate("é".repeat(200), 128)).toHaveLength(128);
  });

  it("coordinates: finite within ±1e9, NaN and infinities become 0", () => {
    expect(coordinate(5.5)).toBe(5.5);
    expect(coordinate(2e9)).toBe(1e9);
    expect(coordinate(-2e9)).toBe(-1e9);
    expect(coordinate(Number.NaN)).toBe(0);
    expect(coordinate(Number.POSITIVE_INFINITY)).toBe(0);
    expect(position([1, 2])).toEqual({ x: 1, y: 2, z: 0 });
    expect(position({ x: 1, y: Number.NaN, z: 3 })).toEqual({ x: 1, y: 0, z: 3 });
  });

  it("camera: yaw wrapped into [0, 360) as a float32, pitch within ±90, non-finite drops the pair", () => {
    expect(camera(370, 10)).toEqual({ yaw: 10, pitch: 10 });
    expect(camera(-90, -100)).toEqual({ yaw: 270, pitch: -90 });
    expect(camera(720, 95)).toEqual({ yaw: 0, pitch: 90 });
    // Rounds to 360 as a float32, which ingest refuses.
    expect(camera(359.999_999_9, 0)?.yaw).toBe(0);
    expect(camera(Number.NaN, 0)).toBeUndefined();
    expect(camera(10, Number.POSITIVE_INFINITY)).toBeUndefined();
  });

  it("attributes: 50 entries, keys ≤ 64 and values ≤ 512 units, empty keys left out, values as text", () => {
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, i]));
    expect(attributes(many)).toHaveLength(50);
    expect(attributes({ "": "x", ok: true, n: 1.5 })).toEqual([
      ["ok", "true"],
      ["n", "1.5"],
    ]);
    const [[k, v] = []] = attributes({ ["k".repeat(100)]: "v".repeat(600) });
    expect(k).toHaveLength(64);
    expect(v).toHaveLength(512);
  });

  it("metrics: 50 finite entries, keys ≤ 64 units", () => {
    expect(metrics({ a: 1, b: Number.NaN, c: Number.POSITIVE_INFINITY, "": 2, d: -3 })).toEqual([
      ["a", 1],
      ["d", -3],
    ]);
    const many = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`m${i}`, i]));
    expect(metrics(many)).toHaveLength(50);
  });

  it("an event's numbers and strings within bounds", () => {
    const e = clampEvent({
      name: "n".repeat(200),
      timestampUs: 1.6,
      sessionId: "s",
      platform: "p".repeat(70),
      fps: 5000,
      frameTimeMs: 20_000,
      gpuTimeMs: -1,
      memoryUsedBytes: 1e12,
    });
    expect(e.name).toHaveLength(128);
    expect(e.platform).toHaveLength(64);
    expect(e.timestampUs).toBe(2);
    expect([e.fps, e.frameTimeMs, e.gpuTimeMs, e.memoryUsedBytes]).toEqual([1000, 10_000, 0, 64 * 1024 ** 3]);
  });
});
