/**
 * Realistic, seeded TelemetryBatch generator for benchmarks and load tests.
 *
 *   const { batch, gzipped, eventCount } = makeRealisticBatch(seed, nowUs, 126_000);
 *
 * Packs as many events as fit so that the gzip'd body (node:zlib gzipSync,
 * default level) is as close as possible to, but not above, targetGzipBytes
 * (capped at LIMITS.maxEvents events). Node only (uses node:zlib).
 */
import { gzipSync } from "node:zlib";
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import {
  type DeviceContext,
  DeviceContextSchema,
  TelemetryBatchSchema,
  type TelemetryEvent,
  TelemetryEventSchema,
} from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { LIMITS } from "../../workers/ingest/wire-scan.js";

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
const uuid = (rng: Rng): string => {
  const hex = "0123456789abcdef";
  let s = "";
  for (let i = 0; i < 32; i++) {
    s += hex[Math.floor(rng() * 16)];
    if (i === 7 || i === 11 || i === 15 || i === 19) {
      s += "-";
    }
  }
  return s;
};

const EVENT_NAMES = [
  "player_move",
  "player_move",
  "player_move",
  "frame_sample",
  "frame_sample",
  "item_pickup",
  "ability_used",
  "enemy_killed",
  "damage_taken",
  "player_death",
  "checkpoint_reached",
  "ui_click",
  "weapon_reload",
  "quest_progress",
] as const;
const MAPS = ["maps/desert_outpost", "maps/frozen_harbor", "maps/old_town"] as const;
const WEAPONS = ["rifle", "shotgun", "smg", "pistol", "sniper", "melee"] as const;
const ZONES = ["north_gate", "market", "docks", "bunker_b", "ridge", "spawn"] as const;
const ITEMS = ["medkit", "ammo_box", "armor_plate", "grenade", "keycard_red"] as const;
const DIFFICULTY = ["normal", "hard", "nightmare"] as const;

const PLATFORMS: readonly DeviceContext[] = [
  create(DeviceContextSchema, {
    platform: "windows",
    resolution: "2560x1440",
    buildConfig: "shipping",
    gpu: "NVIDIA GeForce RTX 4070 (driver 560.94)",
    storage: "nvme",
    cpu: "AMD Ryzen 7 7800X3D 8-Core Processor",
    osVersion: "Windows 11 Pro 23H2 (22631.4317)",
    deviceModel: "Custom PC",
    memoryTotalMb: 32768,
  }),
  create(DeviceContextSchema, {
    platform: "ps5",
    resolution: "3840x2160",
    buildConfig: "shipping",
    gpu: "AMD RDNA2 (PS5)",
    storage: "ssd",
    cpu: "AMD Zen 2 8-core",
    osVersion: "PS5 System Software 24.06-10.00.00",
    deviceModel: "CFI-1216A",
    memoryTotalMb: 16384,
  }),
  create(DeviceContextSchema, {
    platform: "steamdeck",
    resolution: "1280x800",
    buildConfig: "shipping",
    gpu: "AMD Custom GPU 0405 (RADV VANGOGH)",
    storage: "nvme",
    cpu: "AMD Custom APU 0405",
    osVersion: "SteamOS 3.6.19",
    deviceModel: "Jupiter",
    memoryTotalMb: 16384,
  }),
];

type Session = {
  sessionId: string;
  playerId: string;
  x: number;
  y: number;
  z: number;
  yaw: number;
  baseFps: number;
  memMb: number;
};

