// `npm run bench:storage`: bytes on disk per million events for every ClickHouse table, the cost of the
// retention TTLs on inserts, and the time of a retention purge (docs/benchmarks.md, "bench:storage").
// Loads BENCH_STORAGE_EVENTS (default 4M) events of one project with the analytics benchmark's
// generator (90 days, its players following the events) into chdb, about a million at a time (BENCH_CHUNK), alternating the
// migration-0015 TTLs off and on per million; merges every table (OPTIMIZE FINAL: the steady state a
// day later) and reads system.parts; then purges the days before the 45th-newest and times it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@clickhouse/client-web";
import { deleteExpired } from "../../workers/api/data-retention/purge.js";
import { RETAINED_TABLES } from "../../workers/api/data-retention/tables.js";
import { dateOf } from "../../workers/api/window.js";
import { MAX_RETENTION_DAYS } from "../../workers/shared/plans.js";
import { clickhouseQuery, startClickHouseHttp } from "../local/clickhouse-http.js";
import { migrateClickHouse } from "../migrate.js";
import { loadBenchData } from "./analytics-data.js";

const EVENTS = Number(process.env.BENCH_STORAGE_EVENTS ?? 4_000_000);
// The tables with the plan maximum as their only TTL (actor_buckets' hours and minutes have their own
// shorter ones too, 0027_actor_buckets.sql: it keeps all of them throughout).
const TTL_TABLES = RETAINED_TABLES.filter((t) => t.table !== "telemetry.actor_buckets");

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function main() {
  const dir = await mkdtemp(join(tmpdir(), "bench-storage-"));
  const password = crypto.randomUUID();
  const server = await startClickHouseHttp({ dataDir: join(dir, "clickhouse"), user: "default", password });
  const target = { url: server.url, user: "default", password };
  const run = (sql: string) => clickhouseQuery(target.url, { user: "default", password }, sql);
  try {
    await migrateClickHouse(target);
    const project = crypto.randomUUID();
    const seconds: Record<"ttl" | "none", number[]> = { ttl: [], none: [] };
    const rows = async () => Number((await run("SELECT count() FROM telemetry.events FORMAT TSV")).trim());
    // Statement by statement (about BENCH_CHUNK events each), the TTLs off for one and on for the next.
    let t0 = 0;
    let before = 0;
    await loadBenchData(
      target,
      { mainProject: project, mainEvents: EVENTS, otherEvents: 0, otherProjects: [], spanDays: 90 },
      () => {},
      {
        extraMain: 0,
        skipPlan: false,
        beforeChunk: async (i) => {
          for (const t of TTL_TABLES) {
            await run(
              i % 2 === 1
                ? `ALTER TABLE ${t.table} MODIFY TTL ${t.day} + INTERVAL ${MAX_RETENTION_DAYS} DAY SETTINGS materialize_ttl_after_modify = 0`
                : `ALTER TABLE ${t.table} REMOVE TTL`,
            );
          }
          before = await rows();
          t0 = performance.now();
        },
        onChunk: async (done) => {
          const s = (performance.now() - t0) / 1000;
          const loaded = (await rows()) - before;
          const ttl = (done - 1) % 2 === 1;
          seconds[ttl ? "ttl" : "none"].push((s * 1_000_000) / Math.max(1, loaded));
          console.log(
            `statement ${done}: ${loaded.toLocaleString("en")} events in ${s.toFixed(1)} s ${ttl ? "with" : "without"} the TTLs`,
          );
        },
      },
    );
    for (const t of RETAINED_TABLES) {
      await run(`OPTIMIZE TABLE ${t.table} FINAL`);
    }
    const parts = JSON.parse(
      await run(`SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes, sum(data_uncompressed_bytes) AS raw
        FROM system.parts WHERE database = 'telemetry' AND active AND table != 'schema_migrations'
        GROUP BY table ORDER BY bytes DESC FORMAT JSON`),
    ).data as Array<{ table: string; rows: string; bytes: string; raw: string }>;
    const millions = (await rows()) / 1_000_000;
    let total = 0;
    console.log("\ntable | rows per M events | bytes on disk per M events | uncompressed per M");
    for (const p of parts) {
      total += Number(p.bytes);
      console.log(
        `${p.table} | ${Math.round(Number(p.rows) / millions).toLocaleString("en")} | ${(Number(p.bytes) / millions / 1e6).toFixed(2)} MB | ${(Number(p.raw) / millions / 1e6).toFixed(1)} MB`,
      );
    }
    console.log(`total | | ${(total / millions / 1e6).toFixed(2)} MB |`);

    // The purge of a retention of 45 days (half the generated 90), timed; rows deleted per table.
    const ch = createClient({ url: target.url, username: "default", password });
    const horizon = dateOf(Date.now() - 44 * 86_400_000);
    const started = Date.now();
    const deleted = await deleteExpired(ch, [{ id: project, horizon }]);
    const purgeMs = Date.now() - started;
    console.log(`\npurge to ${horizon}: ${purgeMs} ms`, deleted);
    console.log(
      JSON.stringify({
        events: EVENTS,
        insertSecondsPerMillion: { withTtl: median(seconds.ttl), without: median(seconds.none) },
        bytesPerMillion: Object.fromEntries(
          parts.map((p) => [p.table, Math.round(Number(p.bytes) / millions)]),
        ),
        totalBytesPerMillion: Math.round(total / millions),
        purgeMs,
      }),
    );
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
