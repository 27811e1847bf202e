import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { alertRuleProfiles, alertRules } from "../../schema/pg/schema.js";
import { countFailingCells, judgeScope } from "../../workers/api/alerts/cells.js";
import { deliveryRetryDelaySeconds } from "../../workers/api/alerts/deliver.js";
import type { AlertNotification, NotificationMessage } from "../../workers/api/alerts/notification.js";
import worker from "../../workers/api/index.js";
import { windowOf } from "../../workers/api/window.js";
import { hookUrl, json, received, runScheduled, send, waitForDeliveries } from "../support/alerts.js";
import { TEST_APP_URL } from "../support/app-url.js";
import { batch, event, MiB, perf } from "../support/batches.js";
import { insertsSettled, testClickHouse } from "../support/events.js";
import { once, seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, ingest } from "../support/http.js";
import { insertMap, insertProfile } from "../support/records.js";
import type { Ok, OkBody } from "../support/schema.js";
import { waitFor } from "../support/wait.js";

type EvalEvent = Ok<"/v1/projects/{id}/alerts/history">[number];

/** What the test ingested, as plain numbers, for the independent computation of cells. */
type Sample = { mapId: string; platform: string; x?: number; y?: number; fps?: number; tsUs: bigint };

const MAP = "eval-arena";
const CELL = 10;
const FPS_WARN = 30;
const DAYS = 3;
const FAIL_PCT = 20;

/**
 * One studio's arena: a map, two profiles and the scenario's events, ingested. `samples` is what was
 * ingested, as plain numbers, for the independent computation of cells.
 */
type Arena = {
  t: Tenant;
  mapRowId: string;
  everyone: string;
  android: string;
  samples: Sample[];
  ingested: number;
};

/** A rule's two channels on the hook receiver, on paths of their own. */
type Channels = { hookPath: string; slackPath: string; secret: string; hookId: string; slackId: string };

// A small deterministic generator: the data is the same on every run.
function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Expected (failCount, totalCount) computed here, independently of the service's SQL. */
function expected(samples: Sample[], platform: string | null, now = new Date(), cellSize = CELL) {
  const dayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const fromUs = BigInt(dayStart - (DAYS - 1) * 86_400_000) * 1000n;
  const cells = new Map<string, number[]>();
  for (const s of samples) {
    if (s.mapId !== MAP || s.x === undefined || s.y === undefined || s.fps === undefined || s.tsUs < fromUs) {
      continue;
    }
    if (platform !== null && s.platform !== platform) {
      continue;
    }
    const key = `${Math.floor(s.x / cellSize) * cellSize},${Math.floor(s.y / cellSize) * cellSize}`;
    cells.set(key, [...(cells.get(key) ?? []), s.fps]);
  }
  let failCount = 0;
  const failing: string[] = [];
  for (const [key, values] of cells) {
    if (values.reduce((a, b) => a + b, 0) / values.length < FPS_WARN) {
      failCount++;
      failing.push(key);
    }
  }
  const totalCount = cells.size;
  // The worst failing cells as the docs define them: lowest mean fps first, then more samples, then
  // lower x, then lower y; ten at most.
  const worst = failing
    .map((key) => {
      const [x, y] = key.split(",").map(Number) as [number, number];
      const values = cells.get(key) as number[];
      return {
        x,
        y,
        cellSize,
        value: values.reduce((a, b) => a + b, 0) / values.length,
        samples: values.length,
        failingShare: values.filter((v) => v < FPS_WARN).length / values.length,
      };
    })
    .sort((a, b) => a.value - b.value || b.samples - a.samples || a.x - b.x || a.y - b.y)
    .slice(0, 10);
  return {
    failCount,
    totalCount,
    failPercentage: totalCount ? (failCount / totalCount) * 100 : 0,
    failing,
    worst,
  };
}

/** The heatmap page link of an arena's rule and a profile, as the docs spell it. */
function heatmapLink(t: Tenant, profileId: string, cellSize = CELL, days = DAYS): string {
  return (
    `${TEST_APP_URL}/projects/${t.projectId}/heatmap?map=${MAP}&metric=fps&profile=${profileId}` +
    `&build=&cell=${cellSize}&days=${days}`
  );
}

