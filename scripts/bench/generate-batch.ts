/**
 * Realistic, seeded TelemetryBatch generator for benchmarks and load tests, shaped like what the
 * engine SDKs (Unity, UE5, Godot) send, and like a game's sessions (the shape of the bench's ClickHouse
 * generator, analytics-data.ts): a batch is one device's events, one player's sessions one after the
 * other (a batch of up to 300 events is one session or the start of one), each of 30–300 events, on one
 * platform, engine and build. Every event carries the SDK's per-frame sample (fps, frame_time_ms,
 * memory_used_bytes in bytes, gpu_time_ms, game/render thread times) and the build_id / platform /
 * engine_version / session / player stamps; `session_start` and the `perf_heartbeat` every 10 s (every
 * other event) are automated events without a position (heartbeats carry the mem.* and io.* metrics);
 * a session visits 1–3 maps in order, each opened by `map_load` (attributes.map_name,
 * metrics.load_time_ms) and played from `match_start` to `match_end`; gameplay events carry a position
 * walking a smooth path over the map, the camera yaw along it and a pitch (quantised to 0.01 degrees as
 * the SDKs pack them), and a few attributes and metrics. No device context (field 22 / batch field 2):
 * the SDKs never send one.
 *
 *   const { batch, gzipped, eventCount } = makeRealisticBatch(seed, nowUs, 126_000);
 *
 * Packs as many events as fit so that the gzip'd body (node:zlib gzipSync, default level) is as
 * close as possible to, but not above, targetGzipBytes (capped at LIMITS.maxEvents events and
 * LIMITS.maxDecodedEntries entries). Node only (uses node:zlib).
 */
import { gzipSync } from "node:zlib";
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { GameTelemetryEventSchema, TelemetrySource } from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { LIMITS } from "../../workers/shared/telemetry/limits.js";

export type RealisticBatch = {
  /** Serialized TelemetryBatch (what the Worker sees after decompression). */
  batch: Uint8Array;
  /** gzipSync(batch): the request body as sent. */
  gzipped: Uint8Array;
  eventCount: number;
};

/** mulberry32: small, fast, seeded PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)] as T;
const gauss = (rng: Rng): number => {
  // Box-Muller
  const u = 1 - rng();
  const v = rng();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
};
const hex = (rng: Rng, n: number): string => {
  let s = "";
  for (let i = 0; i < n; i++) {
    s += "0123456789abcdef"[Math.floor(rng() * 16)];
  }
  return s;
};
/** A UUIDv7-shaped session id (the SDKs mint v7 ids: millisecond time first). */
const uuidV7 = (rng: Rng, ms: number): string => {
  const t = Math.floor(ms).toString(16).padStart(12, "0");
  return `${t.slice(0, 8)}-${t.slice(8)}-7${hex(rng, 3)}-${"89ab"[Math.floor(rng() * 4)]}${hex(rng, 3)}-${hex(rng, 12)}`;
};

/** One engine's stamps, as its SDK sends them. */
const ENGINES = [
  { platform: "WindowsPlayer", engineVersion: "6000.0.23f1" }, // Unity
  { platform: "Windows", engineVersion: "5.4.4-37670630+++UE5+Release-5.4" }, // UE5
  { platform: "Windows", engineVersion: "4.3.stable.mono.official.77dcf97d8" }, // Godot
  { platform: "PS5", engineVersion: "5.4.4-37670630+++UE5+Release-5.4" },
  { platform: "LinuxPlayer", engineVersion: "6000.0.23f1" },
] as const;

const GAMEPLAY = [
  "player_move",
  "player_move",
  "item_pickup",
  "ability_used",
  "enemy_killed",
  "damage_taken",
  "player_death",
  "checkpoint_reached",
  "weapon_reload",
  "quest_progress",
] as const;
const MAPS = ["maps/desert_outpost", "maps/frozen_harbor", "maps/old_town"] as const;
const MAP_NAMES = {
  "maps/desert_outpost": "Desert Outpost",
  "maps/frozen_harbor": "Frozen Harbor",
  "maps/old_town": "Old Town",
} as const;
const WEAPONS = ["rifle", "shotgun", "smg", "pistol", "sniper", "melee"] as const;
const ZONES = ["north_gate", "market", "docks", "bunker_b", "ridge", "spawn"] as const;
const ITEMS = ["medkit", "ammo_box", "armor_plate", "grenade", "keycard_red"] as const;
const DIFFICULTY = ["normal", "hard", "nightmare"] as const;

