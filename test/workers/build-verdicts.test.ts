import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RegressionNotification } from "../../workers/api/analytics/verdicts.js";
import { buildsToJudge, judgeBuild } from "../../workers/api/analytics/verdicts.js";
import {
  hookUrl,
  json,
  judgeBuildsOfRun,
  received,
  runScheduled,
  send,
  waitForDeliveries,
} from "../support/alerts.js";
import { TEST_APP_URL } from "../support/app-url.js";
import { batch, event, MiB, perf } from "../support/batches.js";
import { insertsSettled, storedCount, testClickHouse } from "../support/events.js";
import { once, seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, ingest, problemOf } from "../support/http.js";
import type { Ok, Schemas } from "../support/schema.js";
import { waitFor } from "../support/wait.js";

// Verdicts per build (docs/analytics.md, "Verdicts per build"): a build with enough sessions is judged
// against its baseline for every metric, the verdicts are kept and shown on the Builds list, and each
// regressed metric reaches the channels that take build regressions exactly once, webhook and Slack.

const SESSIONS = 24;

function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** SESSIONS sessions of `build`, 4 samples each, `minutesAgo`; frame times around 16 ms × `scale`. */
function sessionsOf(build: string, minutesAgo: number, scale: number, seed: number) {
  const rnd = lcg(seed);
  return Array.from({ length: SESSIONS * 4 }, (_, i) => {
    const ft = (16 + rnd() * 0.6) * scale;
    return event(
      i,
      {
        eventName: "frame_sample",
        sessionId: `${build}-s${Math.floor(i / 4)}`,
        playerId: `${build}-p${Math.floor(i / 4)}`,
        buildId: build,
        mapId: "verdict-map",
        position: { x: 10, y: 10, z: 0 },
        // No GPU time: that metric has no sessions (insufficient data).
        ...perf({
          fps: 1000 / ft,
          frameTimeMs: ft,
          memoryUsedBytes: BigInt(2000 + Math.floor(rnd() * 20)) * MiB,
        }),
        attributes: {},
        metrics: {},
      },
      minutesAgo * 60,
    );
  });
}

type Setup = {
  t: Tenant;
  now: number;
  hook: string;
  slack: string;
  quiet: string;
};

const setup = once(async (): Promise<Setup> => {
  const t = await seedTenant("studio", "Verdict Studio");
  const now = Date.now();
  const events = [
    ...sessionsOf("1.0", 180, 1, 1),
    ...sessionsOf("1.1", 120, 1.2, 2),
    ...sessionsOf("1.2", 60, 1, 3),
  ];
  const res = await ingest(batch(events, { device: { gpu: "RTX 3060" } }), t.keys.ingest.key);
  expect(res.status).toBe(202);
  await waitFor(
    () => storedCount(t.projectId),
    (n) => n >= events.length,
    { intervalMs: 200, message: "the builds' events" },
  );
  await insertsSettled();
  const suffix = crypto.randomUUID();
  const w = { key: t.keys.readwrite.key };
  const channel = async (kind: string, path: string, buildRegressions?: boolean) =>
    json<Ok<"/v1/projects/{id}/channels", "post">>(
      await send(`/v1/projects/${t.projectId}/channels`, w, "POST", {
        kind,
        name: path,
        url: hookUrl(path),
        ...(buildRegressions === undefined ? {} : { buildRegressions }),
      }),
      201,
    );
  const hook = `/hook/verdict-${suffix}`;
  const slack = `/slack/verdict-${suffix}`;
  const quiet = `/hook/verdict-quiet-${suffix}`;
  expect((await channel("webhook", hook, true)).buildRegressions).toBe(true);
  // Created without the option, then switched on with PATCH.
  const s = await channel("slack", slack);
  expect(s.buildRegressions).toBe(false);
  const patched = await json<Ok<"/v1/projects/{id}/channels/{channelId}", "patch">>(
    await send(`/v1/projects/${t.projectId}/channels/${s.id}`, w, "PATCH", { buildRegressions: true }),
    200,
  );
  expect(patched.buildRegressions).toBe(true);
  expect((await channel("webhook", quiet)).buildRegressions).toBe(false);
  return { t, now, hook, slack, quiet };
});

