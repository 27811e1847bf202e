import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { Page } from "playwright-core";
import protobuf from "protobufjs";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  DEMO_BUILD,
  DEMO_MAP,
  DEMO_PROFILE,
  type DemoConfig,
  type DemoServer,
  registerDemoMap,
  SLOW_ZONE,
  startDemoServer,
} from "../../scripts/local/demo.js";
import { type Dashboard, SCREENSHOTS, startDashboard } from "../support/dashboard.js";

// The web SDK (sdk/web) in headless Chromium against the service as `npm run dev` runs it: its demo game
// played by a script, offline and reload survival, the 413 and 429 paths through a test ingest in front
// of the real one, and the heatmap page showing the demo's slow zone in red under its profile. Each test
// serves the demo on its own port, so each has its own origin and IndexedDB.

const ROOT = join(import.meta.dirname, "..", "..");
const Batch = protobuf
  .parse(readFileSync(join(ROOT, "proto/telemetry/v1/telemetry.proto"), "utf8"), { keepCase: true })
  .root.lookupType("telemetry.v1.TelemetryBatch");

let d: Dashboard;
let profileId = "";

beforeAll(async () => {
  d = await startDashboard();
  await registerDemoMap(d.origin, d.fullKey, d.projectId);
  const profiles = await d.api<{ id: string; name: string }[]>(`/projects/${d.projectId}/threshold-profiles`);
  profileId = profiles.find((p) => p.name === DEMO_PROFILE.name)?.id ?? "";
}, 300_000);

afterAll(async () => {
  await d?.close();
}, 60_000);

type Row = Record<string, unknown>;

async function query(sql: string): Promise<Row[]> {
  const q = await d.api<{ rows: Row[] }>("/query", {
    method: "POST",
    body: { project_id: d.projectId, sql, limit: 10_000 },
  });
  return q.rows;
}

/** The stored rows of one session, once there are `count` of them (the consumer stores them shortly). */
async function rowsOf(sessionId: string, count: number): Promise<Row[]> {
  const sql = `SELECT * FROM events WHERE session_id = '${sessionId}' ORDER BY timestamp`;
  await expect.poll(async () => (await query(sql)).length, { timeout: 60_000, interval: 500 }).toBe(count);
  return query(sql);
}

/** Each event once: no two rows of a session share their name and microsecond. */
function expectOnce(rows: Row[]): void {
  const keys = rows.map((r) => `${r.event_name}@${r.timestamp}`);
  expect(new Set(keys).size).toBe(rows.length);
}

/**
 * Runs `js` in the page. Bounded: a promise in the page that never settles fails the test here, naming
 * the script, instead of running into the test's timeout with no clue where it stood.
 */
async function run<T = unknown>(page: Page, js: string, ms = 20_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`page script did not settle in ${ms} ms: ${js.slice(0, 80)}`)),
      ms,
    );
  });
  try {
    return await Promise.race([page.evaluate<T>(js), late]);
  } finally {
    clearTimeout(timer);
  }
}

type Stats = { tracked: number; delivered: number; dropped: number; queued: number; pending: number };
const stats = (page: Page) => run<Stats>(page, "window.telemetry.stats()");
const sessionOf = (page: Page) => run<string>(page, "window.telemetry.sessionId");

async function demo(config: Partial<DemoConfig> = {}): Promise<DemoServer> {
  return startDemoServer({ endpoint: `${d.origin}/v1/events`, apiKey: d.ingestKey, ...config });
}

async function play(server: DemoServer): Promise<Page> {
  const page = await d.context.newPage();
  page.on("pageerror", (err) => console.error("demo page error:", err.message));
  await page.goto(server.url);
  await page.waitForFunction("window.telemetry !== undefined");
  return page;
}