const withLinks = (heatmap: string, cells: ReturnType<typeof expected>["worst"]) =>
  cells.map((c) => ({ ...c, link: `${heatmap}&at=${c.x},${c.y}` }));

/** Platform is each event's own (field 16); the rest of the device context rides the batch (ours). */
async function send_(
  a: Arena,
  events: ReturnType<typeof event>[],
  { platform, ...device }: Record<string, string>,
) {
  const res = await ingest(
    batch(
      events.map((e) => ({ ...e, platform })),
      { device },
    ),
    a.t.keys.ingest.key,
  );
  expect(res.status).toBe(202);
  a.ingested += events.length;
}

async function waitForIngested(a: Arena): Promise<void> {
  const total = await waitFor(
    async () => {
      const res = await api(`/v1/projects/${a.t.projectId}/status?fresh=1`, { key: a.t.keys.read.key });
      return ((await res.json()) as OkBody<"/v1/projects/{id}/status">).data.kpis.totalEvents;
    },
    (n) => n >= a.ingested,
    { intervalMs: 250, message: `${a.ingested} events stored` },
  );
  expect(total).toBe(a.ingested);
}

const WINDOWS = { platform: "windows", resolution: "1920x1080", buildConfig: "release", gpu: "RTX 3060" };
const ANDROID = { platform: "android", resolution: "1080x2400", buildConfig: "release", gpu: "Adreno 650" };

/** Events at grid positions with fps whose cell means straddle the threshold; plus noise to exclude. */
async function ingestScenario(a: Arena): Promise<void> {
  const { samples } = a;
  const rnd = lcg(42);
  const windows: ReturnType<typeof event>[] = [];
  for (let i = 0; i < 240; i++) {
    // Quarter units are exact in Float32, so the service's cells are the test's cells.
    const x = Math.floor(rnd() * 240) / 4 - 30;
    const y = Math.floor(rnd() * 160) / 4 - 20;
    // West of x = 0 runs badly; the east runs well.
    const fps = x < 0 ? 10 + Math.floor(rnd() * 15) : 35 + Math.floor(rnd() * 40);
    windows.push(
      event(i, { mapId: MAP, position: { x, y, z: 0 }, ...perf({ fps, frameTimeMs: 1000 / fps }) }, 120),
    );
    samples.push({ mapId: MAP, platform: "windows", x, y, fps, tsUs: windows[i]?.timestampUs as bigint });
  }
  // Noise the evaluation must ignore: another map, no position, no fps sample, too old.
  const noise = [
    event(1000, { mapId: "other-map", position: { x: -25, y: -15, z: 0 }, ...perf({ fps: 1 }) }, 120),
    event(1001, { mapId: MAP, position: undefined, ...perf({ fps: 1 }) }, 120),
    event(
      1002,
      { mapId: MAP, position: { x: 205, y: 205, z: 0 }, ...perf({ memoryUsedBytes: 900n * MiB }) },
      120,
    ),
    event(1003, { mapId: MAP, position: { x: 105, y: 105, z: 0 }, ...perf({ fps: 2 }) }, 5 * 86_400),
  ];
  for (const e of noise) {
    const p = e.position as { x: number; y: number } | undefined;
    // The wire's 0 is "not collected": no fps sample.
    const fps = e.fps || undefined;
    samples.push({
      mapId: e.mapId as string,
      platform: "windows",
      x: p?.x,
      y: p?.y,
      fps,
      tsUs: e.timestampUs as bigint,
    });
  }
  await send_(a, [...windows, ...noise], WINDOWS);

  const phones: ReturnType<typeof event>[] = [];
  for (let i = 0; i < 80; i++) {
    const x = Math.floor(rnd() * 240) / 4 - 30;
    const y = Math.floor(rnd() * 160) / 4 - 20;
    // Phones run well except in one corner cell.
    const fps = x < -20 && y < -10 ? 12 : 40 + Math.floor(rnd() * 20);
    phones.push(event(2000 + i, { mapId: MAP, position: { x, y, z: 0 }, ...perf({ fps }) }, 120));
    samples.push({ mapId: MAP, platform: "android", x, y, fps, tsUs: phones[i]?.timestampUs as bigint });
  }
  await send_(a, phones, ANDROID);
  await waitForIngested(a);
}

