import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { dispatchIngestQueue } from "../../workers/ingest/queues.js";
import { sealEnvelope } from "../../workers/shared/envelope.js";
import { type GenEvent, generateDataset } from "../support/analytics-dataset.js";
import { clocked, getData, ingestAll, toWire } from "../support/analytics-ingest.js";
import {
  hasPerf,
  refBuilds,
  refCompare,
  refDashboard,
  refFunnel,
  refHeatmap,
  refInsights,
  refRetention,
} from "../support/analytics-reference.js";
import { batch } from "../support/batches.js";
import { samplesOnly } from "../support/compare.js";
import { insertsSettled, testClickHouse } from "../support/events.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { ingest } from "../support/http.js";
import type { Ok } from "../support/schema.js";

/**
 * The rollups' materialized views count every row that reaches telemetry.events, so a row stored twice
 * would be counted twice in them forever (the events' ReplacingMergeTree cannot undo that). Batches
 * redelivered through the real paths, an SDK resending the same bytes over HTTP and the queue
 * redelivering a message, must leave every rollup-backed answer equal to the reference over the events
 * counted once.
 */
/** The file's clock: the data is generated around this instant and every read and reference is at it. */
const NOW = Date.now();

let t: Tenant;
let events: GenEvent[];

async function runQueue(messages: Array<{ id: string; bytes: Uint8Array; attempts: number }>) {
  const b = createMessageBatch(
    "telemetry-events",
    messages.map((m) => ({
      id: m.id,
      timestamp: new Date(),
      attempts: m.attempts,
      body: m.bytes.buffer.slice(m.bytes.byteOffset, m.bytes.byteOffset + m.bytes.byteLength),
    })),
  );
  const ctx = createExecutionContext();
  await dispatchIngestQueue(b, env);
  return (await getQueueResult(b, ctx)) as unknown as { explicitAcks: string[] };
}

async function rollupSum(table: string, column: string): Promise<number> {
  const rs = await testClickHouse().query({
    query: `SELECT sum(${column}) AS n FROM telemetry.${table} WHERE project_id = {p:UUID}`,
    query_params: { p: t.projectId },
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ n: string | number }>();
  return Number(row?.n ?? 0);
}

beforeAll(async () => {
  t = clocked(await seedTenant("enterprise", "Redelivery Rollups Studio"), NOW);
  const all = generateDataset(7714, NOW).events;
  events = all.slice(0, 1200);
  const overHttp = events.slice(0, 500);
  const overQueue = events.slice(500, 1000);
  const last = events.slice(1000);

  // An SDK batch, then the SDK resending the very same bytes (say, after a lost response).
  await ingestAll(t, overHttp);
  const resent = await ingest(batch(overHttp.map(toWire)), t.keys.ingest.key);
  expect(resent.status).toBe(202);

  // A queue message, then the queue redelivering it inside another batch and once more alone.
  const envelope = sealEnvelope(
    {
      v: 1,
      projectId: t.projectId,
      tenantId: t.tenantId,
      batchKey: "rollups-redelivery-1",
      receivedAt: Date.now(),
      encoding: "identity",
      eventCount: overQueue.length,
    },
    batch(overQueue.map(toWire)),
  );
  expect((await runQueue([{ id: "m-1", bytes: envelope, attempts: 1 }])).explicitAcks).toEqual(["m-1"]);
  expect((await runQueue([{ id: "m-1", bytes: envelope, attempts: 2 }])).explicitAcks).toEqual(["m-1"]);

  // The resent HTTP batch was queued before this one: once this one is stored, that one was consumed.
  await ingestAll(t, last);
  expect((await runQueue([{ id: "m-1", bytes: envelope, attempts: 3 }])).explicitAcks).toEqual(["m-1"]);
  await insertsSettled();
}, 240_000);

describe("redelivered batches are counted once by every rollup", () => {
  it("rollup totals: every event once", async () => {
    expect(await rollupSum("daily_events", "events")).toBe(events.length);
    // heatmap_cells holds the performance-bearing events with a position.
    expect(await rollupSum("heatmap_cells", "events")).toBe(
      events.filter((e) => e.pos !== undefined && hasPerf(e)).length,
    );
  });

  it("dashboard (events and top events from daily_events)", async () => {
    const data = await getData<Ok<"/v1/projects/{id}/dashboard">>(t, "/dashboard?days=30");
    expect(data).toEqual(refDashboard(events, 30, data.kpis.fetchedAt));
  });

  it("heatmap in events mode (read from the events)", async () => {
    const q = { mapId: "dust", cellSize: 25, days: 30, eventName: "level_up" };
    expect(await getData(t, "/heatmap?mapId=dust&cellSize=25&days=30&eventName=level_up")).toEqual(
      refHeatmap(events, q, NOW),
    );
  });

  it("heatmap from heatmap_cells, performance mode: cells, counts and percentiles", async () => {
    type Cell = {
      x: number;
      y: number;
      event_count: number;
      p05_fps: number | null;
      max_memory: number | null;
    };
    const data = await getData<Cell[]>(t, "/heatmap?mapId=dust&cellSize=50&days=30&tails=1");
    const ref = refHeatmap(events, { mapId: "dust", cellSize: 50, days: 30, tails: true }, NOW) as Cell[];
    const shape = (c: Cell) => [c.x, c.y, c.event_count, c.p05_fps, c.max_memory];
    expect(data.map(shape)).toEqual(ref.map(shape));
  });

  it("insights counts by event name", async () => {
    const q = { metric: "count", groupBy: "event_name", days: 30, limit: 20 } as const;
    expect(await getData(t, "/insights?metric=count&groupBy=event_name&days=30&limit=20")).toEqual(
      refInsights(events, q, NOW),
    );
  });

  it("builds and builds/compare from build_days and compare_rollup", async () => {
    type Build = { build_id: string; event_count: number };
    const builds = await getData<Build[]>(t, "/builds?days=30&fresh=1");
    const ref = refBuilds(events, 30, NOW);
    expect(builds.map((b) => [b.build_id, b.event_count])).toEqual(
      ref.map((b) => [b.build_id, b.event_count]),
    );
    const [candidate, baseline] = ref.map((b) => b.build_id);
    const q = { baseline: baseline ?? "", candidate: candidate ?? "", days: 30 };
    expect(
      samplesOnly(
        await getData(t, `/builds/compare?baseline=${q.baseline}&candidate=${q.candidate}&days=30&fresh=1`),
      ),
    ).toEqual(refCompare(events, q, NOW));
  });

  it("retention and a funnel with a repeated step, from actor_buckets and funnel_events", async () => {
    expect(await getData(t, "/retention?days=30")).toEqual(refRetention(events, 30, NOW));
    const steps = ["match_start", "match_start", "match_end"];
    expect(await getData(t, `/funnels?steps=${steps.join(",")}&window=86400&days=30`)).toEqual(
      refFunnel(events, steps, 86400, 30, NOW),
    );
  });
});