/** Clicks the canvas where world (x, y) is drawn, and waits until the character stands there. */
async function walkTo(page: Page, x: number, y: number): Promise<void> {
  const box = await page.locator("#game").boundingBox();
  if (!box) {
    throw new Error("no canvas");
  }
  await page.mouse.click(
    box.x + (x / DEMO_MAP.size) * box.width,
    box.y + (1 - y / DEMO_MAP.size) * box.height,
  );
  await page.waitForFunction(
    `(() => { const p = window.demo.player; return Math.hypot(p.x - ${x}, p.y - ${y}) < 3; })()`,
    undefined,
    { timeout: 30_000 },
  );
}

/** Waits until `n` more perf_heartbeats were tracked where the character stands. */
async function stay(page: Page, heartbeats: number): Promise<void> {
  const start = (await stats(page)).tracked;
  await page.waitForFunction(`window.telemetry.stats().tracked >= ${start + heartbeats}`, undefined, {
    timeout: 30_000,
  });
}

it("the demo played by a script: every event arrives once, with position, camera, perf and device context; the heatmap shows the bog in red", async () => {
  const server = await demo({ heartbeatMs: 500, flushIntervalMs: 1000 });
  try {
    const page = await play(server);
    // Standing in the middle of 25-unit cells: the meadow's (100, 100) and the bog's (350, 350).
    await walkTo(page, 112, 112);
    await stay(page, 4);
    await walkTo(page, 362, 362);
    await stay(page, 6);
    await walkTo(page, 120, 60);
    await stay(page, 4);
    // Ends the session: session_end, the last batch sent, collecting stopped.
    await run(page, "window.telemetry.shutdown()");
    const sent = await stats(page);
    expect(sent).toMatchObject({ dropped: 0, queued: 0, pending: 0 });
    expect(sent.delivered).toBe(sent.tracked);
    const sessionId = await sessionOf(page);
    // The GPU's name comes from WebGL, which a Chromium started with --disable-gpu may not offer.
    const renderer = await run<string>(
      page,
      `(() => {
      const gl = document.createElement("canvas").getContext("webgl");
      return gl ? String(gl.getParameter(gl.RENDERER)) : "";
    })()`,
    );
    await page.close();

    const rows = await rowsOf(sessionId, sent.tracked);
    expectOnce(rows);
    const names = rows.map((r) => r.event_name);
    expect(names[0]).toBe("session_start");
    expect(names.at(-1)).toBe("session_end");
    expect(names.filter((n) => n === "bog_entered")).toHaveLength(1);
    for (const r of rows) {
      expect(r).toMatchObject({
        map_id: DEMO_MAP.mapId,
        build_id: DEMO_BUILD,
        platform: "Web",
        source: "player",
      });
      expect(r).toMatchObject({ sdk_name: "web", sdk_version: "0.1.0", build_config: "development" });
      expect(r.resolution).toMatch(/^\d+x\d+$/);
      if (renderer) {
        expect(String(r.gpu).length).toBeGreaterThan(0);
      } else {
        expect(r.gpu).toBe("");
      }
      expect(Number(r.memory_total_mb)).toBeGreaterThan(0);
      expect(r.os_version).toBe("Linux");
      expect(r.cpu).toMatch(/^\d+ threads$/);
    }
    // session_start is tracked by init(), before the game has placed anyone: no position, no camera.
    expect(rows[0]).toMatchObject({ position_x: null, camera_yaw: null, camera_pitch: null });
    for (const r of rows.slice(1)) {
      expect(Number(r.position_x)).toBeGreaterThan(0);
      expect(Number(r.position_y)).toBeGreaterThan(0);
      expect(r.camera_pitch).toBe(-60);
      expect(Number(r.camera_yaw)).toBeGreaterThanOrEqual(0);
      expect(Number(r.camera_yaw)).toBeLessThan(360);
    }
    const beats = rows.filter((r) => r.event_name === "perf_heartbeat");
    expect(beats.length).toBeGreaterThanOrEqual(14);
    let highestHz = 0;
    for (const b of beats) {
      expect(Number(b.fps)).toBeGreaterThan(0);
      expect(Number(b.frame_time_ms)).toBeCloseTo(1000 / Number(b.fps), 1);
      // Chromium exposes the JS heap.
      expect(Number(b.memory_used_bytes)).toBeGreaterThan(0);
      expect((b.metrics as Record<string, number>)["mem.heap"]).toBe(Number(b.memory_used_bytes));
      // The display's refresh rate: a whole number of Hz in a display's range, the session's highest so
      // far (it never falls). It is not compared with the heartbeat's fps: on a busy machine the browser
      // runs a few late frames back to back, which lowers the mean interval below the refresh's.
      const hz = (b.metrics as Record<string, number>)["display.hz"] as number;
      expect(Number.isInteger(hz), `display.hz ${hz}`).toBe(true);
      expect(hz).toBeGreaterThanOrEqual(24);
      expect(hz).toBeLessThanOrEqual(1000);
      expect(hz).toBeGreaterThanOrEqual(highestHz);
      highestHz = hz;
    }
    // A heartbeat averages the last 500 ms, in which the character walks at most 60 units (42 on each
    // axis of a diagonal): heartbeats this far into the bog measured nothing but bog frames.
    const deepInBog = (r: Row) => Number(r.position_x) >= 345 && Number(r.position_y) >= 345;
    const bogFps = beats.filter(deepInBog).map((b) => Number(b.fps));
    expect(bogFps.length).toBeGreaterThanOrEqual(4);
    // The bog burns 45 ms a frame: the SDK's frame sampling measures it.
    expect(Math.max(...bogFps)).toBeLessThan(DEMO_PROFILE.fpsWarn);

    // The heatmap page under the demo's profile: the bog's cells bad (red), the meadow's not.
    const heatmap = await d.open(
      `/projects/${d.projectId}/heatmap?map=${DEMO_MAP.mapId}&profile=${profileId}&build=${DEMO_BUILD}`,
    );
    await heatmap.locator("#heatmap-canvas[data-cells]").waitFor({ timeout: 30_000 });
    const cells = await heatmap.evaluate<{ x: number; y: number; cls: string; fill: string }[]>(
      `window.dashboardMaps["heatmap-canvas"].cells`,
    );
    const bogCell = cells.find((c) => c.x === 350 && c.y === 350);
    expect(bogCell).toMatchObject({ cls: "bad", fill: "#d7263d" });
    const meadowCell = cells.find((c) => c.x === 100 && c.y === 100);
    expect(meadowCell?.cls).not.toBe("bad");
    const fromBog = (c: { x: number; y: number }) =>
      Math.hypot(
        Math.max(0, SLOW_ZONE.minX - (c.x + 25), c.x - SLOW_ZONE.maxX),
        Math.max(0, SLOW_ZONE.minY - (c.y + 25), c.y - SLOW_ZONE.maxY),
      );
    for (const c of cells.filter((c) => c.cls === "bad")) {
      // Red only in the bog, or within one heartbeat's walk (60 units) of it after leaving.
      expect(fromBog(c), `bad cell ${c.x},${c.y}`).toBeLessThanOrEqual(60);
    }
    await heatmap.screenshot({ path: join(SCREENSHOTS, "web-sdk-demo-heatmap.png"), fullPage: true });
    await heatmap.close();
  } finally {
    await server.close();
  }
});

