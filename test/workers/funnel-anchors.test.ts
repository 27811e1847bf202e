import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { projects, tenants } from "../../schema/pg/schema.js";
import {
  type FunnelDefinition,
  recentDefinitions,
  runFunnelAnchorsJob,
  usableHours,
} from "../../workers/api/analytics/funnel-anchors.js";
import { openDb } from "../../workers/api/db.js";
import { FunnelAnchorsJob } from "../../workers/api/jobs.js";
import { windowOf } from "../../workers/api/window.js";
import { configOf } from "../../workers/shared/config.js";
import type { GenEvent } from "../support/analytics-dataset.js";
import { type ClockedTenant, clocked, getData, ingestAll } from "../support/analytics-ingest.js";
import { refFunnel } from "../support/analytics-reference.js";
import { eraseAndWait } from "../support/erasures.js";
import { testClickHouse } from "../support/events.js";
import { seedTenant } from "../support/harness.js";

// Funnels from stored anchor hours (workers/api/analytics/funnel-anchors.ts, docs/analytics.md
// "Funnels"): every answer equals the reference computed from the events, whether the hours are
// live, stored, or stored and then invalidated by a late batch or an erasure.

/** The file's clock: the data is placed around this instant and every read and job runs at it. */
const NOW = Date.now();
const HOUR_US = 3_600_000_000;
const DAY_US = 24 * HOUR_US;
const S = 1_000_000;
const todayUs = Math.floor(NOW / 86_400_000) * DAY_US;
/**
 * The studio keeps 12 days (the data spans 10): the job stores the hours of the retained days only, one
 * message a day of hours, so a run stores every hour in a dozen messages per definition.
 */
const RETAINED_DAYS = 12;
const HORIZON_MS = Math.floor(NOW / 86_400_000) * 86_400_000 - (RETAINED_DAYS - 1) * 86_400_000;

const DEFS: Array<{ steps: string[]; window: number; days: number }> = [
  { steps: ["match_start", "level_up", "match_end"], window: 3600, days: 7 },
  { steps: ["match_start", "level_up", "match_end"], window: 86400, days: 30 },
  { steps: ["session_start", "match_start", "purchase", "match_end"], window: 21600, days: 14 },
];
const REPEATED = { steps: ["match_start", "match_start", "match_end"], window: 86400, days: 30 };

function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ev = (playerId: string, eventName: string, tsUs: number, sessionId = `s-${playerId}`): GenEvent => ({
  tsUs,
  eventName,
  sessionId,
  playerId,
  buildId: "1.0.0",
  mapId: "dust",
  platform: "windows",
});

/** Players with sessions of step-like events over the last 10 days, and the scripted edge cases. */
function dataset(): GenEvent[] {
  const r = rng(4711);
  const names = ["session_start", "match_start", "level_up", "purchase", "match_end", "ui_click"];
  const out: GenEvent[] = [];
  for (let p = 0; p < 40; p++) {
    const player = p % 9 === 0 ? "" : `p-${p}`;
    for (let s = 0; s < 6; s++) {
      const session = `s-${p}-${s}`;
      let t = todayUs - Math.floor(r() * 10 * DAY_US);
      for (let i = 0; i < 3 + Math.floor(r() * 6); i++) {
        t += Math.floor(r() * 50 * 60 * S);
        if (t < NOW * 1000 - HOUR_US) {
          out.push(ev(player, names[Math.floor(r() * names.length)] as string, t, session));
        }
      }
    }
  }
  // A chain crossing an anchor-hour boundary: step 1 in the last second of an hour three days ago.
  const h3 = todayUs - 3 * DAY_US + 10 * HOUR_US;
  out.push(ev("x-cross", "match_start", h3 - S), ev("x-cross", "level_up", h3 + 30 * S));
  out.push(ev("x-cross", "match_end", h3 + 1800 * S));
  // The last step exactly `window` (1 h) after step 1; one a microsecond later.
  const h4 = todayUs - 4 * DAY_US + 14 * HOUR_US + 17 * S;
  out.push(ev("x-exact", "match_start", h4), ev("x-exact", "level_up", h4 + 10 * S));
  out.push(ev("x-exact", "match_end", h4 + 3600 * S));
  out.push(ev("x-late", "match_start", h4), ev("x-late", "level_up", h4 + 10 * S));
  out.push(ev("x-late", "match_end", h4 + 3600 * S + 1));
  // Two anchors of one player in different hours: the later one goes further.
  const h5 = todayUs - 5 * DAY_US + 8 * HOUR_US;
  out.push(ev("x-two", "match_start", h5), ev("x-two", "match_start", h5 + 2 * HOUR_US));
  out.push(
    ev("x-two", "level_up", h5 + 2 * HOUR_US + 60 * S),
    ev("x-two", "match_end", h5 + 2 * HOUR_US + 90 * S),
  );
  return out;
}

