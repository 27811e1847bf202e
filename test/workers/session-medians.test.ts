import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { buildRegressions } from "../../workers/api/analytics/regressions.js";
import {
  SETTLE_MS,
  type StoredGrouping,
  sessionMedianDaysDue,
  storeSessionMedianDay,
  usableStoredDays,
} from "../../workers/api/analytics/session-medians.js";
import { verdictFamilies } from "../../workers/api/analytics/session-verdicts.js";
import type { SessionMediansPlanJob } from "../../workers/api/jobs.js";
import { addDays, DAY_MS, dateOf, windowOf } from "../../workers/api/window.js";
import type { GenEvent } from "../support/analytics-dataset.js";
import { clocked, getData, ingestAll } from "../support/analytics-ingest.js";
import { eraseAndWait } from "../support/erasures.js";
import { testClickHouse } from "../support/events.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { normal, rng } from "../support/regressions-dataset.js";
import { waitFor } from "../support/wait.js";

// builds/compare's verdicts from closed days' stored histograms of session medians (analytics/
// session-medians.ts): before any day is stored, after the job stored them, after a late batch into a
// stored day, after a late event of a stored day's single-day session on another day, and after an
// erasure, compare must answer exactly what builds/regressions by=platform answers from every session's
// samples in session_values (its domain function with the stored days off), and the stored days it may
// use must be exactly the valid ones. The same for the sessions' verdicts (session-verdicts.ts), stored
// with the medians: per build and group, equal to their read from session_values alone, which
// session-verdicts.test.ts holds to an independent computation.

const MB = 1_048_576;
const BASE = "8.0.0";
const CAND = "8.1.0";
const JUDGED = ["frame_time", "memory", "gpu_time"] as const;
const VICTIM = "victim-player";

type Group = {
  key: string | null;
  baseline: { sessions: number };
  candidate: { sessions: number };
  diffPct: number | null;
  ci95: [number, number] | null;
  verdict: string;
};
type Diff = {
  metric: string;
  verdict: string | null;
  ci95: [number, number] | null;
  sessionDiffPct: number | null;
  baselineSessions: number | null;
  candidateSessions: number | null;
};

/** The file's clock: noon today, so that "today" and the closed days do not move during the run. */
const NOW = Math.floor(Date.now() / DAY_MS) * DAY_MS + 12 * 3_600_000;
const TODAY = dateOf(NOW);
const dayStartUs = (back: number) => (Math.floor(NOW / DAY_MS) - back) * DAY_MS * 1000;
/** Days back from today: three closed days (stored), yesterday and today (never stored). */
const DAYS_BACK = [5, 4, 3, 1, 0];
const CLOSED = [5, 4, 3].map((b) => addDays(TODAY, -b));

let t: Tenant & { now: number };
const r = rng(4711);

function sample(buildId: string, sessionId: string, playerId: string, tsUs: number, k: number, p: string) {
  const cand = buildId === CAND;
  const noise = () => Math.exp(0.1 * normal(r));
  // Every fifth session stutters once: a frame three times its length (a hitch, session-verdicts.ts).
  const spike = k === 5 && Number(sessionId.slice(sessionId.lastIndexOf("-s") + 2)) % 5 === 0 ? 3 : 1;
  const frameTimeMs = Math.fround(16 * (cand ? 1.07 : 1) * noise() * spike);
  return {
    tsUs,
    eventName: "frame_sample",
    sessionId,
    playerId,
    buildId,
    mapId: k % 2 === 0 ? "arena" : "harbor",
    platform: p,
    perf: {
      frameTimeMs,
      fps: Math.fround(1000 / frameTimeMs),
      memoryUsedBytes: Math.round(2000 * MB * (cand ? 0.9 : 1) * noise()),
      ...(k % 3 === 0 ? {} : { gpuTimeMs: Math.fround(8 * noise()) }),
    },
  } satisfies GenEvent;
}

/** Per build and day, 24 sessions of six samples (on both maps), two thirds on windows. */
function dataset(): GenEvent[] {
  const events: GenEvent[] = [];
  for (const buildId of [BASE, CAND]) {
    for (const back of DAYS_BACK) {
      for (let s = 0; s < 24; s++) {
        const sessionId = `${buildId}-d${back}-s${s}`;
        // The victim owns three baseline sessions of the middle closed day.
        const playerId = buildId === BASE && back === 4 && s < 3 ? VICTIM : `p-${sessionId}`;
        const platform = s % 3 === 2 ? "ps5" : "windows";
        for (let k = 0; k < 6; k++) {
          events.push(
            sample(
              buildId,
              sessionId,
              playerId,
              dayStartUs(back) + (3600 + s * 60 + k) * 1e6,
              k + s,
              platform,
            ),
          );
        }
      }
    }
  }
  // A session across midnight, between two closed days: one unit with one median of its three samples.
  for (const [us, k] of [
    [dayStartUs(3) - 2e6, 0],
    [dayStartUs(3) - 1e6, 1],
    [dayStartUs(3) + 1e6, 2],
  ] as const) {
    events.push(sample(BASE, "midnight", "p-midnight", us, k, "windows"));
  }
  return events;
}

