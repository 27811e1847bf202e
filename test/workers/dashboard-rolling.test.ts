// dau (the last 24 hours) and mau (the last 30 days) end at the request's now, not at a day's edge: they
// are the OR of bitmaps of whole days, whole hours and whole minutes (actor_buckets' three grains)
// and the partial minutes at both ends (the events). One player on each side of every
// edge, minutes clear of it, must land where the reference puts them. A late batch into a closed day must
// be counted by the next read.
import { beforeAll, expect, it } from "vitest";
import type { GenEvent } from "../support/analytics-dataset.js";
import { clocked, getData, ingestAll } from "../support/analytics-ingest.js";
import { refDashboard } from "../support/analytics-reference.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import type { Ok } from "../support/schema.js";

const MIN_MS = 60_000;
const HOUR_MS = 60 * MIN_MS;
const DAY_MS = 24 * HOUR_MS;

/**
 * The file's clock: the real time, held back from the next UTC midnight by 5 minutes at most, so an
 * event 4 minutes ahead of it is still today. The reads run at this clock (plus what a test adds), never
 * at the real time, and the ingest (by the real clock, at most 5 minutes later) takes every event.
 */
const NOW = Math.min(Date.now(), Math.ceil(Date.now() / DAY_MS) * DAY_MS - 5 * MIN_MS);

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
  t = clocked(await seedTenant("pro", "Rolling Counts Studio"), NOW);
  events = PLAYERS.map(([player, ago], i) => ({
    tsUs: (NOW - ago) * 1000,
    eventName: "session_start",
    sessionId: `s-${i}`,
    playerId: player,
    buildId: "",
    mapId: "",
    platform: "windows",
  }));
  await ingestAll(t, events);
}, 120_000);

it("counts each player on the side of each edge where their event is", async () => {
  const data = await getData<Ok<"/v1/projects/{id}/dashboard">>(t, "/dashboard?days=30");
  // Read at the seeding's clock: every event is minutes clear of its edge.
  expect(data.kpis.fetchedAt).toBe(NOW);
  expect([data.kpis.dau, data.kpis.mau]).toEqual([3, 8]);
  expect(data).toEqual(refDashboard(events, 30, data.kpis.fetchedAt));
});

const event = (tsUs: number, sessionId: string, playerId: string): GenEvent => ({
  tsUs,
  eventName: "session_start",
  sessionId,
  playerId,
  buildId: "",
  mapId: "",
  platform: "windows",
});

it("counts a late batch into a closed day, and counts a session across midnight once", async () => {
  // The events 4 minutes ahead stay on today: NOW is at least 5 minutes before midnight.
  const nowMs = NOW;
  const u = await seedTenant("pro", "Late Batch Studio");
  const todayUs = Math.floor(nowMs / DAY_MS) * DAY_MS * 1000;
  const dayUs = DAY_MS * 1000;
  const first = [
    event(todayUs - 3 * dayUs + 5 * 3_600_000_000, "s-early", "early"),
    // One session on both sides of a midnight: a row on each day, one session in the window.
    event(todayUs - 2 * dayUs - 120_000_000, "s-night", "owl"),
    event(todayUs - 2 * dayUs + 120_000_000, "s-night", "owl"),
    // The last microsecond of a day and the first of the next.
    event(todayUs - dayUs - 1, "s-edge-1", "edge-last"),
    event(todayUs - dayUs, "s-edge-2", "edge-first"),
    // An anonymous player: the session is the player.
    event(todayUs - dayUs + 3_600_000_000, "s-anon", ""),
    // A player whose latest event is ahead of now (the SDKs may send up to 48 h ahead) still counts in
    // mau through their event 10 days ago; one with only an event ahead does not.
    event((nowMs - 10 * DAY_MS) * 1000, "s-ahead-1", "ahead"),
    event((nowMs + 4 * MIN_MS) * 1000, "s-ahead-2", "ahead"),
    event((nowMs + 4 * MIN_MS) * 1000, "s-ahead-only", "only-ahead"),
    // Both events ahead when inserted; by the read, the first is past and the second still ahead.
    event((nowMs + 45_000) * 1000, "s-hidden", "hidden"),
    event((nowMs + 4 * MIN_MS) * 1000, "s-hidden", "hidden"),
    event((nowMs - 2 * MIN_MS) * 1000, "s-now", "now"),
  ];
  await ingestAll(u, first);
  // The reads run 46 s on, past the hidden player's first event (and before their second).
  const at = clocked(u, nowMs + 46_000);
  const before = await getData<Ok<"/v1/projects/{id}/dashboard">>(at, "/dashboard?days=30");
  expect(before.kpis.fetchedAt).toBe(nowMs + 46_000);
  expect(before).toEqual(refDashboard(first, 30, before.kpis.fetchedAt));
  expect([before.kpis.mau, before.kpis.sessions]).toEqual([8, 10]);
  const again = await getData<Ok<"/v1/projects/{id}/dashboard">>(at, "/dashboard?days=30");
  expect(again).toEqual(refDashboard(first, 30, again.kpis.fetchedAt));

  // Late events into stored days: a new player, and a player the day already counts.
  const late = [
    event(todayUs - 3 * dayUs + 7 * 3_600_000_000, "s-late", "late"),
    event(todayUs - 3 * dayUs + 8 * 3_600_000_000, "s-early", "early"),
    event(todayUs - 2 * dayUs + 3_600_000_000, "s-night", "owl"),
  ];
  await ingestAll(u, late);
  const after = await getData<Ok<"/v1/projects/{id}/dashboard">>(at, "/dashboard?days=30");
  expect(after).toEqual(refDashboard([...first, ...late], 30, after.kpis.fetchedAt));
  // Three days ago: early, owl before midnight, and late.
  expect(after.dailyActiveUsers.at(-4)?.count).toBe(3);
}, 120_000);

