import { describe, expect, it } from "vitest";
import {
  type CellScope,
  cellMeans,
  judgeScope,
  type ProfileFilters,
} from "../../workers/api/alerts/cells.js";
import { windowOf } from "../../workers/api/window.js";
import { batch, event, perf } from "../support/batches.js";
import { insertsSettled, storedCount, testClickHouse } from "../support/events.js";
import { once, seedTenant, type Tenant } from "../support/harness.js";
import { api, ingest } from "../support/http.js";
import { waitFor } from "../support/wait.js";

// The engine SDKs' hardware context (docs/ingest.md, "Hardware context from the engine SDKs"): a
// session's `device_info` event, sent after its heartbeats, names the device of every sample of that
// session for the threshold profiles' device filters (alert cells at both cell-size paths), the cell
// drill-down's breakdowns, worst sessions and repro; the web SDK's device message wins where both exist.

const MAP = "device-arena";
const DAYS = 3;
/** fps below the profile's warn mark everywhere: every cell with a sample fails. */
const FPS = 12;
const WARN = 30;

type Arena = { t: Tenant; now: number };

const ENGINE_DEVICE = {
  gpu: "RTX 3060",
  device_model: "Desktop PC",
  resolution: "2560x1440",
  os_version: "Windows 11 (10.0.22631)",
  cpu: "AMD Ryzen 7 5800X",
  memory_total_mb: "32768",
  build_config: "development",
  storage: "nvme",
};

/** The Track(...) line of docs/ingest.md, as the SDKs send it: no position, map or performance. */
function deviceInfo(sessionId: string, secondsAgo: number, attributes: Record<string, string>) {
  return event(
    0,
    {
      eventName: "device_info",
      sessionId,
      playerId: `${sessionId}-player`,
      mapId: "",
      position: undefined,
      ...perf(),
      attributes,
      metrics: {},
    },
    secondsAgo,
  );
}

/** A positioned heartbeat of `sessionId` in the cell at (x, y), FPS, `secondsAgo`. */
function sample(sessionId: string, i: number, x: number, y: number, secondsAgo: number) {
  return event(
    i,
    {
      eventName: "frame_sample",
      sessionId,
      playerId: `${sessionId}-player`,
      mapId: MAP,
      position: { x: x + (i % 4), y: y + (i % 3), z: 0 },
      ...perf({ fps: FPS, frameTimeMs: 1000 / FPS }),
      attributes: {},
      metrics: {},
    },
    secondsAgo,
  );
}

async function send(a: Arena, events: ReturnType<typeof event>[], device?: Record<string, string>) {
  const before = await storedCount(a.t.projectId);
  const res = await ingest(batch(events, device ? { device } : {}), a.t.keys.ingest.key);
  expect(res.status).toBe(202);
  await waitFor(
    () => storedCount(a.t.projectId),
    (n) => n >= before + events.length,
    { intervalMs: 200, message: `${before + events.length} events of ${a.t.projectId}` },
  );
  await insertsSettled();
}

// Cells of 10 (events path) and 25 (rollup path): A at (100, 100) the engine session that sends its
// device_info last; B at (200, 100) another engine session with another GPU; C at (300, 100) a web
// session whose device message says RTX 4090 and whose (wrong) device_info says RTX 3060.
const A = { x: 100, y: 100 };
const B = { x: 200, y: 100 };
const C = { x: 300, y: 100 };

function scope(a: Arena, cellSize: number, filters: Partial<ProfileFilters>): CellScope {
  return {
    projectId: a.t.projectId,
    mapId: MAP,
    window: windowOf(DAYS, a.now),
    cellSize,
    filters: { platform: null, resolution: null, buildConfig: null, gpu: null, storage: null, ...filters },
  };
}

const cellsOf = async (a: Arena, cellSize: number, filters: Partial<ProfileFilters>) =>
  (await cellMeans(testClickHouse(), scope(a, cellSize, filters)))
    .map((c) => `${c.x},${c.y}:${c.samples.fps}`)
    .sort();

/** Heartbeats first (stored and checked unmatched), then the late device_info and one more heartbeat. */
const arena = once(async (): Promise<Arena & { before: Record<string, string[]> }> => {
  const t = await seedTenant("studio", "Device Info Studio");
  const a = { t, now: Date.now() };
  // Engine sessions: no device message. 12 samples each, 20 to 8 minutes ago.
  await send(a, [
    ...Array.from({ length: 12 }, (_, i) => sample("eng-a", i, A.x, A.y, 1200 - i * 60)),
    ...Array.from({ length: 6 }, (_, i) => sample("eng-b", i, B.x, B.y, 1200 - i * 60)),
    deviceInfo("eng-b", 1300, { ...ENGINE_DEVICE, gpu: "Radeon 780M", resolution: "1920x1080" }),
  ]);
  // The web session: the batch's device message, and a device_info of its own that must lose.
  await send(
    a,
    [
      ...Array.from({ length: 5 }, (_, i) => sample("web-c", i, C.x, C.y, 900 - i * 60)),
      deviceInfo("web-c", 950, ENGINE_DEVICE),
    ],
    { gpu: "RTX 4090", resolution: "3840x2160", deviceModel: "", buildConfig: "release", storage: "ssd" },
  );
  const before = {
    rtx3060at10: await cellsOf(a, 10, { gpu: "RTX 3060" }),
    rtx3060at25: await cellsOf(a, 25, { gpu: "RTX 3060" }),
  };
  // eng-a's device_info comes after its heartbeats (it is sent later and stamped later), then one more.
  await send(a, [deviceInfo("eng-a", 300, ENGINE_DEVICE), sample("eng-a", 12, A.x, A.y, 240)]);
  return { ...a, before };
});

