// npm run bench:front: what `npm run dev`'s front door (scripts/local/front.ts) costs the local API.
// GET /api/v1/projects at BENCH_FRONT_CONNECTIONS (10) connections for BENCH_FRONT_SECONDS (10) s, through
// the door and straight to wrangler's port on the same stack, alternated BENCH_FRONT_ROUNDS (3) times;
// a table of each round and the medians, then one JSON line.
import { loadavg } from "node:os";
import autocannon from "autocannon";
import { seedProject } from "../drill/seed.js";
import { startFrontDoor } from "../local/front.js";
import { freePort } from "../local/mail.js";
import { withBenchStack } from "./stack.js";

const SECONDS = Number(process.env.BENCH_FRONT_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_FRONT_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_FRONT_ROUNDS ?? 3);
const PORT = Number(process.env.BENCH_FRONT_PORT ?? 8797);

type Run = {
  path: string;
  round: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  load: number;
};

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] ?? 0;
};

async function main() {
  return withBenchStack("front", async ({ stack, serve }) => {
    const { keys } = await seedProject(
      stack.databaseUrl,
      { studio: "Bench Front", game: "Bench Front Game" },
      ["full"] as const,
    );
    const wranglerPort = await freePort();
    await serve(wranglerPort, `http://127.0.0.1:${wranglerPort}`);
    const door = await startFrontDoor({ host: "127.0.0.1", port: PORT, upstreamPort: wranglerPort });
    try {
      const targets = { door: PORT, direct: wranglerPort };
      const headers = { "X-API-Key": keys.full };
      for (const port of Object.values(targets)) {
        await autocannon({
          url: `http://127.0.0.1:${port}/api/v1/projects`,
          connections: 2,
          duration: 2,
          headers,
        });
      }
      const runs: Run[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [path, port] of Object.entries(targets)) {
          const r = await autocannon({
            url: `http://127.0.0.1:${port}/api/v1/projects`,
            connections: CONNECTIONS,
            duration: SECONDS,
            headers,
          });
          runs.push({
            path,
            round,
            rps: Math.round(r.requests.average),
            p50: r.latency.p50,
            p99: r.latency.p99,
            non2xx: r.non2xx + r.errors,
            load: loadavg()[0] ?? 0,
          });
          const last = runs.at(-1) as Run;
          console.log(
            `round ${round} ${path.padEnd(6)} ${String(last.rps).padStart(5)} req/s  p50 ${last.p50} ms  p99 ${last.p99} ms  non-2xx ${last.non2xx}  load ${last.load.toFixed(2)}`,
          );
        }
      }
      const summary = Object.fromEntries(
        Object.keys(targets).map((path) => {
          const mine = runs.filter((r) => r.path === path);
          return [
            path,
            {
              rps: median(mine.map((r) => r.rps)),
              p50_ms: median(mine.map((r) => r.p50)),
              p99_ms: median(mine.map((r) => r.p99)),
              non2xx: mine.reduce((a, r) => a + r.non2xx, 0),
            },
          ];
        }),
      );
      console.log("");
      console.log(
        `GET /api/v1/projects, ${CONNECTIONS} connections, ${SECONDS} s × ${ROUNDS} rounds: medians`,
      );
      console.log("path    req/s  p50 ms  p99 ms  non-2xx");
      for (const [path, s] of Object.entries(summary)) {
        console.log(
          `${path.padEnd(6)} ${String(s.rps).padStart(6)} ${String(s.p50_ms).padStart(7)} ${String(s.p99_ms).padStart(7)} ${String(s.non2xx).padStart(8)}`,
        );
      }
      return {
        connections: CONNECTIONS,
        seconds: SECONDS,
        rounds: ROUNDS,
        ...summary,
        retries: door.retries(),
        runs,
      };
    } finally {
      await door.close();
    }
  });
}

// Printed after everything has shut down, so it stays the last line.
console.log(JSON.stringify(await main()));