it("offline, events wait in the queue; back online, they are delivered once", async () => {
  const server = await demo({ heartbeatMs: 0, flushIntervalMs: 60_000 });
  try {
    const page = await play(server);
    await run(page, "window.telemetry.flush()");
    await d.context.setOffline(true);
    try {
      await run(page, `(() => { for (let i = 0; i < 5; i++) window.telemetry.track("offline_" + i); })()`);
      await run(page, "window.telemetry.flush()");
      expect(await stats(page)).toMatchObject({ delivered: 1, queued: 5 });
    } finally {
      await d.context.setOffline(false);
    }
    await expect.poll(async () => (await stats(page)).delivered, { timeout: 30_000 }).toBe(6);
    const rows = await rowsOf(await sessionOf(page), 6);
    expectOnce(rows);
    expect(rows.map((r) => r.event_name)).toEqual([
      "session_start",
      "offline_0",
      "offline_1",
      "offline_2",
      "offline_3",
      "offline_4",
    ]);
    await page.close();
  } finally {
    await server.close();
  }
});

/** A test ingest in front of the real one: forwards everything, unless `answer` forces a status. */
type Forced = { status: number; headers?: Record<string, string> } | undefined;
type Seen = { at: number; events: string[]; status: number };
async function testIngest(answer: (events: string[], n: number) => Forced) {
  const seen: Seen[] = [];
  const read = async (req: IncomingMessage) => {
    const parts: Buffer[] = [];
    for await (const c of req) {
      parts.push(c as Buffer);
    }
    return Buffer.concat(parts);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await read(req);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === "string" && !["host", "connection", "content-length"].includes(k)) {
        headers.set(k, v);
      }
    }
    if (req.method === "POST") {
      const raw = req.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body;
      const decoded = Batch.toObject(Batch.decode(raw)) as { events: { event_name: string }[] };
      const events = decoded.events.map((e) => e.event_name);
      const forced = answer(events, seen.length + 1);
      if (forced) {
        seen.push({ at: Date.now(), events, status: forced.status });
        res
          .writeHead(forced.status, {
            "access-control-allow-origin": "*",
            "access-control-expose-headers": "Retry-After",
            "content-type": "application/problem+json",
            ...forced.headers,
          })
          .end(JSON.stringify({ status: forced.status, detail: "forced by the test ingest" }));
        return;
      }
      seen.push({ at: Date.now(), events, status: 202 });
    }
    const upstream = await fetch(`${d.origin}${req.url}`, {
      method: req.method,
      headers,
      body: req.method === "POST" ? body : undefined,
      signal: AbortSignal.timeout(30_000),
    });
    res
      .writeHead(upstream.status, Object.fromEntries(upstream.headers))
      .end(Buffer.from(await upstream.arrayBuffer()));
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      // A body cut off, or the real ingest not answering: the SDK hears a retryable 503 and sends again.
      console.error("test ingest:", err);
      if (res.headersSent) {
        res.destroy();
      } else {
        res.writeHead(503, { "access-control-allow-origin": "*" }).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/events`;
  return {
    url,
    seen,
    // Ends the browser's keep-alive connections too: close() alone waits for them to time out, and one
    // still carrying a pagehide request can hold the test well past its end.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

it("413: the batch is split in halves until the test ingest takes it; each event arrives once", async () => {
  const ingest = await testIngest((events) => (events.length > 2 ? { status: 413 } : undefined));
  const server = await demo({ endpoint: ingest.url, heartbeatMs: 0, flushIntervalMs: 60_000 });
  try {
    const page = await play(server);
    await run(page, `(() => { for (let i = 0; i < 6; i++) window.telemetry.track("split_" + i); })()`);
    await run(page, "window.telemetry.flush()");
    expect(await stats(page)).toMatchObject({ delivered: 7, dropped: 0, queued: 0 });
    expect(ingest.seen.filter((s) => s.status === 413).map((s) => s.events.length)).toEqual([7, 4, 3]);
    const rows = await rowsOf(await sessionOf(page), 7);
    expectOnce(rows);
    expect(rows.map((r) => r.event_name).sort()).toEqual(
      ["session_start", ...Array.from({ length: 6 }, (_, i) => `split_${i}`)].sort(),
    );
    await page.close();
  } finally {
    await server.close();
    await ingest.close();
  }
});

it("429: the SDK waits for Retry-After, then the same batch arrives once", async () => {
  const ingest = await testIngest((_events, n) =>
    n === 1 ? { status: 429, headers: { "retry-after": "2" } } : undefined,
  );
  const server = await demo({ endpoint: ingest.url, heartbeatMs: 0, flushIntervalMs: 60_000 });
  try {
    const page = await play(server);
    await run(page, `window.telemetry.track("after_429")`);
    await run(page, "window.telemetry.flush()");
    await expect.poll(async () => (await stats(page)).delivered, { timeout: 30_000 }).toBe(2);
    const [refused, taken] = ingest.seen;
    expect(refused?.status).toBe(429);
    expect(taken).toMatchObject({ status: 202, events: refused?.events });
    expect((taken?.at ?? 0) - (refused?.at ?? 0)).toBeGreaterThanOrEqual(1900);
    const rows = await rowsOf(await sessionOf(page), 2);
    expectOnce(rows);
    await page.close();
  } finally {
    await server.close();
    await ingest.close();
  }
});

it("a reload keeps undelivered events: the next page sends them, once", async () => {
  let down = true;
  const ingest = await testIngest(() => (down ? { status: 503 } : undefined));
  const server = await demo({ endpoint: ingest.url, heartbeatMs: 0, flushIntervalMs: 60_000 });
  try {
    const page = await play(server);
    const first = await sessionOf(page);
    await run(
      page,
      `(() => { for (let i = 0; i < 3; i++) window.telemetry.track("before_reload_" + i); })()`,
    );
    await run(page, "window.telemetry.flush()");
    // In IndexedDB before the reload: session_start and the three.
    const stored = `(async () => {
      const [info] = await indexedDB.databases();
      const db = await new Promise((ok, fail) => {
        const r = indexedDB.open(info.name);
        r.onsuccess = () => ok(r.result);
        r.onerror = () => fail(r.error);
        r.onblocked = () => fail(new Error("open blocked"));
      });
      try {
        return await new Promise((ok, fail) => {
          const r = db.transaction("batches").objectStore("batches").getAll();
          r.onsuccess = () => ok(r.result.reduce((n, b) => n + b.events.length, 0));
          r.onerror = () => fail(r.error);
        });
      } finally {
        db.close();
      }
    })()`;
    await expect.poll(() => run<number>(page, stored)).toBe(4);
    await page.reload();
    await page.waitForFunction("window.telemetry !== undefined");
    const second = await sessionOf(page);
    expect(second).not.toBe(first);
    down = false;
    await run(page, "window.telemetry.flush()");
    // The first page's four, sent by the second. (Its session_end, tracked on pagehide, is stored only if
    // IndexedDB finished writing while the page went away, so it is not counted on.)
    const early = `SELECT count() AS n FROM events WHERE session_id = '${first}' AND event_name != 'session_end'`;
    await expect
      .poll(async () => Number((await query(early))[0]?.n), { timeout: 60_000, interval: 500 })
      .toBe(4);
    const rows = await query(`SELECT * FROM events WHERE session_id = '${first}'`);
    expectOnce(rows);
    expect(
      rows
        .map((r) => r.event_name)
        .filter((n) => n !== "session_end")
        .sort(),
    ).toEqual(["session_start", "before_reload_0", "before_reload_1", "before_reload_2"].sort());
    await expect.poll(() => run<number>(page, stored), { timeout: 30_000 }).toBe(0);
    await page.close();
  } finally {
    await server.close();
    await ingest.close();
  }
});

it("pagehide: the events still gathering leave in a keepalive request as the page goes", async () => {
  const ingest = await testIngest(() => undefined);
  const server = await demo({ endpoint: ingest.url, heartbeatMs: 0, flushIntervalMs: 60_000 });
  try {
    const page = await play(server);
    await run(page, `window.telemetry.track("last_words")`);
    expect(await stats(page)).toMatchObject({ pending: 2, delivered: 0 });
    const sessionId = await sessionOf(page);
    await page.goto("about:blank");
    const rows = await rowsOf(sessionId, 3);
    expect(rows.map((r) => r.event_name)).toEqual(["session_start", "last_words", "session_end"]);
    expectOnce(rows);
    // One keepalive request with all three, sent plain (compression is asynchronous and might not finish
    // while the page goes away).
    expect(ingest.seen.map((s) => s.events.join())).toContain("session_start,last_words,session_end");
    await page.close();
  } finally {
    await server.close();
    await ingest.close();
  }
});
