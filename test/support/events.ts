import { env } from "cloudflare:test";
import { expect } from "vitest";
import { createKey } from "../../workers/api/bootstrap.js";
import { openClickHouse } from "../../workers/shared/clickhouse.js";
import { configOf } from "../../workers/shared/config.js";
import { batch, event, gzip } from "./batches.js";
import { once, seedTenant, withDb } from "./harness.js";
import { ingest } from "./http.js";
import { waitFor } from "./wait.js";

type EventInit = ReturnType<typeof event>;

/** The test's own ClickHouse client, for counting what the Worker wrote. */
export function testClickHouse() {
  return openClickHouse(configOf(env));
}

export async function storedCount(projectId: string, where = "1"): Promise<number> {
  const rs = await testClickHouse().query({
    query: `SELECT count() AS n FROM telemetry.events WHERE project_id = {p:UUID} AND ${where}`,
    query_params: { p: projectId },
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ n: string | number }>();
  return Number(row?.n ?? 0);
}

export async function ingestKeyFor(projectId: string): Promise<string> {
  return withDb(async (db) => (await createKey(db, projectId, "ingest")).key);
}

/** Sends events through the real ingest path and waits until the consumer stored all of them. */
export async function ingestAndWait(
  projectId: string,
  ingestKey: string,
  events: EventInit[],
): Promise<void> {
  const before = await storedCount(projectId);
  const res = await ingest(await gzip(batch(events)), ingestKey, { gzip: true });
  expect(res.status).toBe(202);
  await waitFor(
    () => storedCount(projectId),
    (n) => n >= before + events.length,
    { intervalMs: 200, message: `the events of ${projectId}` },
  );
  await insertsSettled();
}

/**
 * An INSERT into the events commits the events' part first and then each materialized view's part,
 * so a read of the events can see rows that a rollup does not hold yet. Waits until no INSERT is
 * running, so the rollups hold what the events hold.
 */
export async function insertsSettled(): Promise<void> {
  await waitFor(
    async () => {
      const rs = await testClickHouse().query({
        query: "SELECT count() AS n FROM system.processes WHERE query_kind = 'Insert'",
        format: "JSONEachRow",
      });
      const [row] = await rs.json<{ n: string | number }>();
      return Number(row?.n ?? 0);
    },
    (running) => running === 0,
    { intervalMs: 50, message: "no INSERT running" },
  );
}

/** The barrier's own project and ingest key, made once per file. */
const barrierProject = once(async () => {
  const s = await seedTenant("pro", "Queue Barrier");
  return { projectId: s.projectId, key: s.keys.ingest.key };
});

/**
 * The "nothing more arrives" barrier of the events queue: every batch accepted before this call has
 * been consumed and its rows are written. Sends one event of a project of its own and waits until it
 * is stored: the queue hands its consumer one batch at a time, in order (Miniflare's broker), so once
 * that event is stored every message ahead of it has been consumed; then no INSERT may still be running.
 */
export async function eventsQueueSettled(): Promise<void> {
  const { projectId, key } = await barrierProject();
  // A new batch each time: its own timestamp and id, so never a retry of an earlier one.
  await ingestAndWait(projectId, key, [event(0, { sessionId: crypto.randomUUID() })]);
}
