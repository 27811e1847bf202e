import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { deflateSync, gzipSync } from "node:zlib";
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import type { BrowserContext, Page } from "playwright-core";
import {
  type GameTelemetryEventSchema,
  TelemetryBatchSchema,
  TelemetrySource,
} from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { launchChromium } from "./chromium.js";
import { adminCli, type Service } from "./service.js";
import { sharedService } from "./shared-service.js";
import { waitFor } from "./wait.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Screenshots of the test run (git-ignored). */
export const SCREENSHOTS = join(ROOT, "test-results");

export type SdkEvent = MessageInitShape<typeof GameTelemetryEventSchema>;

export type Dashboard = {
  service: Service;
  origin: string;
  context: BrowserContext;
  tenantId: string;
  projectId: string;
  owner: { email: string; password: string };
  /** A full key of the project: what the clients use, to check the pages against. */
  fullKey: string;
  ingestKey: string;
  /** The Web API as a client sees it: `data` of a 2xx, throws on anything else. */
  api<T>(path: string, init?: { method?: string; body?: unknown; form?: FormData }): Promise<T>;
  admin(...args: string[]): Promise<Record<string, unknown>>;
  /** Sends events (any number, in batches the ingest accepts) and waits until the project holds them. */
  send(events: SdkEvent[]): Promise<void>;
  /** A new tab, signed in (the context shares one session), opened at `path`. */
  open(path: string): Promise<Page>;
  close(): Promise<void>;
};