type EventInit = MessageInitShape<typeof GameTelemetryEventSchema>;

const MiB = 1024 * 1024;
/** Heartbeat period of the SDKs (10 s): every other event of a session, as in analytics-data.ts. */
const HEARTBEAT_US = 10_000_000;
/** Quantise to 0.01 as the SDKs' camera snapshot does. */
const q01 = (v: number): number => Math.round(v * 100) / 100;

/** Events of a session: Pareto from 30 with mean 37, capped at 300 (analytics-data.ts, SESSION_EVENTS). */
const sessionLength = (rng: Rng): number => Math.min(300, Math.floor(30 / (1 - rng()) ** (1 / 5.9)));

/**
 * A stream of SDK-shaped events, deterministic for a given seed: one player's sessions one after the
 * other on one device (one platform, engine, build, GPU: what one SDK install flushes), each of 30–300
 * events. A session opens with `session_start`, spends 1–3 events in the menu, then walks 1–3 maps in
 * order (`map_load`, `match_start`, gameplay, `match_end` on each); `perf_heartbeat` is every other
 * event, 10 s apart, and the gameplay events between them walk a smooth path over the map.
 */
function eventStream(seed: number, nowUs: number, events: number): () => EventInit {
  const rng = mulberry32(seed);
  const engine = pick(rng, ENGINES);
  const buildId = `1.${40 + Math.floor(rng() * 5)}.${Math.floor(rng() * 10)}+cl${2_000_000 + Math.floor(rng() * 99_999)}`;
  const playerId = rng() < 0.99 ? `player_${100000 + Math.floor(rng() * 900000)}` : "";
  // The device's own level: its GPU's frame rate and memory.
  const baseFps = 50 + rng() * 90;
  const vramBytes = (2000 + rng() * 4000) * MiB;
  const memBase = (3000 + rng() * 3000) * MiB;
  // A session's event is 5 s after the one before it (gameplay jittered within), sessions a few minutes
  // apart: about 15 s of play per event. The stream starts that long before now (a backlog of `events`
  // ends about now, inside the ingest's 30-day window) and at least ~25 minutes ago.
  let slotUs = Math.round(nowUs - Math.max(25 * 60, events * 16) * 1e6 - rng() * 60e6);
  let sessionId = "";
  let length = 0;
  let i = 0;
  let menu = 0;
  let maps: Array<(typeof MAPS)[number]> = [];
  let segments: number[] = [];
  let sessionFps = baseFps;
  let memBytes = memBase;
  let readBytes = 0;
  let walk = { ax: 1, ay: 1, phx: 0, phy: 0 };
  const newSession = () => {
    // The next session starts a few minutes after the last one ended.
    slotUs += Math.round((60 + rng() * 600) * 1e6);
    sessionId = uuidV7(rng, slotUs / 1000);
    length = sessionLength(rng);
    i = 0;
    menu = 1 + Math.floor(rng() * 3);
    const n = rng() < 0.5 ? 1 : rng() < 0.7 ? 2 : 3;
    const first = Math.floor(rng() * MAPS.length);
    maps = Array.from({ length: n }, (_, k) => MAPS[(first + k) % MAPS.length] as (typeof MAPS)[number]);
    // Segment starts (event positions) of the maps, in order.
    segments = maps.map((_, k) => menu + Math.ceil((k * (length - menu)) / n));
    sessionFps = baseFps * (0.85 + rng() * 0.3);
    memBytes = memBase;
  };
  newSession();

  return () => {
    if (i >= length) {
      newSession();
    }
    const at = i;
    i += 1;
    const ts = slotUs + at * (HEARTBEAT_US / 2) + (at % 2 === 1 ? Math.floor(rng() * (HEARTBEAT_US / 2)) : 0);
    if (i >= length) {
      slotUs += length * (HEARTBEAT_US / 2);
    }
    memBytes = Math.max(512 * MiB, memBytes + gauss(rng) * 2 * MiB);
    const fps = Math.min(LIMITS.fpsMax, Math.max(5, sessionFps + gauss(rng) * 6));
    const frame = 1000 / fps;
    // The per-frame sample every SDK event carries.
    const ev: EventInit = {
      timestampUs: BigInt(ts),
      sessionId,
      playerId,
      fps,
      frameTimeMs: frame,
      memoryUsedBytes: BigInt(Math.round(memBytes)),
      gpuTimeMs: frame * (0.6 + rng() * 0.3),
      gameThreadMs: frame * (0.4 + rng() * 0.4),
      renderThreadMs: frame * (0.5 + rng() * 0.3),
      buildId,
      platform: engine.platform,
      engineVersion: engine.engineVersion,
    };
    if (at === 0) {
      return { ...ev, eventName: "session_start", source: TelemetrySource.AUTOMATED };
    }
    const heartbeat = (): EventInit => {
      const reads = Math.floor(rng() * 40);
      readBytes = reads * Math.floor(4096 + rng() * 65536);
      return {
        ...ev,
        eventName: "perf_heartbeat",
        source: TelemetrySource.AUTOMATED,
        metrics: {
          "mem.vram": Math.round(vramBytes),
          "mem.heap": Math.round(memBytes * 0.4),
          "io.read_bytes": readBytes,
          "io.read_time_ms": Math.round(reads * rng() * 300) / 100,
          "io.read_ops": reads,
        },
      };
    };
    if (at < menu) {
      return at % 2 === 0
        ? heartbeat()
        : { ...ev, eventName: "ui_click", source: TelemetrySource.PLAYER, attributes: { zone: "menu" } };
    }
    let seg = 0;
    while (seg + 1 < segments.length && at >= (segments[seg + 1] as number)) {
      seg += 1;
    }
    const mapId = maps[seg] as (typeof MAPS)[number];
    const start = segments[seg] as number;
    const end = (seg + 1 < segments.length ? (segments[seg + 1] as number) : length) - 1;
    if (at === start) {
      walk = { ax: 0.5 + rng(), ay: 0.5 + rng(), phx: rng() * 2 * Math.PI, phy: rng() * 2 * Math.PI };
      return {
        ...ev,
        eventName: "map_load",
        source: TelemetrySource.PLAYER,
        attributes: { map_name: MAP_NAMES[mapId] },
        metrics: { load_time_ms: Math.round(800 + rng() * 6000) },
      };
    }
    if (at % 2 === 0 && at !== start + 1 && at !== end) {
      return heartbeat();
    }
    // Gameplay: a smooth walk (a Lissajous path) over the map plane, the camera along it.
    const tau = (at - start) * 0.04;
    const x = 1900 * Math.sin(walk.ax * tau + walk.phx);
    const y = 1900 * Math.sin(walk.ay * tau + walk.phy);
    const z = 20 + 8 * Math.sin(x / 90) * Math.cos(y / 70);
    const yawDeg =
      ((Math.atan2(
        walk.ay * Math.cos(walk.ay * tau + walk.phy),
        walk.ax * Math.cos(walk.ax * tau + walk.phx),
      ) *
        180) /
        Math.PI +
        360) %
      360;
    const name = at === start + 1 ? "match_start" : at === end ? "match_end" : pick(rng, GAMEPLAY);
    const attributes: Record<string, string> = {};
    const metrics: Record<string, number> = {};
    switch (name) {
      case "enemy_killed":
      case "damage_taken":
        attributes.weapon = pick(rng, WEAPONS);
        attributes.zone = pick(rng, ZONES);
        metrics.damage = Math.round(rng() * 1500) / 10;
        metrics.health = Math.round(rng() * 100);
        metrics.distance_m = Math.round(rng() * 800) / 10;
        break;
      case "item_pickup":
        attributes.item = pick(rng, ITEMS);
        attributes.zone = pick(rng, ZONES);
        metrics.count = 1 + Math.floor(rng() * 5);
        break;
      case "ability_used":
      case "weapon_reload":
        attributes.weapon = pick(rng, WEAPONS);
        metrics.ammo = Math.floor(rng() * 30);
        break;
      case "checkpoint_reached":
      case "quest_progress":
      case "match_start":
      case "match_end":
        attributes.difficulty = pick(rng, DIFFICULTY);
        attributes.checkpoint = `cp_${Math.floor(rng() * 40)}`;
        metrics.elapsed_s = Math.round(rng() * 36000) / 10;
        break;
      default:
        if (rng() < 0.3) {
          attributes.zone = pick(rng, ZONES);
        }
        if (rng() < 0.3) {
          metrics.speed = Math.round(rng() * 300) / 100;
        }
    }
    const yaw = q01(yawDeg);
    return {
      ...ev,
      eventName: name,
      source: TelemetrySource.PLAYER,
      mapId,
      position: { x, y, z },
      cameraYaw: yaw >= 360 ? 0 : yaw,
      cameraPitch: q01(gauss(rng) * 10),
      attributes,
      metrics,
    };
  };
}