const judge = (s: Setup, buildId: string) =>
  withDb((db) =>
    judgeBuild(
      env,
      testClickHouse(),
      db,
      TEST_APP_URL,
      { projectId: s.t.projectId, buildId },
      new Date(s.now),
    ),
  );

/**
 * The verdict runs both tests read: 1.0 (no baseline), 1.1 twice (against its predecessor 1.0), then
 * 1.0 pinned and 1.2 judged against it. Each outcome is what judgeBuild answered.
 */
const judged = once(async () => {
  const s = await setup();
  const ready = await withDb((db) => buildsToJudge(testClickHouse(), db, s.now));
  const first = await judge(s, "1.0");
  const candidate = await judge(s, "1.1");
  const again = await judge(s, "1.1");
  const pinned = await json<Ok<"/v1/projects/{id}/builds/baseline", "put">>(
    await send(`/v1/projects/${s.t.projectId}/builds/baseline`, { key: s.t.keys.readwrite.key }, "PUT", {
      buildId: "1.0",
    }),
    200,
  );
  const afterPin = await judge(s, "1.2");
  return { s, ready, first, candidate, again, pinned, afterPin };
});

type ListedBuild = Schemas["Build"];

const builds = async (s: Setup) =>
  json<ListedBuild[]>(
    await api(`/v1/projects/${s.t.projectId}/builds?days=7`, { key: s.t.keys.read.key, now: s.now }),
    200,
  );