export async function startDashboard(
  opts: { plan?: string; studio?: string; project?: string; email?: string } = {},
): Promise<Dashboard> {
  const service = await sharedService();
  const { origin } = service;
  const admin = (...args: string[]) => adminCli(service, ...args);
  let context: BrowserContext | undefined;
  let profileDir: string | undefined;
  try {
    const tenantId = String(
      (await admin("tenant", "create", "--name", opts.studio ?? "QA Studio", "--plan", opts.plan ?? "studio"))
        .id,
    );
    const projectId = String(
      (await admin("project", "create", "--tenant", tenantId, "--name", opts.project ?? "Harbor Run")).id,
    );
    // Unique unless given: the files share one service, and an email is one person in all of it.
    const owner = {
      email: opts.email ?? `qa.lead.${crypto.randomUUID().slice(0, 8)}@studio.test`,
      password: "dashboard-test-password-1",
    };
    await admin(
      "user",
      "create",
      "--tenant",
      tenantId,
      "--email",
      owner.email,
      "--password",
      owner.password,
      "--role",
      "owner",
    );
    const fullKey = String((await admin("key", "create", "--project", projectId, "--preset", "full")).key);
    const ingestKey = String(
      (await admin("key", "create", "--project", projectId, "--preset", "ingest")).key,
    );

    const api = async <T>(path: string, init: { method?: string; body?: unknown; form?: FormData } = {}) => {
      const headers: Record<string, string> = { "X-API-Key": fullKey };
      let body: BodyInit | undefined;
      if (init.form) {
        body = init.form;
        headers["X-Project-Id"] = projectId;
      } else if (init.body !== undefined) {
        headers["Content-Type"] = "application/json";
        body = JSON.stringify(init.body);
      }
      // Bounded, so a request the service never answers fails its test here rather than at its timeout.
      const send = () =>
        fetch(`${origin}/api/v1${path}`, {
          method: init.method ?? "GET",
          headers,
          body,
          signal: AbortSignal.timeout(60_000),
        });
      let res = await send();
      let text = await res.text();
      // wrangler dev's proxy answers this plain text when its runtime restarted under a request, and
      // retries only GET and HEAD itself; a read-only POST (a user query) is sent again once.
      if (path === "/query" && text.startsWith("Your worker restarted mid-request")) {
        res = await send();
        text = await res.text();
      }
      let json: { data?: T; detail?: string };
      try {
        json = JSON.parse(text) as { data?: T; detail?: string };
      } catch {
        throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${text.slice(0, 300)}`);
      }
      if (!res.ok) {
        throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${json.detail}`);
      }
      // The map upload answers its fields beside `success` (the CLI's shape), the rest in `data`.
      return json.data ?? (json as T);
    };

    let sent = 0;
    const send = async (events: SdkEvent[]) => {
      for (let i = 0; i < events.length; i += 1500) {
        const batch = create(TelemetryBatchSchema, { events: events.slice(i, i + 1500) });
        const body = gzipSync(toBinary(TelemetryBatchSchema, batch));
        const res = await fetch(`${origin}/v1/events`, {
          method: "POST",
          headers: {
            "Content-Type": "application/x-protobuf",
            "Content-Encoding": "gzip",
            "X-SDK-Version": "dashboard-test/1.0",
            "X-API-Key": ingestKey,
          },
          body,
        });
        if (res.status !== 202) {
          throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
        }
      }
      sent += events.length;
      // The queue consumer stores them shortly: wait for the count, not for a fixed time.
      await waitFor(
        async () => {
          const q = await api<{ rows: unknown[][] | Record<string, unknown>[] }>("/query", {
            method: "POST",
            body: { project_id: projectId, sql: "SELECT count() AS n FROM events" },
          });
          const row = q.rows[0];
          return Number(Array.isArray(row) ? row[0] : row?.n);
        },
        (n) => n >= sent,
        { timeoutMs: 60_000, intervalMs: 250, message: `${sent} events stored` },
      );
      await service.insertsSettled();
    };

    profileDir = await mkdtemp(join(tmpdir(), "chromium-dashboard-"));
    context = await launchChromium(profileDir, { viewport: { width: 1280, height: 900 } });
    const ctx = context;
    const signInPage = await ctx.newPage();
    await signInPage.goto(`${origin}/sign-in`);
    await signInPage.getByLabel("Email").fill(owner.email);
    await signInPage.getByLabel("Password").fill(owner.password);
    await Promise.all([
      signInPage.waitForURL(`${origin}/`),
      signInPage.getByRole("button", { name: "Sign in" }).click(),
    ]);
    await signInPage.close();
    await mkdir(SCREENSHOTS, { recursive: true });
    const dir = profileDir;

    return {
      service,
      origin,
      context: ctx,
      tenantId,
      projectId,
      owner,
      fullKey,
      ingestKey,
      api,
      admin,
      send,
      async open(path) {
        const page = await ctx.newPage();
        page.on("pageerror", (err) => console.error(`page error on ${path}:`, err.message));
        await page.goto(`${origin}${path}`);
        return page;
      },
      async close() {
        await ctx.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await context?.close();
    if (profileDir) {
      await rm(profileDir, { recursive: true, force: true });
    }
    throw err;
  }
}

/**
 * Two builds on "harbor", as the browser tests seed them: build 1.0.0, 40 Windows samples at 60 fps
 * along y = 1; build 1.1.0, 25 PS5 samples at 45 fps along y = 2, by `ps5Player` (one player if unset).
 */
export function harborBuilds(ps5Player?: (i: number) => string): SdkEvent[] {
  return [
    ...perfEvents({ count: 40, build: "1.0.0", mapId: "harbor", at: (i) => ({ x: i, y: 1 }), fps: () => 60 }),
    ...perfEvents({
      count: 25,
      build: "1.1.0",
      mapId: "harbor",
      platform: "PS5",
      at: (i) => ({ x: i, y: 2 }),
      fps: () => 45,
      ...(ps5Player ? { player: ps5Player } : {}),
    }),
  ];
}

/** Performance events of one build on a map at given positions, as the SDKs send them. */
export function perfEvents(opts: {
  count: number;
  build: string;
  mapId: string;
  platform?: string;
  /** Position of event i. */
  at: (i: number) => { x: number; y: number };
  /** FPS of event i (frame time is 1000 / fps). */
  fps: (i: number) => number;
  memoryMb?: (i: number) => number;
  gpuMs?: (i: number) => number;
  player?: (i: number) => string;
}): SdkEvent[] {
  const now = BigInt(Date.now() - 60_000) * 1000n;
  return Array.from({ length: opts.count }, (_, i) => {
    const fps = opts.fps(i);
    const p = opts.at(i);
    return {
      eventName: "perf_sample",
      timestampUs: now - BigInt(i) * 1000n,
      sessionId: `s-${opts.player?.(i) ?? "p1"}`,
      playerId: opts.player?.(i) ?? "p1",
      buildId: opts.build,
      platform: opts.platform ?? "Windows",
      mapId: opts.mapId,
      position: { x: p.x, y: p.y, z: 0 },
      fps,
      frameTimeMs: 1000 / fps,
      memoryUsedBytes: BigInt(Math.round((opts.memoryMb?.(i) ?? 2048) * 1_048_576)),
      gpuTimeMs: opts.gpuMs?.(i) ?? 8,
      source: TelemetrySource.AUTOMATED,
    };
  });
}

/** Plain gameplay events (events mode, top events), `count` of `name`. */
export function namedEvents(
  name: string,
  count: number,
  opts: { mapId?: string; player?: (i: number) => string; at?: (i: number) => { x: number; y: number } } = {},
): SdkEvent[] {
  const now = BigInt(Date.now() - 60_000) * 1000n;
  return Array.from({ length: count }, (_, i) => {
    const p = opts.at?.(i);
    return {
      eventName: name,
      timestampUs: now - BigInt(i) * 1000n,
      sessionId: `s-${opts.player?.(i) ?? "p1"}`,
      playerId: opts.player?.(i) ?? "p1",
      mapId: opts.mapId ?? "",
      ...(p ? { position: { x: p.x, y: p.y, z: 0 } } : {}),
      source: TelemetrySource.PLAYER,
    };
  });
}

type Rgb = [number, number, number];

/**
 * A real, decodable PNG (a checkerboard of two tones, greys by default), for map images the browser
 * draws.
 */
export function checkerPng(
  width: number,
  height: number,
  square = 32,
  tones: [Rgb, Rgb] = [
    [160, 180, 160],
    [200, 220, 200],
  ],
): Uint8Array {
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 3 + 1)] = 0;
    for (let x = 0; x < width; x++) {
      const [r, g, b] = (Math.floor(x / square) + Math.floor(y / square)) % 2 ? tones[1] : tones[0];
      const o = y * (width * 3 + 1) + 1 + x * 3;
      raw[o] = r;
      raw[o + 1] = g;
      raw[o + 2] = b;
    }
  }
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk("IHDR", ihdr),
      chunk("IDAT", deflateSync(raw)),
      chunk("IEND", Buffer.alloc(0)),
    ]),
  );
}

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) {
      c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    }
  }
  return (c ^ 0xffffffff) >>> 0;
}

