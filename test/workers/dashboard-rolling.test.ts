// dau (the last 24 hours) and mau (the last 30 days) end at the request's now, not at a day's edge: they
// are put together from whole days (daily_actors), whole hours (hourly_players) and the partial hours at
// both ends (the events). One player on each side of every edge, minutes clear of it, must land where
// the reference puts them.
import { beforeAll, expect, it } from "vitest";
import type { GenEvent } from "../support/analytics-dataset.js";
import { awayFromMidnight, getData, ingestAll } from "../support/analytics-ingest.js";
import { refDashboard } from "../support/analytics-reference.js";
import { seedTenant, type Tenant } from "../support/harness.js";

const MIN_MS = 60_000;
const HOUR_MS = 60 * MIN_MS;
const DAY_MS = 24 * HOUR_MS;

let t: Tenant;
let events: GenEvent[];

/** Each player's one event, this long before the seeding's now. */
const PLAYERS: Array<[string, number]> = [
  ["before-the-24h", DAY_MS + 3 * MIN_MS],
  ["first-partial-hour", DAY_MS - 3 * MIN_MS],
  ["whole-hours-ago", 5 * HOUR_MS + 30 * MIN_MS],
  ["this-hour", 2 * MIN_MS],
  ["yesterday", 2 * DAY_MS],
  ["whole-days-ago", 12 * DAY_MS],
  ["month-whole-hours", 30 * DAY_MS - 2 * HOUR_MS],
  ["month-first-minutes", 30 * DAY_MS - 8 * MIN_MS],
];

beforeAll(async () => {
  // Keep the 5-minute span between seeding and reading inside one UTC day.
  await awayFromMidnight(5);
  t = await seedTenant("pro", "Rolling Counts Studio");
  const nowMs = Date.now();
  events = PLAYERS.map(([player, ago], i) => ({
    tsUs: (nowMs - ago) * 1000,
    eventName: "session_start",
    sessionId: `s-${i}`,
    playerId: player,
    buildId: "",
    mapId: "",
    platform: "windows",
  }));
  await ingestAll(t, events);
}, 600_000);

it("counts each player on the side of each edge where their event is", async () => {
  const data = await getData<{ kpis: { dau: number; mau: number; fetchedAt: number } }>(
    t,
    "/dashboard?days=30",
  );
  // Seconds passed since seeding: no event crossed an edge (each is minutes clear of it).
  expect([data.kpis.dau, data.kpis.mau]).toEqual([3, 8]);
  expect(data).toEqual(refDashboard(events, 30, data.kpis.fetchedAt));
});