/** A studio of its own with the arena's map, profiles and scenario, ingested. */
async function seedArena(name: string): Promise<Arena> {
  const t = await seedTenant("studio", name);
  const a: Arena = {
    t,
    mapRowId: await insertMap(t.projectId, MAP, { name: "Eval Arena" }),
    everyone: await insertProfile(t.projectId, { name: "Everyone", fpsWarn: FPS_WARN, fpsGood: 60 }),
    android: await insertProfile(t.projectId, { name: "Android", platform: "android", fpsWarn: FPS_WARN }),
    samples: [],
    ingested: 0,
  };
  await ingestScenario(a);
  return a;
}

/**
 * The arena of the tests that only read its data or add rules of their own to it (each with its own
 * channels): seeded by whichever of them runs first, so any one of them runs alone. A test that
 * changes the data or reads the project's whole history seeds its own (seedArena).
 */
const arena = once(() => seedArena("Alert Eval Studio"));

/** A webhook and a Slack channel of the arena's project, on receiver paths of their own. */
async function channels(a: Arena): Promise<Channels> {
  const suffix = crypto.randomUUID();
  const hookPath = `/hook/eval-${suffix}`;
  const slackPath = `/slack/eval-${suffix}`;
  const w = { key: a.t.keys.readwrite.key };
  const hook = await json<Ok<"/v1/projects/{id}/channels", "post">>(
    await send(`/v1/projects/${a.t.projectId}/channels`, w, "POST", {
      kind: "webhook",
      name: "ops",
      url: hookUrl(hookPath),
    }),
    201,
  );
  const slack = await json<Ok<"/v1/projects/{id}/channels", "post">>(
    await send(`/v1/projects/${a.t.projectId}/channels`, w, "POST", {
      kind: "slack",
      name: "qa",
      url: hookUrl(slackPath),
    }),
    201,
  );
  return { hookPath, slackPath, secret: hook.signingSecret as string, hookId: hook.id, slackId: slack.id };
}

/** The file's rule on the arena: both profiles, fps under warn on more than FAIL_PCT % of cells. */
async function createRule(a: Arena, ch?: Channels, name = "Arena frame rate"): Promise<string> {
  const rule = await json<Ok<"/v1/projects/{id}/alerts", "post">>(
    await send(`/v1/projects/${a.t.projectId}/alerts`, { key: a.t.keys.readwrite.key }, "POST", {
      name,
      mapId: a.mapRowId,
      thresholdProfileIds: [a.everyone, a.android],
      metric: "fps",
      thresholdLevel: "warn",
      failPercentage: FAIL_PCT,
      evaluationDays: DAYS,
      cellSize: CELL,
      cooldownMinutes: 60,
      channelIds: ch ? [ch.hookId, ch.slackId] : [],
    }),
    201,
  );
  return rule.id;
}

async function history(t: Tenant, query = "limit=100"): Promise<EvalEvent[]> {
  return json<EvalEvent[]>(
    await api(`/v1/projects/${t.projectId}/alerts/history?${query}`, { key: t.keys.read.key }),
    200,
  );
}

async function ruleHistory(t: Tenant, id: string): Promise<EvalEvent[]> {
  return (await history(t)).filter((e) => e.alertRuleId === id);
}

