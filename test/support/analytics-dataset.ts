// A seeded, deterministic telemetry dataset for the analytics tests: players with and without
// player_id, sessions over the last 30 days (day boundaries, the oldest window day near the 30-day
// ingest edge, a little of tomorrow), maps with negative coordinates, builds, platforms, partial
// performance samples, and scripted players for the funnel edge cases. Everything is placed relative
// to one `anchorMs` captured once, so the clock moving during the run changes nothing.

export const HOUR_US = 3_600_000_000;
export const DAY_US = 24 * HOUR_US;
const DAY_MS = 86_400_000;

/** Performance fields as the SDK fills them; absent ones go out as the wire's "not collected" zero. */
export type Perf = {
  fps?: number;
  frameTimeMs?: number;
  /** Bytes, as the SDKs send them; profiles and analytics speak megabytes (bytes / 1,048,576). */
  memoryUsedBytes?: number;
  gpuTimeMs?: number;
  gameThreadMs?: number;
  renderThreadMs?: number;
};

/** One generated event as the SDK sends it; floats are exact float32 values. */
export type GenEvent = {
  tsUs: number;
  eventName: string;
  sessionId: string;
  playerId: string;
  buildId: string;
  mapId: string;
  platform: string;
  /** z defaults to 1 on the wire (the SDKs omit a position of 0,0,0). */
  pos?: { x: number; y: number; z?: number };
  perf?: Perf;
  /** The SDK's metrics map, e.g. mem.vram (bytes), io.read_bytes, load_time_ms. */
  metrics?: Record<string, number>;
  engineVersion?: string;
  /** Degrees, float32 values; absent when the SDK sent no camera. */
  camera?: { yaw: number; pitch: number };
  /** Our SDKs' device context (event field 22); absent for the engine SDKs, which send none. */
  device?: DeviceInit;
  /** The event's attributes (a `device_info` event carries the device's fields by name). */
  attributes?: Record<string, string>;
};

export type DeviceInit = { gpu?: string; deviceModel?: string; resolution?: string; osVersion?: string };

const GPUS = ["RTX 3060", "RTX 4070", "RX 6700", "Adreno 740"] as const;
const MODELS = ["Desktop", "Steam Deck", "Pixel 8"] as const;
const RESOLUTIONS = ["1920x1080", "2560x1440", "1280x800"] as const;
const OS_VERSIONS = ["Windows 11", "SteamOS 3.5", "Android 14"] as const;
const ENGINES = ["6000.0.23f1", "5.4.2", "4.3"] as const;

/**
 * The dataset with an engine version, a camera and (for two sessions in three) a device context on every
 * event, derived from the session and the event's own fields: no draw from the generator, so the events
 * and every other expectation stay as they were. One device field in five is left unsent.
 */
export function withDeviceContext(events: GenEvent[]): GenEvent[] {
  const hash = (s: string) => {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) {
      h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
    }
    return h;
  };
  return events.map((e, i) => {
    const h = hash(e.sessionId);
    const pick = <T>(xs: readonly T[], salt: number) => xs[(h >>> salt) % xs.length] as T;
    const device: DeviceInit | undefined =
      h % 3 === 0
        ? undefined
        : {
            gpu: pick(GPUS, 3),
            deviceModel: pick(MODELS, 7),
            ...((h >>> 11) % 5 === 0 ? {} : { resolution: pick(RESOLUTIONS, 13) }),
            osVersion: pick(OS_VERSIONS, 17),
          };
    return {
      ...e,
      engineVersion: pick(ENGINES, 5),
      ...(e.pos && i % 4 !== 3
        ? {
            camera: {
              yaw: Math.fround((e.tsUs % 3600) / 10),
              pitch: Math.fround((Math.floor(e.tsUs / 16) % 1800) / 10 - 90),
            },
          }
        : {}),
      ...(device ? { device } : {}),
    };
  });
}

