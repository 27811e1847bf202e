import { describe, expect, it } from "vitest";
import { osVersion } from "../src/device.js";
import { FrameSampler, gpuTimer } from "../src/perf.js";

describe("frame sampling", () => {
  it("averages the frame times since the last heartbeat; a gap of a second or more is no frame", () => {
    const s = new FrameSampler();
    expect(s.take()).toBeUndefined();
    for (const t of [1000, 1020, 1040, 1060, 1080, 5000, 5040]) {
      s.frame(t);
    }
    // 4 frames of 20 ms and one of 40 ms; the 3,920 ms pause (a hidden tab) is left out.
    const sample = s.take();
    expect(sample?.frameTimeMs).toBeCloseTo(24, 6);
    expect(sample?.fps).toBeCloseTo(1000 / 24, 6);
    expect(s.take()).toBeUndefined();
  });

  it("the display's refresh rate: the short intervals' rate, the highest seen in the session", () => {
    const s = new FrameSampler();
    // 120 Hz: 8.33 ms intervals, with one stall of 25 ms in eight.
    let t = 1000;
    for (let i = 0; i < 80; i++) {
      t += i % 8 === 7 ? 25 : 1000 / 120;
      s.frame(t);
    }
    expect(s.take()?.displayHz).toBe(120);
    // A heartbeat where the page drew every second refresh: 60 fps, and the display still 120 Hz.
    for (let i = 0; i < 40; i++) {
      t += 1000 / 60;
      s.frame(t);
    }
    const slow = s.take();
    expect(slow?.fps).toBeCloseTo(60, 6);
    expect(slow?.displayHz).toBe(120);
    // Too few frames say nothing; a fresh sampler at 60 Hz says 60.
    const fresh = new FrameSampler();
    for (let i = 0; i < 5; i++) {
      fresh.frame(2000 + i * (1000 / 60));
    }
    expect(fresh.take()?.displayHz).toBeUndefined();
    for (let i = 5; i < 40; i++) {
      fresh.frame(2000 + i * (1000 / 60));
    }
    expect(fresh.take()?.displayHz).toBe(60);
  });

  it("frames run back to back raise the frame rate above the refresh's, not the refresh rate", () => {
    // A busy machine at 60 Hz: twice the browser runs a late frame 1 ms after the one before.
    const s = new FrameSampler();
    let t = 1000;
    for (let i = 0; i < 30; i++) {
      t += i === 11 || i === 21 ? 1 : 1000 / 60;
      s.frame(t);
    }
    const beat = s.take();
    // 27 intervals of 16.67 ms and two of 1 ms: a mean of 15.59 ms, 64.1 fps, on a 60 Hz display.
    expect(beat?.fps).toBeCloseTo(29000 / (27 * (1000 / 60) + 2), 6);
    expect(beat?.fps).toBeGreaterThan(64);
    expect(beat?.displayHz).toBe(60);
  });
});

/** A WebGL1 context with EXT_disjoint_timer_query whose queries answer two frames later. */
function webgl1(nsPerFrame: number[], disjointAt = -1) {
  let frame = 0;
  const queries = new Map<number, { from: number; ns: number }>();
  let next = 1;
  const ext = {
    TIME_ELAPSED_EXT: 0x88bf,
    QUERY_RESULT_EXT: 0x8866,
    QUERY_RESULT_AVAILABLE_EXT: 0x8867,
    GPU_DISJOINT_EXT: 0x8fbb,
    createQueryEXT: () => next++,
    beginQueryEXT: (_t: number, q: number) => queries.set(q, { from: frame, ns: nsPerFrame[frame] ?? 0 }),
    endQueryEXT: () => {
      frame++;
    },
    getQueryObjectEXT: (q: number, what: number) => {
      const entry = queries.get(q);
      return what === 0x8867 ? frame - (entry?.from ?? 0) >= 2 : entry?.ns;
    },
    deleteQueryEXT: (q: number) => queries.delete(q),
  };
  return {
    gl: {
      getExtension: (name: string) => (name === "EXT_disjoint_timer_query" ? ext : null),
      getParameter: (p: number) => p === 0x8fbb && frame === disjointAt,
    } as unknown as WebGLRenderingContext,
    live: () => queries.size,
  };
}

describe("GPU time", () => {
  it("brackets each frame with a timer query and averages the results in milliseconds", () => {
    const { gl, live } = webgl1([4e6, 6e6, 8e6, 2e6, 0, 0, 0]);
    const timer = gpuTimer(gl);
    for (let i = 0; i < 6; i++) {
      timer?.frame();
    }
    // Frames 0..3 have answered (each two frames after it began): 4, 6, 8 and 2 ms.
    expect(timer?.take()).toBeCloseTo(5, 6);
    expect(timer?.take()).toBeUndefined();
    expect(live()).toBeLessThanOrEqual(4);
  });

  it("discards results while the GPU reports a disjoint, and is absent without the extension", () => {
    const { gl } = webgl1([4e6, 6e6, 8e6, 2e6], 3);
    const timer = gpuTimer(gl);
    for (let i = 0; i < 4; i++) {
      timer?.frame();
    }
    expect(timer?.take()).toBeCloseTo(4, 6);
    const none = { getExtension: () => null } as unknown as WebGLRenderingContext;
    expect(gpuTimer(none)).toBeUndefined();
    expect(gpuTimer(undefined)).toBeUndefined();
  });
});

describe("OS from the user agent", () => {
  it.each([
    ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36", "Windows 10"],
    ["Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15", "macOS 10.15.7"],
    ["Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X)", "iOS 17.4"],
    ["Mozilla/5.0 (Linux; Android 14; Pixel 8)", "Android 14"],
    ["Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/147.0", "Linux"],
    ["Mozilla/5.0 (X11; CrOS x86_64 15633.69.0)", "ChromeOS 15633"],
  ])("%s → %s", (ua, os) => {
    expect(osVersion(ua)).toBe(os);
  });
});