async function hmacHex(key: string, body: string): Promise<string> {
  const k = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(key),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", k, new TextEncoder().encode(body)));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("alert evaluation, end to end", () => {
  it("the generated data is what the scenario needs", async () => {
    const { samples } = await arena();
    const all = expected(samples, null);
    const phones = expected(samples, "android");
    expect(all.failPercentage).toBeGreaterThan(FAIL_PCT);
    expect(phones.totalCount).toBeGreaterThan(0);
    expect(phones.failCount).toBeGreaterThan(0);
    expect(phones.failPercentage).toBeLessThanOrEqual(FAIL_PCT);
  });

  // Multiples of 25 read telemetry.alert_cells, 5 and 10 the events (workers/api/alerts/cells.ts).
  it.each([5, 10, 25, 50])(
    "cells of %i: failing and evaluated cells equal the independent count",
    async (size) => {
      const a = await arena();
      await insertsSettled();
      const now = Date.now();
      for (const platform of [null, "android"]) {
        const want = expected(a.samples, platform, new Date(now), size);
        const got = await countFailingCells(testClickHouse(), {
          projectId: a.t.projectId,
          mapId: MAP,
          window: windowOf(DAYS, now),
          cellSize: size,
          metric: "fps",
          threshold: FPS_WARN,
          filters: { platform, resolution: null, buildConfig: null, gpu: null, storage: null },
        });
        expect([platform, got]).toEqual([
          platform,
          { failCount: want.failCount, totalCount: want.totalCount },
        ]);
      }
    },
  );

  it.each([5, 10, 25, 50])(
    "cells of %i: the worst failing cells, their means, samples and failing shares equal the independent computation",
    async (size) => {
      const a = await arena();
      await insertsSettled();
      const now = Date.now();
      for (const platform of [null, "android"]) {
        const want = expected(a.samples, platform, new Date(now), size);
        const got = await judgeScope(testClickHouse(), {
          projectId: a.t.projectId,
          mapId: MAP,
          window: windowOf(DAYS, now),
          cellSize: size,
          metric: "fps",
          threshold: FPS_WARN,
          filters: { platform, resolution: null, buildConfig: null, gpu: null, storage: null },
        });
        expect(want.worst.length).toBe(Math.min(10, want.failCount));
        expect([platform, got.worst]).toEqual([platform, want.worst]);
      }
    },
  );

  it("first run: each profile of the bundle evaluated on its own; triggered notifies every channel, signed", async () => {
    const a = await arena();
    const { t, everyone, android, mapRowId } = a;
    const ch = await channels(a);
    const { hookPath, slackPath, secret } = ch;
    const ruleId = await createRule(a, ch);
    // A rule that cannot be evaluated (its profile lacks the threshold; written past validation) must
    // not stop the others.
    const memoryOnly = await insertProfile(t.projectId, { name: "Memory only", memoryWarn: 1 });
    const brokenRuleId = await withDb(async (db) => {
      const [row] = await db
        .insert(alertRules)
        .values({
          projectId: t.projectId,
          name: "Broken",
          mapId: mapRowId,
          metric: "fps",
          thresholdLevel: "warn",
          failPercentage: 1,
          evaluationDays: 1,
          cellSize: 10,
          cooldownMinutes: 0,
        })
        .returning({ id: alertRules.id });
      await db
        .insert(alertRuleProfiles)
        .values({ alertRuleId: row?.id as string, thresholdProfileId: memoryOnly, ordinal: 0 });
      return row?.id as string;
    });

    const now = Date.now();
    await runScheduled(now);

    const all = expected(a.samples, null, new Date(now));
    const phones = expected(a.samples, "android", new Date(now));
    const events = await ruleHistory(t, ruleId);
    expect(events).toHaveLength(2);
    const byProfile = new Map(events.map((e) => [e.thresholdProfileId, e]));
    expect(byProfile.get(everyone)).toMatchObject({
      ruleName: "Arena frame rate",
      metric: "fps",
      status: "triggered",
      failCount: all.failCount,
      totalCount: all.totalCount,
      notified: true,
      thresholdProfileName: "Everyone",
      thresholdProfileDeleted: false,
    });
    expect(byProfile.get(everyone)?.failPercentage).toBeCloseTo(all.failPercentage, 9);
    // The triggered event keeps its worst cells, linked to the heatmap set to the rule's scope.
    expect(all.worst.length).toBe(10);
    expect(byProfile.get(everyone)?.links).toEqual({ heatmap: heatmapLink(t, everyone) });
    expect(byProfile.get(everyone)?.worstCells).toEqual(withLinks(heatmapLink(t, everyone), all.worst));
    // A resolved event lists none but still links to its heatmap.
    expect(byProfile.get(android)?.worstCells).toEqual([]);
    expect(byProfile.get(android)?.links).toEqual({ heatmap: heatmapLink(t, android) });
    expect(byProfile.get(android)).toMatchObject({
      status: "resolved",
      failCount: phones.failCount,
      totalCount: phones.totalCount,
      notified: false,
      thresholdProfileName: "Android",
    });
    expect(await ruleHistory(t, brokenRuleId)).toEqual([]);

    const listed = await json<Ok<"/v1/projects/{id}/alerts">>(
      await api(`/v1/projects/${t.projectId}/alerts`, { key: t.keys.read.key }),
      200,
    );
    expect(listed.find((r) => r.id === ruleId)?.lastStatus).toBe("triggered");

    // The webhook: JSON body, HMAC-SHA256 over exactly those bytes with the secret shown at creation.
    const [delivery] = await waitForDeliveries(hookPath, 1);
    expect(delivery).toBeDefined();
    const d = delivery as NonNullable<typeof delivery>;
    expect(d.headers["content-type"]).toBe("application/json");
    expect(d.headers["x-telemetry-signature"]).toBe(`sha256=${await hmacHex(secret, d.body)}`);
    expect(d.headers["x-telemetry-signature"]).not.toBe(`sha256=${await hmacHex(`${secret}x`, d.body)}`);
    expect(Math.abs(Number(d.headers["x-telemetry-timestamp"]) - Date.now() / 1000)).toBeLessThan(120);
    const payload = JSON.parse(d.body) as AlertNotification;
    expect(payload).toMatchObject({
      type: "alert.triggered",
      eventId: byProfile.get(everyone)?.id,
      projectId: t.projectId,
      rule: {
        id: ruleId,
        name: "Arena frame rate",
        metric: "fps",
        thresholdLevel: "warn",
        failPercentage: FAIL_PCT,
      },
      thresholdProfile: { id: everyone, name: "Everyone", threshold: FPS_WARN },
      map: { id: mapRowId, mapId: MAP, name: "Eval Arena" },
      result: { status: "triggered", failCount: all.failCount, totalCount: all.totalCount },
    });
    expect(d.headers["x-telemetry-delivery"]).toBe(payload.eventId);
    // The new fields ride beside the old ones, which keep their shape.
    expect(payload.links).toEqual({ heatmap: heatmapLink(t, everyone) });
    expect(payload.worstCells).toEqual(withLinks(heatmapLink(t, everyone), all.worst));
    expect(Object.keys(payload)).toEqual([
      "type",
      "eventId",
      "createdAt",
      "projectId",
      "rule",
      "thresholdProfile",
      "map",
      "result",
      "links",
      "worstCells",
    ]);

    // Slack: `{text, blocks}`: the text names the rule and the numbers; the blocks link every worst
    // cell's panel and the heatmap. Unsigned.
    const [post] = await waitForDeliveries(slackPath, 1);
    const slack = JSON.parse(post?.body ?? "{}") as { text: string; blocks: unknown[] };
    expect(slack.text).toContain("Arena frame rate");
    expect(slack.text).toContain(`${all.failCount} of ${all.totalCount} cells`);
    const blocks = JSON.stringify(slack.blocks);
    for (const c of withLinks(heatmapLink(t, everyone), all.worst)) {
      expect(blocks).toContain(`<${c.link}|(${c.x}, ${c.y})>`);
    }
    expect(blocks).toContain(`"url":${JSON.stringify(heatmapLink(t, everyone))}`);
    expect(post?.headers["x-telemetry-signature"]).toBeUndefined();
  });

  it("records nothing while a status holds", async () => {
    const a = await arena();
    const ruleId = await createRule(a);
    await runScheduled();
    expect(await ruleHistory(a.t, ruleId)).toHaveLength(2);
    await runScheduled();
    expect(await ruleHistory(a.t, ruleId)).toHaveLength(2);
  });

  it("a repeat trigger within the cooldown is recorded but not notified; one after it is notified", async () => {
    const a = await arena();
    const { t, everyone, android } = a;
    const ch = await channels(a);
    const ruleId = await createRule(a, ch);
    const w = { key: t.keys.readwrite.key };
    const path = `/v1/projects/${t.projectId}/alerts/${ruleId}`;
    // The runs' clock: the cooldown (60 minutes) counts from the first notification.
    const now = Date.now();
    /** Resolves (no share of cells can exceed 100%) by a run at `at`, and triggers again a second on. */
    const resolveAndTrigger = async (at: number) => {
      await json(await send(path, w, "PATCH", { failPercentage: 100 }), 200);
      await runScheduled(at);
      await json(await send(path, w, "PATCH", { failPercentage: FAIL_PCT }), 200);
      await runScheduled(at + 1000);
    };
    await runScheduled(now);
    await waitForDeliveries(ch.hookPath, 1);
    await resolveAndTrigger(now + 59 * 60_000);
    const all = expected(a.samples, null, new Date(now));
    const held = (await ruleHistory(t, ruleId)).filter((e) => e.thresholdProfileId === everyone);
    expect(held.map((e) => [e.status, e.notified])).toEqual([
      ["triggered", false],
      ["resolved", false],
      ["triggered", true],
    ]);
    expect(held[1]).toMatchObject({ failCount: all.failCount, totalCount: all.totalCount });
    // The phones' profile did not change and recorded nothing new.
    expect((await ruleHistory(t, ruleId)).filter((e) => e.thresholdProfileId === android)).toHaveLength(1);

    // Past the cooldown: notified again. Its delivery is the barrier for the held one, which, had it
    // been sent, was queued before it.
    await resolveAndTrigger(now + 61 * 60_000);
    const after = (await ruleHistory(t, ruleId)).filter((e) => e.thresholdProfileId === everyone);
    expect(after.map((e) => [e.status, e.notified]).slice(0, 2)).toEqual([
      ["triggered", true],
      ["resolved", false],
    ]);
    expect(await waitForDeliveries(ch.hookPath, 2)).toHaveLength(2);
    expect(await waitForDeliveries(ch.slackPath, 2)).toHaveLength(2);
    const ids = (await received(ch.hookPath)).map((d) => (JSON.parse(d.body) as { eventId: string }).eventId);
    expect(ids).toEqual([after[4]?.id, after[0]?.id]);
  });

  it("resolves once the data improves, under the rule's name at that time", async () => {
    const a = await seedArena("Alert Resolve Studio");
    const { t, everyone } = a;
    const ruleId = await createRule(a);
    await runScheduled();
    const before = expected(a.samples, null);
    expect((await ruleHistory(t, ruleId)).find((e) => e.thresholdProfileId === everyone)?.status).toBe(
      "triggered",
    );
    const fixes: ReturnType<typeof event>[] = [];
    for (const [i, key] of before.failing.entries()) {
      const [cx, cy] = key.split(",").map(Number) as [number, number];
      for (let k = 0; k < 12; k++) {
        const x = cx + 0.5 + (k % 4);
        const y = cy + 0.5 + Math.floor(k / 4);
        fixes.push(
          event(5000 + i * 12 + k, { mapId: MAP, position: { x, y, z: 0 }, ...perf({ fps: 144 }) }, 60),
        );
        a.samples.push({
          mapId: MAP,
          platform: "windows",
          x,
          y,
          fps: 144,
          tsUs: fixes.at(-1)?.timestampUs as bigint,
        });
      }
    }
    await send_(a, fixes, WINDOWS);
    await waitForIngested(a);
    await json(
      await send(`/v1/projects/${t.projectId}/alerts/${ruleId}`, { key: t.keys.readwrite.key }, "PATCH", {
        name: "Arena frame rate (renamed)",
      }),
      200,
    );
    await runScheduled();

    const after = expected(a.samples, null);
    expect(after.failPercentage).toBeLessThanOrEqual(FAIL_PCT);
    const [latest] = await ruleHistory(t, ruleId);
    expect(latest).toMatchObject({
      thresholdProfileId: everyone,
      status: "resolved",
      failCount: after.failCount,
      totalCount: after.totalCount,
      notified: false,
      ruleName: "Arena frame rate (renamed)",
    });
    const names = new Set((await ruleHistory(t, ruleId)).map((e) => e.ruleName));
    expect(names).toEqual(new Set(["Arena frame rate", "Arena frame rate (renamed)"]));
  });

  it("pages history newest first", async () => {
    const a = await seedArena("Alert History Studio");
    const { t } = a;
    const ruleId = await createRule(a);
    const path = `/v1/projects/${t.projectId}/alerts/${ruleId}`;
    const w = { key: t.keys.readwrite.key };
    // Everyone: triggered, resolved, triggered, resolved; Android: resolved.
    const now = Date.now();
    for (const [i, failPercentage] of [FAIL_PCT, 100, FAIL_PCT, 100].entries()) {
      await json(await send(path, w, "PATCH", { failPercentage }), 200);
      await runScheduled(now + i * 60_000);
    }
    const full = await history(t);
    expect(full).toHaveLength(5);
    const times = full.map((e) => e.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    expect(await history(t, "limit=2&offset=1")).toEqual(full.slice(1, 3));
    expect(await history(t, `offset=${full.length}`)).toEqual([]);
    expect((await history(t, "limit=1")).map((e) => e.id)).toEqual([full[0]?.id]);
    // Default page: 50.
    expect(await history(t, "")).toEqual(full.slice(0, 50));
  });
});