/** Uploads a map (a checkerboard image) at the given world bounds; returns its record. */
export async function uploadMap(
  d: Dashboard,
  map: {
    mapId: string;
    name: string;
    minX: number;
    minY: number;
    maxX: number;
    maxY: number;
    width: number;
    height: number;
    /** The image's two tones (greys by default). */
    tones?: [Rgb, Rgb];
  },
): Promise<{ id: string; mapId: string }> {
  const form = new FormData();
  const png = checkerPng(map.width, map.height, 32, map.tones);
  form.set("image", new Blob([png], { type: "image/png" }), `${map.mapId}.png`);
  form.set("mapId", map.mapId);
  form.set("name", map.name);
  form.set("worldMinX", String(map.minX));
  form.set("worldMinY", String(map.minY));
  form.set("worldMaxX", String(map.maxX));
  form.set("worldMaxY", String(map.maxY));
  return d.api<{ id: string; mapId: string }>("/maps/upload", { method: "POST", form });
}

/** Text as a person reads it: runs of white space as one space, trimmed. */
export const squash = (s: string | null) => (s ?? "").replace(/\s+/g, " ").trim();

/** The cells' text of a page's `table[data-table=name]`, row by row (waits for the table). */
export async function tableRows(page: Page, table: string): Promise<string[][]> {
  await page.locator(`table[data-table="${table}"]`).waitFor();
  return page
    .locator(`table[data-table="${table}"] tbody tr`)
    .evaluateAll((trs) =>
      trs.map((tr) =>
        [...tr.querySelectorAll("td")].map((td) => (td.textContent ?? "").replace(/\s+/g, " ").trim()),
      ),
    );
}