export const FUNNEL_NAMES = ["match_start", "level_up", "match_end"] as const;
const OTHER_NAMES = ["session_start", "purchase", "ui_click", "frame_sample", "frame_sample"] as const;
const MAPS = ["dust", "harbor", ""] as const;
const BUILDS = ["1.0.0", "1.1.0", "1.2.0", ""] as const;
const PLATFORMS = ["windows", "ps5", "switch", ""] as const;
// Days (ago) on which nobody starts, so retention has empty cohorts inside the data.
const NO_COHORT_DAYS = new Set([5, 11, 17, 23]);
export const SOAK_BUILDS = 52;

/** sfc32: a small seeded generator, floats in [0, 1). */
export function rng(seed: number): () => number {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) {
    next();
  }
  return next;
}

export type Dataset = { anchorMs: number; events: GenEvent[] };

export function generateDataset(seed: number, anchorMs: number): Dataset {
  const r = rng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const f32 = (v: number) => Math.fround(v);
  const todayStartUs = Math.floor(anchorMs / DAY_MS) * DAY_MS * 1000;
  const anchorUs = anchorMs * 1000;
  // Ingest refuses anything older than 30 days at ingest time: stay 20 minutes clear of that edge.
  const oldestUs = anchorUs - 30 * DAY_US + 20 * 60_000_000;
  const events: GenEvent[] = [];

  const position = (): GenEvent["pos"] => {
    const roll = r();
    if (roll < 0.1) {
      return undefined;
    }
    if (roll < 0.2) {
      // On and next to cell edges, negative side included.
      return { x: pick([-25, -0.5, 0, 24.75, -50.25, 25]), y: pick([-5, -10, 0, 9.5, -0.25]) };
    }
    return { x: f32(int(-13000, 13000) / 100), y: f32(int(-13000, 13000) / 100) };
  };

  const perfOf = (name: string): Perf | undefined => {
    if (name === "frame_sample") {
      const p: Perf = { fps: f32(int(200, 1440) / 10), frameTimeMs: f32(int(40, 500) / 10) };
      if (r() < 0.7) {
        // Whole and fractional megabytes.
        p.memoryUsedBytes = int(1500, 6000) * 1_048_576 + (r() < 0.5 ? 0 : int(1, 1_048_575));
      }
      if (r() < 0.6) {
        p.gpuTimeMs = f32(int(20, 300) / 10);
      }
      return p;
    }
    if (name === "ui_click" && r() < 0.4) {
      // Thread times alone do not make an event performance-bearing.
      return { gameThreadMs: f32(int(10, 200) / 10), renderThreadMs: f32(int(10, 200) / 10) };
    }
    return name === "match_start" && r() < 0.5 ? { fps: f32(int(300, 900) / 10) } : undefined;
  };

  const session = (playerId: string, sessionId: string, startUs: number, n: number, ctx: SessionCtx) => {
    let ts = Math.max(startUs, oldestUs);
    for (let i = 0; i < n; i++) {
      const eventName = i === 0 ? "session_start" : r() < 0.45 ? pick(FUNNEL_NAMES) : pick(OTHER_NAMES);
      const perf = perfOf(eventName);
      const fpsOnlyRegion = eventName === "match_start" && perf;
      const pos = fpsOnlyRegion
        ? { x: f32(200 + int(0, 4900) / 100), y: f32(-int(0, 4900) / 100) }
        : position();
      events.push({
        tsUs: ts,
        eventName,
        sessionId,
        playerId,
        buildId: ctx.buildId,
        mapId: ctx.mapId,
        platform: ctx.platform,
        // fps-only samples get a region of their own, so those cells have no other metric. Heights
        // come from x and y (no draw from the generator, so the other fields stay as they were).
        pos: pos && { ...pos, z: f32((pos.x - pos.y) / 3) },
        perf,
        // VRAM (bytes) rides along with GPU time, whole and half megabytes; other events carry none.
        ...(perf?.gpuTimeMs === undefined
          ? {}
          : { metrics: { "mem.vram": Math.round(perf.gpuTimeMs * 10) * 1_048_576 + (ts % 2) * 524_288 } }),
      });
      // Strictly increasing per player: no two events of a player share a microsecond.
      ts += int(1, 900) * 1_000_000 + int(1, 999_999);
    }
  };

  type SessionCtx = { buildId: string; mapId: string; platform: string };
  for (let p = 0; p < 70; p++) {
    const anonymous = p >= 58;
    const playerId = anonymous ? "" : `player-${String(p).padStart(2, "0")}`;
    let cohortDaysAgo = 29 - (p % 30);
    while (NO_COHORT_DAYS.has(cohortDaysAgo)) {
      cohortDaysAgo--;
    }
    const ctx = { buildId: pick(BUILDS), mapId: pick(MAPS), platform: pick(PLATFORMS) };
    const days = new Set([cohortDaysAgo]);
    for (const gap of [1, 7, int(2, 12)]) {
      if (r() < 0.55 && cohortDaysAgo - gap >= 0) {
        days.add(cohortDaysAgo - gap);
      }
    }
    if (p % 9 === 0) {
      days.add(-1); // tomorrow: outside every window, inside the ingest's 48 hours
    }
    let s = 0;
    for (const daysAgo of [...days].sort((a, b) => b - a)) {
      // Some sessions start just before midnight and run over into the next day.
      // Tomorrow's sessions start early enough to end within the ingest's 48 hours.
      const startOffsetUs =
        daysAgo < 0
          ? int(0, 6) * HOUR_US
          : r() < 0.15
            ? DAY_US - int(5, 120) * 1_000_000
            : int(0, 22) * HOUR_US + int(0, 3599) * 1e6;
      const sessionId = `s-${p}-${s++}`;
      session(playerId, sessionId, todayStartUs - daysAgo * DAY_US + startOffsetUs, int(6, 30), ctx);
      if (anonymous) {
        break;
      }
    }
  }

  scriptedFunnels(events, todayStartUs - 2 * DAY_US + 10 * HOUR_US);
  soakBuilds(events, todayStartUs - 4 * DAY_US);
  return { anchorMs, events };
}