/** A late batch: x-stall's chain, anchored six days ago, gets its missing middle step. */
const STALL = todayUs - 6 * DAY_US + 9 * HOUR_US + 5 * S;
const stalled = [ev("x-stall", "match_start", STALL), ev("x-stall", "match_end", STALL + 600 * S)];
const lateBatch = [ev("x-stall", "level_up", STALL + 300 * S)];

let t: ClockedTenant;
let sent: GenEvent[];

async function expectReference(events: GenEvent[]) {
  const answers = [];
  for (const d of [...DEFS, REPEATED]) {
    const data = await getData(t, `/funnels?steps=${d.steps.join(",")}&window=${d.window}&days=${d.days}`);
    expect(data, `${d.steps.join(",")} ${d.window}`).toEqual(
      refFunnel(events, d.steps, d.window, d.days, NOW),
    );
    answers.push(data);
  }
  return answers;
}

/** Runs the job for each definition as its consumer would, message after message, until no hours remain. */
async function storeAll() {
  for (const d of DEFS) {
    const job = FunnelAnchorsJob.parse({
      v: 1,
      kind: "funnel-anchors",
      runAt: NOW,
      projectId: t.projectId,
      steps: d.steps,
      windowS: d.window,
    });
    for (let i = 0; i < RETAINED_DAYS + 2; i++) {
      const outcome = await runFunnelAnchorsJob(env, job);
      expect(outcome.skipped).toBe(0);
      if (!outcome.more) {
        break;
      }
    }
  }
}

/** The stored hours a read of `d` can use now. */
async function usable(d: (typeof DEFS)[number]) {
  const w = windowOf(d.days, NOW, HORIZON_MS);
  const def: FunnelDefinition = { steps: d.steps, windowS: d.window };
  return usableHours(testClickHouse(), t.projectId, def, w.fromMs, w.toMs, await dataVersion());
}

/** The project's data version (Postgres), which an erasure bumps. */
async function dataVersion(): Promise<number> {
  const { db, close } = openDb(configOf(env));
  try {
    const [row] = await db
      .select({ v: projects.dataVersion })
      .from(projects)
      .where(eq(projects.id, t.projectId))
      .limit(1);
    return row?.v ?? 0;
  } finally {
    await close();
  }
}