describe("device_info attached to a session's samples", () => {
  it("matches no gpu filter before the device_info arrives", async () => {
    const a = await arena();
    // Only B (its device_info came with its samples) and C (the web SDK's RTX 4090 wins) are known.
    expect(a.before.rtx3060at10).toEqual([]);
    expect(a.before.rtx3060at25).toEqual([]);
  });

  it("a gpu-filtered profile's cells hold the session's earlier samples, at both cell-size paths", async () => {
    const a = await arena();
    // Every one of eng-a's 13 samples, the 12 that came before its device_info included; not C, whose
    // device message says RTX 4090.
    expect(await cellsOf(a, 10, { gpu: "RTX 3060" })).toEqual([`${A.x},${A.y}:13`]);
    expect(await cellsOf(a, 25, { gpu: "RTX 3060" })).toEqual([`${A.x},${A.y}:13`]);
    expect(
      await cellsOf(a, 25, {
        gpu: "RTX 3060",
        resolution: "2560x1440",
        storage: "nvme",
        buildConfig: "development",
      }),
    ).toEqual([`${A.x},${A.y}:13`]);
    expect(await cellsOf(a, 10, { gpu: "Radeon 780M" })).toEqual([`${B.x},${B.y}:6`]);
    // The web SDK's device message wins, field by field, over the session's device_info.
    expect(await cellsOf(a, 10, { gpu: "RTX 4090", resolution: "3840x2160" })).toEqual([`${C.x},${C.y}:5`]);
    expect(await cellsOf(a, 25, { gpu: "RTX 4090", storage: "ssd" })).toEqual([`${C.x},${C.y}:5`]);
    expect(await cellsOf(a, 25, { storage: "nvme" })).toEqual([`${A.x},${A.y}:13`, `${B.x},${B.y}:6`]);
    // Unfiltered: every cell, from the rollup as before.
    expect(await cellsOf(a, 25, {})).toEqual([`${A.x},${A.y}:13`, `${B.x},${B.y}:6`, `${C.x},${C.y}:5`]);
  });

  it("the alert judgement of a gpu profile counts and ranks the engine session's cell", async () => {
    const a = await arena();
    for (const cellSize of [10, 25]) {
      const judged = await judgeScope(testClickHouse(), {
        ...scope(a, cellSize, { gpu: "RTX 3060" }),
        metric: "fps",
        threshold: WARN,
      });
      expect(judged.failCount).toBe(1);
      expect(judged.totalCount).toBe(1);
      expect(judged.worst).toHaveLength(1);
      expect(judged.worst[0]).toMatchObject({ x: A.x, y: A.y, cellSize, samples: 13, failingShare: 1 });
      expect(judged.worst[0]?.value).toBeCloseTo(FPS, 4);
    }
  });

  it("the cell drill-down's breakdowns, worst sessions and repro name the device_info's hardware", async () => {
    const a = await arena();
    const cell = async (at: { x: number; y: number }) => {
      const res = await api(
        `/v1/projects/${a.t.projectId}/heatmap/cell?mapId=${MAP}&cellSize=25&x=${at.x}&y=${at.y}&days=7&metric=frame_time`,
        { key: a.t.keys.read.key, now: a.now },
      );
      expect(res.status).toBe(200);
      return (
        (await res.json()) as {
          data: {
            samples: number;
            breakdowns: Record<string, Array<{ key: string | null; samples: number }>>;
            worstSessions: Array<{ sessionId: string; device: Record<string, string | null> | null }>;
            repro: { device: Record<string, string | null> | null };
          };
        }
      ).data;
    };
    const engine = await cell(A);
    expect(engine.samples).toBe(13);
    expect(engine.breakdowns.gpu).toEqual([expect.objectContaining({ key: "RTX 3060", samples: 13 })]);
    expect(engine.breakdowns.resolution).toEqual([
      expect.objectContaining({ key: "2560x1440", samples: 13 }),
    ]);
    expect(engine.breakdowns.device_model).toEqual([
      expect.objectContaining({ key: "Desktop PC", samples: 13 }),
    ]);
    expect(engine.breakdowns.os_version).toEqual([
      expect.objectContaining({ key: "Windows 11 (10.0.22631)", samples: 13 }),
    ]);
    const device = {
      gpu: "RTX 3060",
      deviceModel: "Desktop PC",
      resolution: "2560x1440",
      osVersion: "Windows 11 (10.0.22631)",
    };
    expect(engine.worstSessions.map((s) => [s.sessionId, s.device])).toEqual([["eng-a", device]]);
    expect(engine.repro.device).toEqual(device);

    // The web session: its device message wins field by field; device_model it did not send comes from
    // its device_info.
    const web = await cell(C);
    expect(web.breakdowns.gpu).toEqual([expect.objectContaining({ key: "RTX 4090", samples: 5 })]);
    expect(web.breakdowns.resolution).toEqual([expect.objectContaining({ key: "3840x2160", samples: 5 })]);
    expect(web.breakdowns.device_model).toEqual([expect.objectContaining({ key: "Desktop PC", samples: 5 })]);
  });
});