/** Players whose sequences pin the funnel edge cases down. */
export function scriptedFunnels(events: GenEvent[], t: number) {
  const scripted = (playerId: string, steps: Array<[string, number]>) => {
    for (const [eventName, offsetUs] of steps) {
      events.push({
        tsUs: t + offsetUs,
        eventName,
        sessionId: `s-${playerId}`,
        playerId,
        buildId: "1.0.0",
        mapId: "dust",
        platform: "windows",
      });
    }
  };
  const s = 1_000_000;
  // The last step exactly `window` (3600 s) after step 1 still counts; a microsecond later does not.
  scripted("fx-exact", [
    ["match_start", 0],
    ["level_up", 1000 * s],
    ["match_end", 3600 * s],
  ]);
  scripted("fx-late", [
    ["match_start", 0],
    ["level_up", 10 * s],
    ["match_end", 3600 * s + 1],
  ]);
  // A repeated step name needs a repeated event.
  scripted("fx-repeat", [
    ["match_start", 0],
    ["match_start", 60 * s],
    ["match_end", 120 * s],
  ]);
  scripted("fx-single", [
    ["match_start", 0],
    ["match_end", 60 * s],
  ]);
  // Steps out of order reach nothing beyond what their order allows.
  scripted("fx-reverse", [
    ["match_end", 0],
    ["level_up", 10 * s],
    ["match_start", 20 * s],
  ]);
}

/** More builds than the newest-50 list holds, one performance sample each, a minute apart. */
function soakBuilds(events: GenEvent[], t: number) {
  for (let i = 0; i < SOAK_BUILDS; i++) {
    events.push({
      tsUs: t + i * 60_000_000,
      eventName: "frame_sample",
      sessionId: "s-soak",
      playerId: "soak",
      buildId: `soak-${String(i).padStart(2, "0")}`,
      mapId: "harbor",
      platform: "windows",
      pos: { x: 10, y: 10 },
      perf: { fps: 60, frameTimeMs: 16.5 },
    });
  }
}