const qs = (q: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(q).flatMap(([k, v]) => (v === undefined ? [] : [[k, v]])));

const FILTERS: Array<{ platform?: string; mapId?: string }> = [
  {},
  { platform: "windows" },
  { platform: "ps5" },
  { mapId: "arena" },
  { mapId: "harbor", platform: "windows" },
];

/** Compare's verdict fields, and builds/regressions' by=platform answer, for every filter and metric. */
async function answers() {
  const out: Array<{ filter: string; metric: string; compare: unknown; reference: unknown }> = [];
  for (const f of FILTERS) {
    const cmp = await getData<{ diffs: Diff[] }>(
      t,
      `/builds/compare?${qs({ baseline: BASE, candidate: CAND, days: "7", fresh: "1", ...f })}`,
    );
    for (const metric of JUDGED) {
      // builds/regressions by=platform as it answers from session_values alone (it too reads the stored
      // days: its own agreement with the reference is in builds-regressions.test.ts).
      const reg: { overall: Group; groups: Group[] } = await buildRegressions(
        testClickHouse(),
        t.projectId,
        windowOf(7, NOW),
        {
          baseline: BASE,
          candidate: CAND,
          metric,
          by: "platform",
          mapId: f.mapId,
          minEffectPct: 3,
          minSessions: 20,
        },
        false,
      );
      const g = f.platform === undefined ? reg.overall : reg.groups.find((x) => x.key === f.platform);
      const d = cmp.diffs.find((x) => x.metric === metric);
      out.push({
        filter: JSON.stringify(f),
        metric,
        compare: {
          verdict: d?.verdict,
          ci95: d?.ci95,
          sessionDiffPct: d?.sessionDiffPct,
          baselineSessions: d?.baselineSessions,
          candidateSessions: d?.candidateSessions,
        },
        reference: {
          verdict: g?.verdict,
          ci95: g?.ci95,
          sessionDiffPct: g?.diffPct,
          baselineSessions: g?.baseline.sessions,
          candidateSessions: g?.candidate.sessions,
        },
      });
    }
  }
  return out;
}

/**
 * The sessions' verdicts of both builds, per group, with and without the stored days, for every map and
 * grouping the tests vary; and the stored days the read with them used.
 */
async function verdicts() {
  const out: Array<{ q: string; stored: unknown; live: unknown; used: string[] }> = [];
  const plain = (f: Awaited<ReturnType<typeof verdictFamilies>>) =>
    [...f].map(([build, side]) => [build, [...side].sort(([a], [b]) => String(a).localeCompare(String(b)))]);
  for (const mapId of [undefined, "arena"]) {
    for (const key of [null, "platform", "gpu"] as Array<StoredGrouping | null>) {
      const q = { builds: [BASE, CAND], mapId, key };
      let used: string[] = [];
      const stored = await verdictFamilies(testClickHouse(), t.projectId, windowOf(7, NOW), q, true, (d) => {
        used = d;
      });
      const live = await verdictFamilies(testClickHouse(), t.projectId, windowOf(7, NOW), q, false);
      out.push({ q: JSON.stringify(q), stored: plain(stored), live: plain(live), used });
    }
  }
  return out;
}

/**
 * Every answer of compare equals the reference's, and every verdict read with the stored days its read
 * from session_values (having used `usedDays`, when given); returns compare's, to compare across states.
 */
async function expectExact(usedDays?: string[]) {
  const all = await answers();
  for (const a of all) {
    expect(a.compare, `${a.filter} ${a.metric}`).toEqual(a.reference);
  }
  for (const v of await verdicts()) {
    expect(v.stored, v.q).toEqual(v.live);
    if (usedDays !== undefined) {
      expect(v.used, v.q).toEqual(usedDays);
    }
  }
  return all.map((a) => a.compare);
}

/** The stored days a 7-day read at NOW may use. */
async function usable(): Promise<string[]> {
  const days = await usableStoredDays(testClickHouse(), t.projectId, addDays(TODAY, -6), addDays(TODAY, 1));
  return days.map((d) => d.day);
}

