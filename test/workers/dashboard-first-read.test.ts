// Issue 41, item 1: the first dashboard read after an ingest that the status says is complete must be
// the exact answer, as every later read is. A studio sends its batches through the real ingest path
// (POST /v1/events -> queue -> consumer -> ClickHouse and its rollup views), polls the project status
// with fresh=1 until every event is counted, and opens the dashboard at once: no barrier of the tests'
// own (insertsSettled) stands between the two, only what the API itself says.
import { beforeAll, describe, expect, it } from "vitest";
import { DAY_US, type GenEvent, generateDataset } from "../support/analytics-dataset.js";
import { toWire } from "../support/analytics-ingest.js";
import { refDashboard } from "../support/analytics-reference.js";
import { batch, gzip } from "../support/batches.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api, ingest } from "../support/http.js";
import { waitFor } from "../support/wait.js";

/** Small batches, as a game flushing often sends them: many deliveries, many inserts. */
const EVENTS_PER_BATCH = 80;

type Dashboard = {
  kpis: { dau: number; mau: number; sessions: number; events: number; fetchedAt: number };
  dailyActiveUsers: Array<{ date: string; count: number }>;
  topEvents: Array<{ event_name: string; count: number }>;
};

let t: Tenant;

type StatusKpis = { totalEvents: number; players24h: number };

/** The project status, recomputed (fresh=1), at `now` if given. */
async function status(now?: number): Promise<StatusKpis> {
  const res = await api(`/v1/projects/${t.projectId}/status?fresh=1`, { key: t.keys.read.key, now });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { kpis: StatusKpis } }).data.kpis;
}

/** The dashboard with its defaults (30 days), or `query`, at `now` if given. */
async function dashboard(query = "", now?: number): Promise<Dashboard> {
  const res = await api(`/v1/projects/${t.projectId}/dashboard${query}`, { key: t.keys.read.key, now });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return (JSON.parse(text) as { data: Dashboard }).data;
}

/**
 * The events of a studio's month, in the order it sends them: the month in time order, then the late
 * ones (an earlier closed day's events that a device held back), and last the events of the two players
 * who played seconds ago, each new in the last 24 hours. Nothing of tomorrow: every event sent is in the
 * dashboard's 90 days, so its `events` and the status's `totalEvents` count the same rows.
 */
function month(nowMs: number): GenEvent[] {
  const { events } = generateDataset(41_001, nowMs);
  const nowUs = nowMs * 1000;
  const todayStartUs = Math.floor(nowMs / 86_400_000) * DAY_US;
  const inOrder = events.filter((e) => e.tsUs < todayStartUs + DAY_US).sort((a, b) => a.tsUs - b.tsUs);
  // Late: every fifth event of three closed days (the day before yesterday, a week ago, three weeks ago).
  const lateDays = new Set([2, 7, 21].map((d) => todayStartUs - d * DAY_US));
  const isLate = (e: GenEvent, i: number) =>
    lateDays.has(Math.floor(e.tsUs / DAY_US) * DAY_US) && i % 5 === 0;
  const late = inOrder.filter(isLate);
  const onTime = inOrder.filter((e, i) => !isLate(e, i));
  const fresh: GenEvent[] = [40, 25].map((secondsAgo, i) => ({
    tsUs: nowUs - secondsAgo * 1_000_000,
    eventName: "frame_sample",
    sessionId: `s-fresh-${i}`,
    playerId: `fresh-${i}`,
    buildId: "1.0.0",
    mapId: "dust",
    platform: "windows",
    pos: { x: 5, y: 5 },
    perf: { fps: 60, frameTimeMs: 16.5 },
  }));
  return [...onTime, ...late, ...fresh];
}

describe("the first dashboard read after an ingest the status calls complete", () => {
  let sent: GenEvent[];

  beforeAll(async () => {
    t = await seedTenant("enterprise", "First Read Studio");
    sent = month(Date.now());
  }, 60_000);

  it("equals the reference, as the reads after it do", async () => {
    const batches: GenEvent[][] = [];
    for (let i = 0; i < sent.length; i += EVENTS_PER_BATCH) {
      batches.push(sent.slice(i, i + EVENTS_PER_BATCH));
    }
    expect(batches.length).toBeGreaterThan(30);
    for (const [i, events] of batches.entries()) {
      const body = batch(events.map(toWire));
      // Every third batch gzip'd, as an SDK compresses the larger ones.
      const zipped = i % 3 === 0;
      const res = await ingest(zipped ? await gzip(body) : body, t.keys.ingest.key, { gzip: zipped });
      expect(res.status, await res.clone().text()).toBe(202);
      // While the consumer inserts: whatever the status counts at an instant, the dashboard read right
      // after it at that same instant holds too (its rollups may hold more, never less).
      const now = Date.now();
      const counted = await status(now);
      const shown = await dashboard("?days=90", now);
      expect(shown.kpis.events, `events after batch ${i}`).toBeGreaterThanOrEqual(counted.totalEvents);
      expect(shown.kpis.dau, `dau after batch ${i}`).toBeGreaterThanOrEqual(counted.players24h);
    }
    // Waited for as the studio waits: the status, recomputed, until it counts every event sent.
    await waitFor(
      async () => (await status()).totalEvents,
      (n) => n >= sent.length,
      {
        timeoutMs: 120_000,
        intervalMs: 20,
        message: (n) => `status counting all ${sent.length} events (had ${n})`,
      },
    );
    const first = await dashboard();
    expect(first).toEqual(refDashboard(sent, 30, first.kpis.fetchedAt));
    // The two players of seconds ago count in the last 24 hours.
    expect(first.kpis.dau).toBeGreaterThanOrEqual(2);
    const later = await dashboard();
    expect(later).toEqual(refDashboard(sent, 30, later.kpis.fetchedAt));
  }, 400_000);
});