/** A stream of realistic events; deterministic for a given seed. */
function eventStream(seed: number, nowUs: number, device: DeviceContext): () => TelemetryEvent {
  const rng = mulberry32(seed);
  const nSessions = 2 + Math.floor(rng() * 3);
  const sessions: Session[] = [];
  for (let i = 0; i < nSessions; i++) {
    sessions.push({
      sessionId: uuid(rng),
      playerId: `player_${100000 + Math.floor(rng() * 900000)}`,
      x: rng() * 4000 - 2000,
      y: rng() * 4000 - 2000,
      z: 20 + rng() * 30,
      yaw: rng() * 360,
      baseFps: 50 + rng() * 90,
      memMb: 3000 + rng() * 3000,
    });
  }
  const buildId = `1.${40 + Math.floor(rng() * 5)}.${Math.floor(rng() * 10)}+cl${2_000_000 + Math.floor(rng() * 99_999)}`;
  const mapId = pick(rng, MAPS);
  // Start ~25 minutes ago; events advance 2..60 ms each.
  let ts = Math.round(nowUs - 25 * 60 * 1e6 - rng() * 60e6);

  return () => {
    ts += 2_000 + Math.floor(rng() * 58_000);
    const s = pick(rng, sessions);
    const name = pick(rng, EVENT_NAMES);
    // Random walk on the map plane.
    s.yaw = (s.yaw + gauss(rng) * 8 + 360) % 360;
    const step = rng() * 3;
    s.x = Math.max(-2048, Math.min(2048, s.x + Math.cos((s.yaw * Math.PI) / 180) * step));
    s.y = Math.max(-2048, Math.min(2048, s.y + Math.sin((s.yaw * Math.PI) / 180) * step));
    s.z = Math.max(0, s.z + gauss(rng) * 0.2);
    s.memMb += gauss(rng) * 2;

    const ev: MessageInitShape<typeof TelemetryEventSchema> = {
      timestampUs: BigInt(ts),
      eventName: name,
      sessionId: s.sessionId,
      playerId: s.playerId,
      buildId,
      mapId,
      position: { x: s.x, y: s.y, z: s.z },
    };
    if (rng() < 0.8) {
      ev.cameraPosition = {
        x: s.x - Math.cos((s.yaw * Math.PI) / 180) * 4,
        y: s.y - Math.sin((s.yaw * Math.PI) / 180) * 4,
        z: s.z + 1.8,
      };
      ev.cameraRotation = {
        x: -10 + gauss(rng) * 5,
        y: s.yaw,
        z: 0,
      };
    }
    if (name === "frame_sample" || rng() < 0.5) {
      const fps = Math.max(5, s.baseFps + gauss(rng) * 6);
      ev.perf = {
        fps,
        frameTimeMs: 1000 / fps,
        memoryMb: s.memMb,
        gpuTimeMs: Math.max(0.5, (1000 / fps) * (0.6 + rng() * 0.3)),
        cpuTimeMs: Math.max(0.5, (1000 / fps) * (0.4 + rng() * 0.4)),
      };
    }
    const properties: Record<string, string> = {};
    const metrics: Record<string, number> = {};
    switch (name) {
      case "enemy_killed":
      case "damage_taken":
        properties.weapon = pick(rng, WEAPONS);
        properties.zone = pick(rng, ZONES);
        metrics.damage = Math.round(rng() * 1500) / 10;
        metrics.health = Math.round(rng() * 100);
        metrics.distance_m = Math.round(rng() * 800) / 10;
        break;
      case "item_pickup":
        properties.item = pick(rng, ITEMS);
        properties.zone = pick(rng, ZONES);
        metrics.count = 1 + Math.floor(rng() * 5);
        break;
      case "ability_used":
      case "weapon_reload":
        properties.weapon = pick(rng, WEAPONS);
        metrics.ammo = Math.floor(rng() * 30);
        break;
      case "checkpoint_reached":
      case "quest_progress":
        properties.difficulty = pick(rng, DIFFICULTY);
        properties.checkpoint = `cp_${Math.floor(rng() * 40)}`;
        metrics.elapsed_s = Math.round(rng() * 36000) / 10;
        break;
      case "ui_click":
        properties.screen = pick(rng, ["inventory", "map", "settings", "store"]);
        properties.button = pick(rng, ["equip", "drop", "close", "buy", "back"]);
        break;
      default:
        if (rng() < 0.3) {
          properties.zone = pick(rng, ZONES);
        }
        if (rng() < 0.3) {
          metrics.speed = Math.round(step * 100) / 100;
        }
    }
    ev.properties = properties;
    ev.metrics = metrics;
    // Occasionally the event overrides part of the batch's device context.
    if (rng() < 0.05) {
      ev.device = create(DeviceContextSchema, {
        resolution: pick(rng, ["1920x1080", "2560x1440", "1280x720"]),
        buildConfig: device.buildConfig,
      });
    }
    return create(TelemetryEventSchema, ev);
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

/** Serialize header + the first n pre-encoded events (field 5, LEN), equal to toBinary of the whole batch. */
function assemble(header: Uint8Array, encodedEvents: readonly Uint8Array[], n: number): Uint8Array {
  let size = header.length;
  for (let i = 0; i < n; i++) {
    const e = encodedEvents[i] as Uint8Array;
    size += 1 + varintBytes(e.length).length + e.length;
  }
  const out = new Uint8Array(size);
  out.set(header, 0);
  let p = header.length;
  for (let i = 0; i < n; i++) {
    const e = encodedEvents[i] as Uint8Array;
    out[p++] = (5 << 3) | 2;
    for (const x of varintBytes(e.length)) {
      out[p++] = x;
    }
    out.set(e, p);
    p += e.length;
  }
  return out;
}

/**
 * Build a realistic maximal batch: as many events as fit so that gzipSync(batch)
 * is ≤ targetGzipBytes (and as close as possible), at most LIMITS.maxEvents.
 */
export function makeRealisticBatch(seed: number, nowUs: number, targetGzipBytes: number): RealisticBatch {
  const rng = mulberry32(seed ^ 0x9e3779b9);
  const device = pick(rng, PLATFORMS);
  const header = toBinary(
    TelemetryBatchSchema,
    create(TelemetryBatchSchema, {
      batchId: uuid(rng),
      sdkName: "telemetry-sdk-unreal",
      sdkVersion: `2.${Math.floor(rng() * 10)}.${Math.floor(rng() * 20)}`,
      device,
    }),
  );
  const next = eventStream(seed, nowUs, device);
  const encoded: Uint8Array[] = [];
  const gz = (n: number): Uint8Array => gzipSync(assemble(header, encoded, n));
  const ensure = (n: number): void => {
    while (encoded.length < n) {
      encoded.push(toBinary(TelemetryEventSchema, next()));
    }
  };

  // Estimate from a sample, then binary search the largest n that fits.
  const maxN = LIMITS.maxEvents;
  const fits = (n: number): boolean => gz(n).length <= targetGzipBytes;
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
  const batch = assemble(header, encoded, best);
  return { batch, gzipped: gzipSync(batch), eventCount: best };
}