/** The job over every day due, twice: the first run records the stamps, the second (settled) stores. */
async function runJob(): Promise<string[]> {
  const ch = testClickHouse();
  const due = (await sessionMedianDaysDue(ch, [t.projectId], NOW)).map((d) => d.day);
  for (const day of due) {
    expect(await storeSessionMedianDay(ch, t.projectId, day, NOW), day).toMatch(/^(seen|waiting)$/);
  }
  for (const day of due) {
    expect(await storeSessionMedianDay(ch, t.projectId, day, NOW + SETTLE_MS), day).toBe("stored");
  }
  return due;
}

async function scalar(query: string, params: Record<string, unknown> = {}): Promise<number> {
  const rs = await testClickHouse().query({
    query,
    query_params: { p: t.projectId, ...params },
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ n: string | number }>();
  return Number(row?.n ?? 0);
}

beforeAll(async () => {
  t = clocked(await seedTenant("pro", "Session Medians Studio"), NOW) as Tenant & { now: number };
  await ingestAll(t, dataset());
}, 180_000);

describe("compare's verdicts from stored closed days", () => {
  let first: unknown[];

  it("answer exactly before any day is stored, and after the job stored the closed days", async () => {
    expect(await usable()).toEqual([]);
    first = await expectExact();
    // The candidate's frame time is 7 % worse: the stored path must keep a real verdict, not only agree.
    expect(first[0]).toMatchObject({ verdict: "regressed", baselineSessions: 24 * 5 + 1 });

    expect(await runJob()).toEqual(CLOSED);
    expect(await usable()).toEqual(CLOSED);
    // Nothing is due any more: a second plan finds every closed day current.
    expect(await sessionMedianDaysDue(testClickHouse(), [t.projectId], NOW + SETTLE_MS)).toEqual([]);
    // The single-day sessions are in the histograms (overall, frame time: all 24 per build and day
    // but the session across midnight); that session's rows are carried on both of its days.
    expect(
      await scalar(
        `SELECT sum(sessions) AS n FROM telemetry.session_median_hist
        WHERE project_id = {p:UUID} AND by_map = 0 AND by_key = 0 AND metric = 1`,
      ),
    ).toBe(2 * 3 * 24);
    expect(
      await scalar(
        `SELECT count() AS n FROM telemetry.session_median_carry
        WHERE project_id = {p:UUID} AND session = cityHash64('midnight')`,
      ),
    ).toBeGreaterThanOrEqual(2);
    expect(await expectExact(CLOSED)).toEqual(first);
    // The verdicts of the same sessions, stored with them: judged (six heartbeats each), of every kind.
    const stored = await testClickHouse().query({
      query: `SELECT sum(sessions) AS sessions, sum(good) AS good, sum(acceptable) AS acceptable,
          sum(poor) AS poor, sum(unjudged) AS unjudged, sum(hitches) AS hitches
        FROM telemetry.session_verdict_hist WHERE project_id = {p:UUID} AND by_map = 0 AND by_key = 0`,
      query_params: { p: t.projectId },
      format: "JSONEachRow",
    });
    const [v] = await stored.json<Record<string, string>>();
    expect(Number(v?.sessions)).toBe(2 * 3 * 24);
    expect(Number(v?.unjudged)).toBe(0);
    for (const kind of ["good", "acceptable", "poor", "hitches"]) {
      expect(Number(v?.[kind]), kind).toBeGreaterThan(0);
    }
  });

  it("leave a stored day whose single-day session later shows on another day of the window", async () => {
    // A late sample of a session of five days ago, dated yesterday: its median now spans two days.
    await ingestAll(t, [
      sample(CAND, `${CAND}-d5-s0`, `p-${CAND}-d5-s0`, dayStartUs(1) + 7_200e6, 0, "windows"),
    ]);
    expect(await usable()).toEqual(CLOSED.slice(1));
    await expectExact(CLOSED.slice(1));
  });

  it("leave a closed day that a late batch changed until the job stores it again", async () => {
    await ingestAll(t, [sample(BASE, "late-d3", "p-late-d3", dayStartUs(3) + 7_200e6, 1, "ps5")]);
    expect(await usable()).toEqual([CLOSED[1]]);
    const late = await expectExact([CLOSED[1] as string]);
    expect(late).not.toEqual(first);
    // The day whose stamp changed, and the day five days ago: its stamp holds, but a session it counted
    // now shows yesterday (the test before), so it is stored again without counting that session.
    expect(await runJob()).toEqual([CLOSED[0], CLOSED[2]]);
    expect(await usable()).toEqual(CLOSED);
    expect(await expectExact()).toEqual(late);
    expect(await sessionMedianDaysDue(testClickHouse(), [t.projectId], NOW + SETTLE_MS)).toEqual([]);
  });

  it("leave nothing of an erased player's days, and store them again without the player", async () => {
    const audit = await eraseAndWait(t.projectId, t.keys.full.key, VICTIM);
    expect(audit.status).toBe("completed");
    expect(
      await scalar(
        `SELECT count() AS n FROM telemetry.session_median_days WHERE project_id = {p:UUID} AND day = {d:Date}`,
        { d: CLOSED[1] },
      ),
    ).toBe(0);
    expect(await usable()).toEqual([CLOSED[0], CLOSED[2]]);
    const erased = await expectExact([CLOSED[0], CLOSED[2]] as string[]);
    expect(erased[0]).toMatchObject({ baselineSessions: 24 * 5 + 1 + 1 - 3 });
    expect(await runJob()).toEqual([CLOSED[1]]);
    expect(await usable()).toEqual(CLOSED);
    expect(await expectExact()).toEqual(erased);
    // The stored day holds none of the victim's sessions.
    expect(
      await scalar(
        `SELECT count() AS n FROM telemetry.session_median_carry WHERE project_id = {p:UUID}
        AND session IN (SELECT cityHash64(arrayJoin({s:Array(String)})))`,
        { s: [0, 1, 2].map((s) => `${BASE}-d4-s${s}`) },
      ),
    ).toBe(0);
    expect(
      await scalar(
        `SELECT sum(sessions) AS n FROM telemetry.session_median_hist
        WHERE project_id = {p:UUID} AND day = {d:Date} AND build_id = {b:String}
          AND by_map = 0 AND by_key = 0 AND metric = 1`,
        { d: CLOSED[1], b: BASE },
      ),
    ).toBe(24 - 3);
  });

  it("are stored again through the jobs queue: the plan message fans out one message per day due", async () => {
    await ingestAll(t, [sample(BASE, "late-d3-b", "p-late-d3-b", dayStartUs(3) + 9_000e6, 2, "windows")]);
    expect(await usable()).toEqual(CLOSED.slice(0, 2));
    const plan = (runAt: number): SessionMediansPlanJob => ({
      v: 1,
      kind: "session-medians-plan",
      runAt,
      projectIds: [t.projectId],
    });
    // The first hour's plan records the day's new stamp; the next hour's stores the day.
    const first = NOW + 2 * SETTLE_MS;
    await env.JOBS_QUEUE.send(plan(first));
    await waitFor(
      () =>
        scalar(
          `SELECT count() AS n FROM telemetry.session_median_days
          WHERE project_id = {p:UUID} AND day = {d:Date} AND stored = 0 AND seen_at = {at:UInt64}`,
          { d: CLOSED[2], at: first },
        ),
      (n) => n === 1,
      { timeoutMs: 90_000, message: "the day's new stamp recorded by the queued job" },
    );
    await env.JOBS_QUEUE.send(plan(first + SETTLE_MS));
    await waitFor(usable, (days) => days.length === 3, {
      timeoutMs: 90_000,
      message: "the day stored again by the queued job",
    });
    expect(await usable()).toEqual(CLOSED);
    await expectExact();
  }, 240_000);

  it("answer from session_values alone when a live row belongs to a session a stored day counted", async () => {
    // What a reader sees while an insert's views land one after the other: the late sample's
    // session_values row (yesterday) is visible, its actor_buckets day row not yet, so the stored day still
    // looks valid. Written here as that row alone.
    const session = `${CAND}-d4-s5`;
    await testClickHouse().command({
      query: `INSERT INTO telemetry.session_values
          (project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version,
           frame_q, fps_q, gpu_q, mem_q, session_idx)
        SELECT {p:UUID}, {b:String}, {d:Date}, 'arena', cityHash64({s:String}), 'windows', '', '', '', '',
          quantileExactLowState(0.5)(toFloat32(40)), quantileExactLowState(0.5)(toFloat32(25)),
          quantileExactLowStateIf(0.5)(toFloat32(0), 0), quantileExactLowState(0.5)(toFloat32(1500)),
          (SELECT any(session_idx) FROM telemetry.events WHERE project_id = {p:UUID} AND session_id = {s:String})`,
      query_params: { p: t.projectId, b: CAND, d: addDays(TODAY, -1), s: session },
    });
    expect(await usable()).toEqual(CLOSED);
    // The verdicts read notices it too, and answers from session_values alone.
    await expectExact([]);
  });
});