/** Hours of the project stored under more than one stamp (any definition). */
async function staleMarkers(): Promise<number> {
  const rs = await testClickHouse().query({
    query: `SELECT count() AS n FROM (
        SELECT definition, hour FROM telemetry.funnel_anchors WHERE project_id = {p:UUID} AND level = 0
        GROUP BY definition, hour HAVING uniqExact(stamp) > 1)`,
    query_params: { p: t.projectId },
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ n: string | number }>();
  return Number(row?.n ?? 0);
}

async function anchorRows(): Promise<number> {
  const rs = await testClickHouse().query({
    query: "SELECT count() AS n FROM telemetry.funnel_anchors WHERE project_id = {p:UUID}",
    query_params: { p: t.projectId },
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ n: string | number }>();
  return Number(row?.n ?? 0);
}

beforeAll(async () => {
  t = clocked(await seedTenant("pro", "Funnel Anchors Studio"), NOW);
  const { db, close } = openDb(configOf(env));
  try {
    await db.update(tenants).set({ retentionDays: RETAINED_DAYS }).where(eq(tenants.id, t.tenantId));
  } finally {
    await close();
  }
  sent = [...dataset(), ...stalled];
  await ingestAll(t, sent);
}, 120_000);

describe("funnels from stored anchor hours", () => {
  let live: unknown[];

  it("the first read is live, stores nothing and records the distinct-step definitions", async () => {
    live = await expectReference(sent);
    expect(await anchorRows()).toBe(0);
    const defs = await recentDefinitions(testClickHouse(), NOW - 86_400_000);
    const mine = defs.filter((d) => d.projectId === t.projectId);
    expect(mine.map((d) => [d.windowS, d.steps.join(",")]).sort()).toEqual(
      DEFS.map((d) => [d.window, d.steps.join(",")]).sort(),
    );
  });

  it("the job stores the closed hours; the answers are the same, now mostly from stored hours", async () => {
    await storeAll();
    expect(await anchorRows()).toBeGreaterThan(0);
    for (const d of DEFS) {
      const hours = await usable(d);
      // Every hour of the window whose chains ended before NOW, from the window's first.
      const w = windowOf(d.days, NOW, HORIZON_MS);
      const closed = Math.floor((NOW - d.window * 1000) / 3_600_000) - w.fromMs / 3_600_000;
      expect(hours.size, d.steps.join(",")).toBe(closed);
    }
    expect(await expectReference(sent)).toEqual(live);
    // A second run finds nothing left to store.
    const again = await runFunnelAnchorsJob(
      env,
      FunnelAnchorsJob.parse({
        v: 1,
        kind: "funnel-anchors",
        runAt: NOW,
        projectId: t.projectId,
        steps: DEFS[0]?.steps,
        windowS: DEFS[0]?.window,
      }),
    );
    expect(again).toEqual({ stored: 0, skipped: 0, more: false });
  });

  it("a late batch into a stored hour: its days' stamps change, the hours are live until stored again", async () => {
    const before = await usable(DEFS[0] as (typeof DEFS)[number]);
    sent = [...sent, ...lateBatch];
    await ingestAll(t, lateBatch);
    const after = await usable(DEFS[0] as (typeof DEFS)[number]);
    // The late event's hour (and the other hours whose events can lie on its day) is no longer usable.
    expect(after.has(Math.floor(STALL / HOUR_US) * 3_600_000)).toBe(false);
    expect(after.size).toBeLessThan(before.size);
    const answers = await expectReference(sent);
    // The late event completed x-stall's chain: the answer moved.
    expect(answers[0]).not.toEqual(live[0]);
    await storeAll();
    expect((await usable(DEFS[0] as (typeof DEFS)[number])).size).toBe(before.size);
    expect(await expectReference(sent)).toEqual(answers);
    // The hours stored again keep one result each: their stale rows were deleted.
    expect(await staleMarkers()).toBe(0);
  });

  it("an erasure: the player's days are stored no more, the answers leave them out, then stored again", async () => {
    const victim = "x-exact";
    const audit = await eraseAndWait(t.projectId, t.keys.full.key, victim);
    expect(audit.status).toBe("completed");
    sent = sent.filter((e) => e.playerId !== victim);
    const erasedHour = Math.floor((todayUs - 4 * DAY_US + 14 * HOUR_US) / HOUR_US) * 3_600_000;
    expect((await usable(DEFS[0] as (typeof DEFS)[number])).has(erasedHour)).toBe(false);
    await expectReference(sent);
    await storeAll();
    expect((await usable(DEFS[0] as (typeof DEFS)[number])).has(erasedHour)).toBe(true);
    await expectReference(sent);
  });
});
