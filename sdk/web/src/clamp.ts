// Client-side clamps to the contract's bounds. Ingest refuses a whole batch for one field out of bounds,
// so one NaN coordinate or over-long attribute would otherwise lose every event sent with it.
import type { WireEvent } from "./encode.js";
import { LIMITS } from "./limits.js";

/** Attribute values as a game has them; numbers and booleans are sent as their text. */
export type AttributeValue = string | number | boolean;

export type Position = { x: number; y: number; z?: number } | readonly [number, number, number?];

/**
 * At most `max` UTF-16 code units (the unit ingest counts in), never ending on half a surrogate pair,
 * which would reach the wire as a replacement character.
 */
export function truncate(s: string | undefined | null, max: number): string {
  if (!s) {
    return "";
  }
  if (s.length <= max) {
    return s;
  }
  const code = s.charCodeAt(max - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** Within [min, max]; NaN and missing values are `fallback`. */
export function clampNumber(v: number | undefined, min: number, max: number, fallback = 0): number {
  if (v === undefined || Number.isNaN(v)) {
    return fallback;
  }
  return Math.min(max, Math.max(min, v));
}

/** A coordinate ingest accepts: finite (else 0) and |v| ≤ 1e9. */
export function coordinate(v: number | undefined): number {
  return Number.isFinite(v) ? clampNumber(v, -LIMITS.positionAbsMax, LIMITS.positionAbsMax) : 0;
}

export function position(p: Position | undefined): { x: number; y: number; z: number } | undefined {
  if (!p) {
    return undefined;
  }
  const [x, y, z] = Array.isArray(p)
    ? p
    : [(p as { x: number }).x, (p as { y: number }).y, (p as { z?: number }).z];
  return { x: coordinate(x), y: coordinate(y), z: coordinate(z ?? 0) };
}

/**
 * A camera pair ingest accepts: yaw wrapped into [0, 360), pitch within [-90, 90]; none when either is
 * not finite (the pair is both or neither).
 */
export function camera(yaw: number, pitch: number): { yaw: number; pitch: number } | undefined {
  if (!Number.isFinite(yaw) || !Number.isFinite(pitch)) {
    return undefined;
  }
  const max = LIMITS.cameraYawMaxExclusive;
  let y = ((yaw % max) + max) % max;
  // 359.99999 becomes 360 as a float32, which ingest refuses.
  if (Math.fround(y) >= max) {
    y = 0;
  }
  return { yaw: y, pitch: clampNumber(pitch, -LIMITS.cameraPitchAbsMax, LIMITS.cameraPitchAbsMax) };
}

/** At most 50 entries with non-empty keys ≤ 64 units and values ≤ 512 units. */
export function attributes(a: Record<string, AttributeValue> | undefined): [string, string][] {
  const out: [string, string][] = [];
  const { maxEntries, keyMaxUnits, valueMaxUnits } = LIMITS.attributes;
  for (const [k, v] of Object.entries(a ?? {})) {
    if (out.length >= maxEntries) {
      break;
    }
    if (k && v !== undefined && v !== null) {
      out.push([truncate(k, keyMaxUnits), truncate(String(v), valueMaxUnits)]);
    }
  }
  return out;
}

/** At most 50 entries with non-empty keys ≤ 64 units; a value that is not a finite number is left out. */
export function metrics(m: Record<string, number> | undefined): [string, number][] {
  const out: [string, number][] = [];
  const { maxEntries, keyMaxUnits } = LIMITS.metrics;
  for (const [k, v] of Object.entries(m ?? {})) {
    if (out.length >= maxEntries) {
      break;
    }
    if (k && typeof v === "number" && Number.isFinite(v)) {
      out.push([truncate(k, keyMaxUnits), v]);
    }
  }
  return out;
}

/** Every field of an event within the contract's bounds. */
export function clampEvent(e: WireEvent): WireEvent {
  const s = LIMITS.event;
  const out: WireEvent = {
    name: truncate(e.name, s.event_name),
    timestampUs: Math.max(0, Math.round(e.timestampUs)),
    sessionId: truncate(e.sessionId, s.session_id),
    playerId: truncate(e.playerId, s.player_id),
    mapId: truncate(e.mapId, s.map_id),
    buildId: truncate(e.buildId, s.build_id),
    platform: truncate(e.platform, s.platform),
    engineVersion: truncate(e.engineVersion, s.engine_version),
    fps: clampNumber(e.fps, 0, LIMITS.fpsMax),
    frameTimeMs: clampNumber(e.frameTimeMs, 0, LIMITS.timeMsMax),
    gpuTimeMs: clampNumber(e.gpuTimeMs, 0, LIMITS.timeMsMax),
    memoryUsedBytes: Math.round(clampNumber(e.memoryUsedBytes, 0, LIMITS.memoryUsedBytesMax)),
  };
  if (e.position) {
    out.position = position(e.position);
  }
  if (e.camera) {
    out.camera = camera(e.camera.yaw, e.camera.pitch);
  }
  if (e.attributes?.length) {
    out.attributes = attributes(Object.fromEntries(e.attributes));
  }
  if (e.metrics?.length) {
    out.metrics = metrics(Object.fromEntries(e.metrics));
  }
  if (e.source) {
    out.source = e.source;
  }
  return out;
}