it("counts sessions across midnight, paused for days and over the window's first day once", async () => {
  const nowMs = NOW;
  const u = await seedTenant("pro", "Session Days Studio");
  const todayUs = Math.floor(nowMs / DAY_MS) * DAY_MS * 1000;
  const dayUs = DAY_MS * 1000;
  const hourUs = 3_600_000_000;
  /** `h` hours into the day `d` days before today. */
  const at = (d: number, h: number) => todayUs - d * dayUs + h * hourUs;
  const sessions: Array<[string, number[]]> = [
    // Across midnight into today: today's probe of the window's earlier days finds it.
    ["into-today", [at(1, 23.9), at(0, 0.1)]],
    // Across a midnight between two closed days, and over three days in a row.
    ["closed-night", [at(4, 23.5), at(3, 0.5)]],
    ["three-days", [at(12, 22), at(11, 12), at(10, 1)]],
    // Paused for days: seen 10 and 5 days ago and today, nothing in between.
    ["paused", [at(10, 9), at(5, 9), at(0, 0.2)]],
    // The 7-day window's first day is 6 days ago: one across the midnight before it (counted once, on
    // its first day), one paused from before it, and one on its first and last day.
    ["over-first-day", [at(7, 23.8), at(6, 0.3)]],
    ["paused-from-before", [at(8, 12), at(3, 12)]],
    ["first-and-last", [at(6, 0.001), at(0, 0.3)]],
    // The 30-day window's first day (29 days ago) and the midnight before it.
    ["month-edge", [at(30, 23.95), at(29, 0.1), at(2, 10)]],
    // Single days.
    ["plain-1", [at(3, 8)]],
    ["plain-2", [at(0, 0.4)]],
  ];
  const events = sessions.flatMap(([s, times], i) => times.map((tsUs) => event(tsUs, `s-${s}`, `p-${i}`)));
  await ingestAll(u, events);
  const read = async (days: number) => {
    const data = await getData<Ok<"/v1/projects/{id}/dashboard">>(
      clocked(u, nowMs),
      `/dashboard?days=${days}`,
    );
    expect(data).toEqual(refDashboard(events, days, data.kpis.fetchedAt));
    return data.kpis.sessions;
  };
  expect(await read(7)).toBe(9);
  expect(await read(30)).toBe(10);
  for (const days of [7, 14, 30, 90]) {
    await read(days);
  }
  // Late events: "plain-1" (stored 3 days ago, alone) turns out to have been seen 9 days ago too,
  // which changes what the stored day 3 days ago must subtract although its own total did not move;
  // and a new session across the midnight before yesterday.
  const late = [
    event(at(9, 5), "s-plain-1", "p-8"),
    event(at(2, 23.9), "s-late-night", "late"),
    event(at(1, 0.1), "s-late-night", "late"),
  ];
  events.push(...late);
  await ingestAll(u, late);
  for (const days of [7, 14, 30, 90]) {
    await read(days);
  }
  expect(await read(7)).toBe(10);
}, 120_000);
