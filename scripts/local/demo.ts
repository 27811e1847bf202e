// The playable demo of the web SDK (sdk/web/demo): its map (drawn here as a PNG, registered with the
// service through the maps API), a threshold profile to judge it by, and a tiny static server for the
// game page. `npm run dev` starts it next to the service; the browser tests start it against theirs.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { deflateSync } from "node:zlib";
import { buildSync } from "esbuild";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The demo's world: 500 × 500 units, one pixel per unit in the map image; y points up. */
export const DEMO_MAP = { mapId: "demo-meadow", name: "Demo meadow (web SDK)", size: 500 } as const;
/** The bog that makes every frame slow (the game burns CPU there): four by four heatmap cells of 25. */
export const SLOW_ZONE = { minX: 300, minY: 300, maxX: 400, maxY: 400 } as const;
export const DEMO_BUILD = "web-demo-1";
/** A profile for the demo: good at 50 fps and above, warn from 30, bad below (the bog runs at ~20). */
export const DEMO_PROFILE = {
  name: "Web demo",
  fpsGood: 50,
  fpsWarn: 30,
  frameTimeGood: 20,
  frameTimeWarn: 33.4,
};

const CRC = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) {
    c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return c >>> 0;
});

function chunk(type: string, data: Uint8Array): Buffer {
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  let c = 0xffffffff;
  for (const b of body) {
    c = (CRC[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
  }
  const out = Buffer.alloc(body.length + 8);
  out.writeUInt32BE(data.length, 0);
  body.copy(out, 4);
  out.writeUInt32BE((c ^ 0xffffffff) >>> 0, body.length + 4);
  return out;
}

/** The meadow as an RGB PNG: grass, two dirt paths crossing, and the purple bog (the slow zone). */
export function demoMapPng(): Buffer {
  const n = DEMO_MAP.size;
  const rows = Buffer.alloc(n * (1 + n * 3));
  for (let py = 0; py < n; py++) {
    const y = n - 1 - py; // world y up, image rows down
    rows[py * (1 + n * 3)] = 0;
    for (let x = 0; x < n; x++) {
      const at = py * (1 + n * 3) + 1 + x * 3;
      const bog = x >= SLOW_ZONE.minX && x < SLOW_ZONE.maxX && y >= SLOW_ZONE.minY && y < SLOW_ZONE.maxY;
      const path = Math.abs(x - 250) < 12 || Math.abs(y - 150) < 12;
      const shade = ((x >> 5) + (y >> 5)) % 2 ? 8 : 0;
      const [r, g, b] = bog ? [92, 52, 110] : path ? [176, 146, 96] : [86 + shade, 142 + shade, 60];
      rows[at] = r;
      rows[at + 1] = g;
      rows[at + 2] = b;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(n, 0);
  ihdr.writeUInt32BE(n, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", new Uint8Array()),
  ]);
}

/**
 * Registers the demo's map (an upsert: safe on every start) and its threshold profile (when the project
 * has none of that name), through the Web API as any client would.
 */
export async function registerDemoMap(origin: string, key: string, projectId: string): Promise<void> {
  const form = new FormData();
  form.set("image", new Blob([new Uint8Array(demoMapPng())], { type: "image/png" }), `${DEMO_MAP.mapId}.png`);
  form.set("mapId", DEMO_MAP.mapId);
  form.set("name", DEMO_MAP.name);
  form.set("worldMinX", "0");
  form.set("worldMinY", "0");
  form.set("worldMaxX", String(DEMO_MAP.size));
  form.set("worldMaxY", String(DEMO_MAP.size));
  const upload = await fetch(`${origin}/api/v1/maps/upload`, {
    method: "POST",
    headers: { "X-API-Key": key, "X-Project-Id": projectId },
    body: form,
  });
  if (!upload.ok) {
    throw new Error(`registering the demo map: ${upload.status} ${await upload.text()}`);
  }
  const profiles = `${origin}/api/v1/projects/${projectId}/threshold-profiles`;
  const list = await fetch(profiles, { headers: { "X-API-Key": key } });
  const { data } = (await list.json()) as { data?: { name: string }[] };
  if (!list.ok || !Array.isArray(data)) {
    throw new Error(`listing threshold profiles: ${list.status}`);
  }
  if (!data.some((p) => p.name === DEMO_PROFILE.name)) {
    const made = await fetch(profiles, {
      method: "POST",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify(DEMO_PROFILE),
    });
    if (!made.ok) {
      throw new Error(`creating the demo's threshold profile: ${made.status} ${await made.text()}`);
    }
  }
}

export type DemoConfig = {
  /** Where the game's SDK posts, e.g. http://127.0.0.1:8787/v1/events. */
  endpoint: string;
  /** An ingest key of the project: it can only send events, as any web game ships one. */
  apiKey: string;
  buildId?: string;
  /** The demo sends a heartbeat every 2 s (the SDK's default is 10 s) so one minute fills the heatmap. */
  heartbeatMs?: number;
  flushIntervalMs?: number;
};

export type DemoServer = { url: string; close(): Promise<void> };

/** The game's script, bundled with the SDK's source (esbuild). */
function gameScript(): string {
  const out = buildSync({
    entryPoints: [`${ROOT}sdk/web/demo/game.ts`],
    bundle: true,
    format: "esm",
    target: "es2020",
    write: false,
  });
  return out.outputFiles[0]?.text ?? "";
}

function page(config: DemoConfig): string {
  const json = JSON.stringify({
    ...config,
    buildId: config.buildId ?? DEMO_BUILD,
    mapId: DEMO_MAP.mapId,
    world: DEMO_MAP.size,
    slowZone: SLOW_ZONE,
  }).replace(/</g, "\\u003c");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Meadow walk: web SDK demo</title>
<style>
body { font: 14px system-ui, sans-serif; background: #1b1f24; color: #e8e8e8; margin: 24px; }
canvas { display: block; border: 1px solid #444; cursor: crosshair; }
#hud { margin-top: 8px; font-variant-numeric: tabular-nums; }
</style>
</head>
<body>
<h1>Meadow walk</h1>
<p>Walk with WASD or the arrow keys, or click where to go. The purple bog is deliberately slow.
Play for a minute, then open the heatmap of map <code>${DEMO_MAP.mapId}</code> with the profile “${DEMO_PROFILE.name}”.</p>
<canvas id="game" width="${DEMO_MAP.size}" height="${DEMO_MAP.size}" tabindex="0"></canvas>
<div id="hud" aria-live="off"></div>
<script id="config" type="application/json">${json}</script>
<script type="module" src="/game.js"></script>
</body>
</html>`;
}

/** Serves the demo on loopback at `port` (0: any free port). */
export async function startDemoServer(config: DemoConfig, port = 0): Promise<DemoServer> {
  const script = gameScript();
  const png = demoMapPng();
  const html = page(config);
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const body = path === "/" ? html : path === "/game.js" ? script : path === "/map.png" ? png : undefined;
    if (body === undefined) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    const type = path === "/" ? "text/html" : path === "/game.js" ? "text/javascript" : "image/png";
    const charset = type === "image/png" ? "" : "; charset=utf-8";
    res.writeHead(200, { "content-type": `${type}${charset}`, "cache-control": "no-store" }).end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
