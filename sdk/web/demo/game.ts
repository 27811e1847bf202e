// Meadow walk: the web SDK's demo. A character walks a 500 × 500 map (keys or click-to-walk); inside the
// purple bog every frame burns CPU, so the SDK's frame sampling reports it slow and the heatmap turns red
// there. Served by scripts/local/demo.ts, which puts the configuration in the page.
import * as telemetry from "../src/index.js";

type Config = {
  endpoint: string;
  apiKey: string;
  buildId: string;
  mapId: string;
  world: number;
  slowZone: { minX: number; minY: number; maxX: number; maxY: number };
  heartbeatMs?: number;
  flushIntervalMs?: number;
};

const config = JSON.parse(document.getElementById("config")?.textContent ?? "{}") as Config;
const canvas = document.getElementById("game") as HTMLCanvasElement;
const ctx = canvas.getContext("2d") as CanvasRenderingContext2D;
const hud = document.getElementById("hud") as HTMLElement;

/** How long a frame in the bog takes at least: about 20 fps. */
const BOG_FRAME_MS = 45;
const SPEED = 120; // world units per second

const session = telemetry.init({
  endpoint: config.endpoint,
  apiKey: config.apiKey,
  buildId: config.buildId,
  mapId: config.mapId,
  engineVersion: "canvas2d demo",
  buildConfig: "development",
  heartbeatMs: config.heartbeatMs ?? 2_000,
  flushIntervalMs: config.flushIntervalMs ?? 5_000,
});

const player = { x: 100, y: 100, heading: 0 };
let target: { x: number; y: number } | undefined;
const keys = new Set<string>();
const coins = Array.from({ length: 12 }, (_, i) => ({
  id: i,
  x: 40 + ((i * 137) % 420),
  y: 40 + ((i * 251) % 420),
  taken: false,
}));
let inBog = false;

const map = new Image();
map.src = "/map.png";

addEventListener("keydown", (e) => keys.add(e.key.toLowerCase()));
addEventListener("keyup", (e) => keys.delete(e.key.toLowerCase()));
canvas.addEventListener("click", (e) => {
  const box = canvas.getBoundingClientRect();
  target = {
    x: ((e.clientX - box.left) / box.width) * config.world,
    y: (1 - (e.clientY - box.top) / box.height) * config.world,
  };
});

function inside(z: Config["slowZone"], x: number, y: number): boolean {
  return x >= z.minX && x < z.maxX && y >= z.minY && y < z.maxY;
}

function step(dt: number): void {
  const held = (a: string, b: string) => (keys.has(a) || keys.has(b) ? 1 : 0);
  let dx = held("arrowright", "d") - held("arrowleft", "a");
  let dy = held("arrowup", "w") - held("arrowdown", "s");
  if (dx || dy) {
    target = undefined;
  } else if (target) {
    dx = target.x - player.x;
    dy = target.y - player.y;
    if (Math.hypot(dx, dy) < 2) {
      target = undefined;
      dx = 0;
      dy = 0;
    }
  }
  const len = Math.hypot(dx, dy);
  if (len > 0) {
    const move = Math.min(SPEED * dt, target ? len : Number.POSITIVE_INFINITY);
    player.x = Math.min(config.world - 1, Math.max(1, player.x + (dx / len) * move));
    player.y = Math.min(config.world - 1, Math.max(1, player.y + (dy / len) * move));
    // Compass heading: 0 is north (+y), 90 east (+x).
    player.heading = (Math.atan2(dx, dy) * 180) / Math.PI;
  }
  telemetry.setPosition(player.x, player.y, 0);
  // A top-down camera looking at the player, tilted 60 degrees down, turned with the walk.
  telemetry.setCamera(player.heading, -60);

  const bog = inside(config.slowZone, player.x, player.y);
  if (bog !== inBog) {
    inBog = bog;
    telemetry.track(bog ? "bog_entered" : "bog_left");
  }
  for (const c of coins) {
    if (!c.taken && Math.hypot(c.x - player.x, c.y - player.y) < 10) {
      c.taken = true;
      telemetry.track("coin_collected", {
        attributes: { coin: c.id },
        metrics: { coins_left: coins.filter((k) => !k.taken).length },
      });
    }
  }
}

function draw(): void {
  const s = canvas.width / config.world;
  const toY = (y: number) => (config.world - y) * s;
  if (map.complete) {
    ctx.drawImage(map, 0, 0, canvas.width, canvas.height);
  }
  for (const c of coins) {
    if (!c.taken) {
      ctx.fillStyle = "#f5c542";
      ctx.beginPath();
      ctx.arc(c.x * s, toY(c.y), 5, 0, Math.PI * 2);
      ctx.fill();
    }
  }
  ctx.fillStyle = "#ffffff";
  ctx.beginPath();
  ctx.arc(player.x * s, toY(player.y), 8, 0, Math.PI * 2);
  ctx.fill();
  const st = session.stats();
  hud.textContent = `x ${player.x.toFixed(0)} y ${player.y.toFixed(0)}${inBog ? " (bog: slow)" : ""} · events ${st.tracked} tracked, ${st.delivered} delivered, ${st.queued + st.pending} waiting`;
}

let last = performance.now();
function frame(now: number): void {
  const dt = Math.min(0.1, (now - last) / 1000);
  last = now;
  step(dt);
  draw();
  if (inBog) {
    // The deliberately slow zone: busy work the frame cannot skip.
    const until = performance.now() + BOG_FRAME_MS;
    while (performance.now() < until) {
      // spin
    }
  }
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);

// For scripted play (the browser tests) and the curious in the console.
Object.assign(window, {
  telemetry: session,
  demo: { player, walkTo: (x: number, y: number) => (target = { x, y }) },
});
