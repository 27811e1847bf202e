import { env } from "cloudflare:test";
import { expect } from "vitest";
import { createKey } from "../../workers/api/bootstrap.js";
import { openClickHouse } from "../../workers/shared/clickhouse.js";
import { configOf } from "../../workers/shared/config.js";
import { batch, type event, gzip } from "./batches.js";
import { withDb } from "./harness.js";
import { ingest } from "./http.js";

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
  const deadline = Date.now() + 30_000;
  while ((await storedCount(projectId)) < before + events.length) {
    if (Date.now() > deadline) {
      throw new Error(`events of ${projectId} did not arrive`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  await insertsSettled();
}

/**
 * An INSERT into the events commits the events' part first and then each materialized view's part,
 * so a read of the events can see rows that a rollup does not hold yet. Waits until no INSERT is
 * running, so the rollups hold what the events hold.
 */
export async function insertsSettled(): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const rs = await testClickHouse().query({
      query: "SELECT count() AS n FROM system.processes WHERE query_kind = 'Insert'",
      format: "JSONEachRow",
    });
    const [row] = await rs.json<{ n: string | number }>();
    if (Number(row?.n ?? 0) === 0 || Date.now() > deadline) {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