describe("notification delivery", () => {
  async function deliver(a: Arena, channelId: string, attempts = 1) {
    const { t, everyone, mapRowId } = a;
    const message: NotificationMessage = {
      v: 1,
      channelId,
      alert: {
        type: "alert.triggered",
        eventId: crypto.randomUUID(),
        createdAt: new Date().toISOString(),
        projectId: t.projectId,
        rule: {
          id: crypto.randomUUID(),
          name: "r",
          metric: "fps",
          thresholdLevel: "warn",
          failPercentage: 10,
          evaluationDays: 1,
          cellSize: 10,
        },
        thresholdProfile: { id: everyone, name: "Everyone", threshold: 30 },
        map: { id: mapRowId, mapId: MAP, name: "Eval Arena" },
        result: { status: "triggered", failCount: 1, totalCount: 2, failPercentage: 50 },
      },
    };
    const b = createMessageBatch("telemetry-notifications", [
      { id: "n-1", timestamp: new Date(), attempts, body: message },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(b, env);
    return (await getQueueResult(b, ctx)) as unknown as {
      explicitAcks: string[];
      retryMessages: Array<{ msgId: string }>;
    };
  }

  async function channel({ t }: Arena, path: string): Promise<string> {
    return (
      await json<Ok<"/v1/projects/{id}/channels", "post">>(
        await send(`/v1/projects/${t.projectId}/channels`, { key: t.keys.readwrite.key }, "POST", {
          kind: "webhook",
          name: path,
          url: hookUrl(path),
        }),
        201,
      )
    ).id;
  }

  it("retries a failing endpoint with exponential delay; a refusal or a deleted channel is final", async () => {
    expect([1, 2, 3, 8, 20].map(deliveryRetryDelaySeconds)).toEqual([30, 60, 120, 3600, 3600]);
    const a = await arena();
    const { t } = a;
    const failing = `/hook/fail-${crypto.randomUUID()}`;
    const result = await deliver(a, await channel(a, failing), 3);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages.map((m) => m.msgId)).toEqual(["n-1"]);
    expect(await received(failing)).toHaveLength(1);

    const gone = `/hook/gone-${crypto.randomUUID()}`;
    expect((await deliver(a, await channel(a, gone))).explicitAcks).toEqual(["n-1"]);
    expect(await received(gone)).toHaveLength(1);

    const deleted = await channel(a, `/hook/deleted-${crypto.randomUUID()}`);
    await json(
      await send(`/v1/projects/${t.projectId}/channels/${deleted}`, { key: t.keys.readwrite.key }, "DELETE"),
      200,
    );
    expect((await deliver(a, deleted)).explicitAcks).toEqual(["n-1"]);

    const garbage = createMessageBatch("telemetry-notifications", [
      { id: "junk", timestamp: new Date(), attempts: 1, body: { hello: "world" } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(garbage, env);
    expect(
      ((await getQueueResult(garbage, ctx)) as unknown as { explicitAcks: string[] }).explicitAcks,
    ).toEqual(["junk"]);
  });
});
