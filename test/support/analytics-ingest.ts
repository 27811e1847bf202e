import { expect } from "vitest";
import type { GenEvent } from "./analytics-dataset.js";
import { batch, type EventInit } from "./batches.js";
import { insertsSettled } from "./events.js";
import type { Tenant } from "./harness.js";
import { type Auth, api, ingest } from "./http.js";
import type { OkBody } from "./schema.js";
import { waitFor } from "./wait.js";

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
    ...(e.attributes ? { attributes: e.attributes } : {}),
  };
}

async function totalEvents(t: Tenant): Promise<number> {
  const res = await api(`/v1/projects/${t.projectId}/status?fresh=1`, { key: t.keys.read.key });
  expect(res.status).toBe(200);
  return ((await res.json()) as OkBody<"/v1/projects/{id}/status">).data.kpis.totalEvents;
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
  const total = await waitFor(
    () => totalEvents(t),
    (n) => n >= before + events.length,
    { timeoutMs: 60_000, intervalMs: 250, message: "every event stored" },
  );
  expect(total).toBe(before + events.length);
  await insertsSettled();
}

/** A tenant whose reads through getData run at `now` (the request's clock, X-Test-Now). */
export type ClockedTenant = Tenant & { now?: number };

/**
 * The tenant, read at `now` from here on: a file that seeds data relative to one instant reads it at that
 * instant, however long the run takes and whichever midnight passes meanwhile.
 */
export function clocked(t: Tenant, now: number): ClockedTenant {
  return { ...t, now };
}

/**
 * The data of a successful analytics GET, with the tenant's read key unless `auth` names a key or token,
 * at `auth.now`, else the tenant's clock (clocked), else the real time.
 */
export async function getData<T>(t: ClockedTenant, path: string, auth: Auth = {}): Promise<T> {
  const at = { now: t.now, ...auth };
  const res = await api(
    `/v1/projects/${t.projectId}${path}`,
    auth.key || auth.token ? at : { ...at, key: t.keys.read.key },
  );
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return (JSON.parse(text) as { data: T }).data;
}
