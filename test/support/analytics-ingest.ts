import { expect } from "vitest";
import type { GenEvent } from "./analytics-dataset.js";
import { batch, type EventInit } from "./batches.js";
import { insertsSettled } from "./events.js";
import type { Tenant } from "./harness.js";
import { api, ingest } from "./http.js";

const EVENTS_PER_BATCH = 500;

/** As the SDKs send it: no position when there is none, 0 for every performance field not collected. */
export function toWire(e: GenEvent): EventInit {
  const p = e.perf ?? {};
  return {
    timestampUs: BigInt(e.tsUs),
    eventName: e.eventName,
    sessionId: e.sessionId,
    playerId: e.playerId,
    buildId: e.buildId,
    mapId: e.mapId,
    platform: e.platform,
    ...(e.pos ? { position: { x: e.pos.x, y: e.pos.y, z: e.pos.z ?? 1 } } : {}),
    metrics: e.metrics ?? {},
    fps: p.fps ?? 0,
    frameTimeMs: p.frameTimeMs ?? 0,
    memoryUsedBytes: BigInt(p.memoryUsedBytes ?? 0),
    gpuTimeMs: p.gpuTimeMs ?? 0,
    gameThreadMs: p.gameThreadMs ?? 0,
    renderThreadMs: p.renderThreadMs ?? 0,
    ...(e.engineVersion ? { engineVersion: e.engineVersion } : {}),
    ...(e.camera ? { cameraYaw: e.camera.yaw, cameraPitch: e.camera.pitch } : {}),
    ...(e.device ? { device: e.device } : {}),
  };
}

async function totalEvents(t: Tenant): Promise<number> {
  const res = await api(`/v1/projects/${t.projectId}/status?fresh=1`, { key: t.keys.read.key });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { kpis: { totalEvents: number } } }).data.kpis.totalEvents;
}

/**
 * Sends the events through the real ingest endpoint, batched as an SDK batches them, and waits until
 * the queue consumer has written all of them.
 */
export async function ingestAll(t: Tenant, events: GenEvent[]): Promise<void> {
  const before = await totalEvents(t);
  for (let i = 0; i < events.length; i += EVENTS_PER_BATCH) {
    const body = batch(events.slice(i, i + EVENTS_PER_BATCH).map(toWire));
    const res = await ingest(body, t.keys.ingest.key);
    expect(res.status, await res.clone().text()).toBe(202);
  }
  const deadline = Date.now() + 60_000;
  let total = before;
  while (total < before + events.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    total = await totalEvents(t);
  }
  expect(total).toBe(before + events.length);
  await insertsSettled();
}

/** The data of a successful analytics GET. */
export async function getData<T>(
  t: Tenant,
  path: string,
  auth: { key?: string; token?: string } = {},
): Promise<T> {
  const res = await api(
    `/v1/projects/${t.projectId}${path}`,
    auth.key || auth.token ? auth : { key: t.keys.read.key },
  );
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return (JSON.parse(text) as { data: T }).data;
}

export const MIDNIGHT_GUARD_MINUTES = 4;
/** The longest awayFromMidnight(MIDNIGHT_GUARD_MINUTES) may wait: add it to a hook's timeout. */
export const MIDNIGHT_GUARD_MS = MIDNIGHT_GUARD_MINUTES * 60_000 + 2000;

/** Runs after the next UTC midnight if that is only minutes away, so one test never spans two days. */
export async function awayFromMidnight(minutes: number): Promise<void> {
  const msToMidnight = 86_400_000 - (Date.now() % 86_400_000);
  if (msToMidnight < minutes * 60_000) {
    await new Promise((r) => setTimeout(r, msToMidnight + 2000));
  }
}