function varintBytes(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

/** Serialize the first n pre-encoded events as TelemetryBatch.events (field 1, LEN), equal to toBinary of the batch. */
function assemble(encodedEvents: readonly Uint8Array[], n: number): Uint8Array {
  let size = 0;
  for (let i = 0; i < n; i++) {
    const e = encodedEvents[i] as Uint8Array;
    size += 1 + varintBytes(e.length).length + e.length;
  }
  const out = new Uint8Array(size);
  let p = 0;
  for (let i = 0; i < n; i++) {
    const e = encodedEvents[i] as Uint8Array;
    out[p++] = (1 << 3) | 2;
    for (const x of varintBytes(e.length)) {
      out[p++] = x;
    }
    out.set(e, p);
    p += e.length;
  }
  return out;
}

/**
 * A batch of the first `eventCount` events of the stream for `seed`, shrunk until its gzip'd body fits
 * `maxGzipBytes` (the ingest limit): what an SDK sends when it flushes that many events.
 */
export function makeSdkBatch(
  seed: number,
  nowUs: number,
  eventCount: number,
  maxGzipBytes: number = LIMITS.maxCompressedBytes,
): RealisticBatch {
  const next = eventStream(seed, nowUs, eventCount);
  const encoded = Array.from({ length: Math.min(eventCount, LIMITS.maxEvents) }, () =>
    toBinary(GameTelemetryEventSchema, create(GameTelemetryEventSchema, next())),
  );
  let n = encoded.length;
  for (;;) {
    const batch = assemble(encoded, n);
    const gzipped = gzipSync(batch);
    if (gzipped.length <= maxGzipBytes || n === 1) {
      return { batch, gzipped, eventCount: n };
    }
    n = Math.max(1, Math.floor((n * maxGzipBytes) / gzipped.length) - 1);
  }
}

/**
 * Build a realistic maximal batch: as many events as fit so that gzipSync(batch) is ≤
 * targetGzipBytes (and as close as possible), at most LIMITS.maxEvents events and
 * LIMITS.maxDecodedEntries decoded entries.
 */
export function makeRealisticBatch(seed: number, nowUs: number, targetGzipBytes: number): RealisticBatch {
  const next = eventStream(seed, nowUs, LIMITS.maxEvents);
  const encoded: Uint8Array[] = [];
  /** entriesUpTo[n] = decoded entries of the first n events. */
  const entriesUpTo: number[] = [0];
  const gz = (n: number): Uint8Array => gzipSync(assemble(encoded, n));
  const ensure = (n: number): void => {
    while (encoded.length < n) {
      const ev = next();
      const entries = 1 + Object.keys(ev.attributes ?? {}).length + Object.keys(ev.metrics ?? {}).length;
      entriesUpTo.push((entriesUpTo[entriesUpTo.length - 1] as number) + entries);
      encoded.push(toBinary(GameTelemetryEventSchema, create(GameTelemetryEventSchema, ev)));
    }
  };

  // Estimate from a sample, then binary search the largest n that fits.
  const maxN = LIMITS.maxEvents;
  const fits = (n: number): boolean =>
    (entriesUpTo[n] as number) <= LIMITS.maxDecodedEntries && gz(n).length <= targetGzipBytes;
  ensure(Math.min(500, maxN));
  const guess = Math.max(1, Math.floor((encoded.length * targetGzipBytes) / gz(encoded.length).length));
  let hi = Math.min(maxN, Math.ceil(guess * 1.1) + 1);
  ensure(hi);
  while (hi < maxN && fits(hi)) {
    hi = Math.min(maxN, hi * 2);
    ensure(hi);
  }
  let best: number;
  if (fits(hi)) {
    best = hi; // capped by LIMITS.maxEvents
  } else {
    let lo = 0; // invariant: lo fits (0 trivially), hi does not
    let mid = Math.min(guess, hi - 1);
    while (hi - lo > 1) {
      if (fits(mid)) {
        lo = mid;
      } else {
        hi = mid;
      }
      mid = (lo + hi) >>> 1;
    }
    best = lo;
    // gzip size is not strictly monotonic in n: try a few more events.
    const top = Math.min(maxN, lo + 8);
    ensure(top);
    for (let n = lo + 1; n <= top; n++) {
      if (fits(n)) {
        best = n;
      }
    }
  }
  const batch = assemble(encoded, best);
  return { batch, gzipped: gzipSync(batch), eventCount: best };
}