describe("verdicts per build", () => {
  it("judges a build once against its predecessor and sends one message per regressed metric", async () => {
    const { s, ready, first, candidate, again, afterPin } = await judged();
    expect(
      ready
        .filter((b) => b.projectId === s.t.projectId)
        .map((b) => b.buildId)
        .sort(),
    ).toEqual(["1.0", "1.1", "1.2"]);
    // The first build has no baseline: nothing is kept, and the next run asks again.
    expect(first).toEqual({ kept: 0, notified: 0 });
    // 1.1 runs 20 % slower: frame time and fps regressed (one message each to both channels that take
    // regressions), memory unchanged, GPU time never sent, poor sessions not judged (4 heartbeats a session, too few); all five kept.
    expect(candidate).toEqual({ kept: 5, notified: 4 });
    // Judged again (another run, a retry): nothing more is kept or sent.
    expect(again).toEqual({ kept: 0, notified: 0 });
    // 1.2 against the pinned 1.0: kept, nothing regressed, nothing sent.
    expect(afterPin).toEqual({ kept: 5, notified: 0 });

    const hook = await waitForDeliveries(s.hook, 2);
    const slack = await waitForDeliveries(s.slack, 2);
    const messages = hook.map((d) => JSON.parse(d.body) as RegressionNotification);
    expect(messages.map((m) => m.metric).sort()).toEqual(["fps", "frame_time"]);
    for (const m of messages) {
      expect(m).toMatchObject({
        type: "build.regressed",
        eventId: `build-regressed:${s.t.projectId}:1.1:${m.metric}`,
        projectId: s.t.projectId,
        build: { id: "1.1", baseline: "1.0", baselinePinned: false },
        overall: {
          verdict: "regressed",
          baseline: { sessions: SESSIONS },
          candidate: { sessions: SESSIONS },
        },
        links: {
          compare: `${TEST_APP_URL}/projects/${s.t.projectId}/compare?baseline=1.0&candidate=1.1&days=30`,
          builds: `${TEST_APP_URL}/projects/${s.t.projectId}/builds`,
        },
      });
      // About +20 % frame time, about −17 % fps, the interval wholly on the worse side.
      const [low, high] = m.overall.ci95 as [number, number];
      if (m.metric === "frame_time") {
        expect(m.overall.diffPct).toBeGreaterThan(17);
        expect(low).toBeGreaterThan(3);
      } else {
        expect(m.overall.diffPct).toBeLessThan(-14);
        expect(high).toBeLessThan(-3);
      }
      expect(m.groups.platform).toEqual([expect.objectContaining({ key: "windows", verdict: "regressed" })]);
      expect(m.groups.gpu).toEqual([expect.objectContaining({ key: "RTX 3060", verdict: "regressed" })]);
    }
    expect(hook.map((d) => d.headers["x-telemetry-delivery"]).sort()).toEqual(
      messages.map((m) => m.eventId).sort(),
    );
    for (const d of slack) {
      const body = JSON.parse(d.body) as { text: string; blocks: Array<{ type: string }> };
      expect(body.text).toMatch(/^Build 1\.1 regressed (fps|frame time) against 1\.0: /);
      expect(body.blocks.map((b) => b.type)).toEqual([
        "header",
        "section",
        "section",
        "section",
        "actions",
        "context",
      ]);
    }

    // The next cron run (scheduled() plans the alerts and sends the build judging to the jobs queue,
    // whose consumer judges) lists only 1.0 (no baseline) and sends nothing more.
    const after = await withDb((db) => buildsToJudge(testClickHouse(), db, s.now));
    expect(
      after
        .filter((b) => b.projectId === s.t.projectId)
        .map((b) => b.buildId)
        .sort(),
    ).toEqual(["1.0"]);
    await runScheduled(s.now);
    await judgeBuildsOfRun(s.now);
    expect(await received(s.quiet)).toEqual([]);
    expect(await received(s.hook)).toHaveLength(2);
    expect(await received(s.slack)).toHaveLength(2);
  });

  it("the Builds list shows each build's verdicts; a pinned baseline replaces the predecessor", async () => {
    const { s, pinned } = await judged();
    const w = { key: s.t.keys.readwrite.key };
    expect(pinned).toMatchObject({ buildId: "1.0" });
    const list = await builds(s);
    const byId = Object.fromEntries(list.map((b) => [b.build_id, b]));
    expect(byId["1.0"]).toMatchObject({ pinned_baseline: true, verdict: null });
    expect(byId["1.1"]?.pinned_baseline).toBe(false);
    expect(byId["1.1"]?.verdict).toMatchObject({
      baseline_build_id: "1.0",
      baseline_pinned: false,
      metrics: {
        frame_time: { verdict: "regressed" },
        fps: { verdict: "regressed" },
        memory: { verdict: "no_change" },
        gpu_time: { verdict: "insufficient_data", diff_pct: null, ci95: null },
        // Four heartbeats a session: none judged, so no share to compare.
        poor_session_share: { verdict: "insufficient_data", baseline_sessions: 0, candidate_sessions: 0 },
      },
      session_verdicts: { good: 0, acceptable: 0, poor: 0, unjudged: SESSIONS, poor_share: null },
    });
    expect(byId["1.2"]?.verdict).toMatchObject({
      baseline_build_id: "1.0",
      baseline_pinned: true,
      metrics: { frame_time: { verdict: "no_change" }, fps: { verdict: "no_change" } },
    });
    // Unpinned: answered once, then nothing left to remove.
    const unpin = async () =>
      json<Ok<"/v1/projects/{id}/builds/baseline", "delete">>(
        await send(`/v1/projects/${s.t.projectId}/builds/baseline`, w, "DELETE"),
        200,
      );
    expect(await unpin()).toEqual({ deleted: true });
    expect(await unpin()).toEqual({ deleted: false });
    expect((await builds(s)).find((b) => b.build_id === "1.0")?.pinned_baseline).toBe(false);
  });

  it("refuses a pin without a build id, naming the field, and changes nothing", async () => {
    const s = await setup();
    const res = await send(
      `/v1/projects/${s.t.projectId}/builds/baseline`,
      { key: s.t.keys.readwrite.key },
      "PUT",
      {
        buildId: "",
      },
    );
    expect(res.status).toBe(400);
    expect((await problemOf(res)).field).toBe("json.buildId");
    expect((await builds(s)).filter((b) => b.pinned_baseline)).toEqual([]);
  });
});
