import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type Dashboard,
  SCREENSHOTS,
  type SdkEvent,
  startDashboard,
  uploadMap,
} from "../support/dashboard.js";

// The Compare page's verdicts in headless Chromium, on seeded telemetry: per metric with intervals,
// per group (platform) and the map's significant cells, each checked against builds/compare and
// builds/regressions; and a difference inside the noise (four sessions a build) not called a regression.

let d: Dashboard;

/** 30 sessions × 3 samples of `build` on `platform` at (x, y), session k at fps × (1 ± up to 4 %). */
function sessions(build: string, platform: string, x: number, fps: number): SdkEvent[] {
  const now = BigInt(Date.now() - 120_000) * 1000n;
  return Array.from({ length: 90 }, (_, i) => {
    const k = Math.floor(i / 3);
    const f = fps * (1 + (((k * 7919) % 9) - 4) / 100);
    return {
      eventName: "perf_sample",
      timestampUs: now - BigInt(i) * 1000n,
      sessionId: `${build}-${platform}-${k}`,
      playerId: `${platform}-${k}`,
      buildId: build,
      platform,
      mapId: "harbor",
      position: { x: x + (i % 5), y: 12 + (i % 7), z: 0 },
      fps: f,
      frameTimeMs: 1000 / f,
      memoryUsedBytes: 2048n * 1_048_576n,
      gpuTimeMs: 8,
    };
  });
}

/** Four sessions per build, the candidate 3.45 % slower: a higher p50 that is noise. */
function fewSessions(build: string, fps: number): SdkEvent[] {
  const now = BigInt(Date.now() - 60_000) * 1000n;
  return Array.from({ length: 16 }, (_, i) => ({
    eventName: "perf_sample",
    timestampUs: now - BigInt(i) * 1000n,
    sessionId: `${build}-few-${i % 4}`,
    playerId: `few-${i % 4}`,
    buildId: build,
    platform: "Windows",
    mapId: "harbor",
    position: { x: 400 + (i % 4), y: 400, z: 0 },
    fps: fps * (1 + (i % 4) / 100),
    frameTimeMs: 1000 / (fps * (1 + (i % 4) / 100)),
    memoryUsedBytes: 2048n * 1_048_576n,
    gpuTimeMs: 8,
  }));
}

/** `good` smooth sessions (12 ms frames) and `poor` GPU-bound ones (25 ms, 22 of them GPU), 8 heartbeats each. */
function judgedSessions(build: string, good: number, poor: number): SdkEvent[] {
  const now = BigInt(Date.now() - 300_000) * 1000n;
  return Array.from({ length: good + poor }, (_, k) =>
    Array.from({ length: 8 }, (_, i): SdkEvent => {
      const slow = k >= good;
      return {
        eventName: "perf_heartbeat",
        timestampUs: now - BigInt(k * 100 + i) * 10_000_000n,
        sessionId: `${build}-judged-${k}`,
        playerId: `judged-${k}`,
        buildId: build,
        platform: "Switch",
        mapId: "harbor",
        position: { x: 300, y: 300, z: 0 },
        frameTimeMs: slow ? 25 : 12,
        fps: slow ? 40 : 1000 / 12,
        gpuTimeMs: slow ? 22 : 5,
        memoryUsedBytes: 1024n * 1_048_576n,
      };
    }),
  ).flat();
}

/**
 * Three sessions of `build` that enter the cave (x 400–425) with a 120 ms stall, stay there three more
 * heartbeats at 16 ms, then walk to the meadow (x 450–475) for four: 16 ms is each session's median.
 */
function stutterSessions(build: string): SdkEvent[] {
  const start = Date.now() - 3_600_000;
  return Array.from({ length: 3 }, (_, k) =>
    Array.from(
      { length: 8 },
      (_, i): SdkEvent => ({
        eventName: "perf_heartbeat",
        timestampUs: BigInt(start + k * 200_000 + i * 10_000) * 1000n,
        sessionId: `${build}-stutter-${k}`,
        playerId: `stutter-${k}`,
        buildId: build,
        platform: "Windows",
        mapId: "harbor",
        position: { x: i < 4 ? 410 : 460, y: 410, z: 0 },
        frameTimeMs: i === 0 ? 120 : 16,
        fps: i === 0 ? 1000 / 120 : 62.5,
      }),
    ),
  ).flat();
}

beforeAll(async () => {
  d = await startDashboard();
  await uploadMap(d, {
    mapId: "harbor",
    name: "Harbor",
    minX: 0,
    minY: 0,
    maxX: 500,
    maxY: 500,
    width: 500,
    height: 500,
  });
  await d.send([
    // Windows unchanged in the cell at x 0–25; PS5 20 % fewer fps in the cell at x 100–125.
    ...sessions("2.0.0", "Windows", 5, 60),
    ...sessions("2.0.0", "PS5", 105, 50),
    ...sessions("2.1.0", "Windows", 5, 60),
    ...sessions("2.1.0", "PS5", 105, 40),
    ...fewSessions("3.0.0", 60),
    ...fewSessions("3.0.1", 58),
    // Half the candidate's sessions now miss 60 Hz's budget on the GPU: poor.
    ...judgedSessions("4.0.0", 24, 0),
    ...judgedSessions("4.1.0", 12, 12),
    ...stutterSessions("5.0.0"),
  ]);
}, 300_000);

/** The heatmap page's drawn cells, once the map is drawn. */
async function heatmapCells(page: Page) {
  await page.locator("#heatmap-canvas[data-cells]").waitFor({ timeout: 30_000 });
  return page.evaluate<Array<{ x: number; y: number; cls: string; fill: string; lines: string[] }>>(
    `window.dashboardMaps["heatmap-canvas"].cells`,
  );
}

afterAll(async () => {
  await d?.close();
}, 60_000);

type Group = {
  key: string | null;
  diffPct: number | null;
  ci95: [number, number] | null;
  verdict: string;
  baseline: { sessions: number };
  candidate: { sessions: number };
};
type Regressions = {
  overall: Group;
  groups: Group[];
  cells: Array<Omit<Group, "key"> & { x: number; y: number }>;
};
type Diff = {
  metric: string;
  isRegression: boolean;
  verdict: string | null;
  ci95: [number, number] | null;
  sessionDiffPct: number | null;
};

const rowsOf = (page: Page, selector: string) =>
  page.locator(selector).evaluateAll((trs) =>
    trs.map((tr) => ({
      key: tr.getAttribute("data-group") ?? tr.getAttribute("data-metric"),
      verdict: tr.getAttribute("data-verdict"),
      ci95: tr.querySelector(".interval")?.getAttribute("data-ci95") ?? "",
      regression: tr.classList.contains("regression"),
      text: tr.querySelector(".verdict")?.textContent ?? "",
    })),
  );

it("shows each metric's verdict and interval, each platform's, and only the significant cells in two colours", async () => {
  const page = await d.open(
    `/projects/${d.projectId}/compare?baseline=2.0.0&candidate=2.1.0&map=harbor&metric=fps&group=platform`,
  );
  await page.locator("table.groups tbody tr").first().waitFor({ timeout: 30_000 });
  await page.locator("table.diffs tbody tr").first().waitFor();
  const cmp = await d.api<{ diffs: Diff[] }>(
    `/projects/${d.projectId}/builds/compare?baseline=2.0.0&candidate=2.1.0&days=30&mapId=harbor`,
  );
  const metrics = await rowsOf(page, "table.diffs tbody tr");
  expect(metrics).toEqual(
    cmp.diffs.map((x) => ({
      key: x.metric,
      verdict: x.verdict ?? "",
      ci95: x.ci95 ? x.ci95.join(",") : "",
      regression: x.verdict === "regressed",
      text: expect.any(String),
    })),
  );
  // Frame time: the PS5 half of the sessions got 25 % slower; judged over sessions.
  const frame = cmp.diffs.find((x) => x.metric === "frame_time") as Diff;
  expect(frame.verdict).not.toBe("insufficient_data");
  expect(frame.ci95).not.toBeNull();

  // Per platform (fps): PS5 regressed with its interval wholly below 0 and at least 3 % away, Windows not.
  const r = await d.api<Regressions>(
    `/projects/${d.projectId}/builds/regressions?baseline=2.0.0&candidate=2.1.0&metric=fps&by=platform&days=30`,
  );
  const groups = await rowsOf(page, "table.groups tbody tr");
  expect(groups).toEqual(
    [r.overall, ...r.groups].map((g) => ({
      key: g.key ?? "",
      verdict: g.verdict,
      ci95: g.ci95 ? g.ci95.join(",") : "",
      regression: g.verdict === "regressed",
      text: expect.any(String),
    })),
  );
  const ps5 = r.groups.find((g) => g.key === "PS5") as Group;
  expect(ps5.verdict).toBe("regressed");
  expect((ps5.ci95 as [number, number])[1]).toBeLessThan(-3);
  expect(r.groups.find((g) => g.key === "Windows")?.verdict).toBe("no_change");
  expect(await page.locator('table.groups tr[data-group="PS5"] .verdict').textContent()).toBe("▲ Regressed");

  // The map: only the significant cells, in the colours of their verdicts.
  await page.locator("#significant-canvas[data-cells]").waitFor({ timeout: 30_000 });
  const drawn = await page.evaluate<Array<{ x: number; y: number; cls: string; fill: string }>>(
    `window.dashboardMaps["significant-canvas"].cells`,
  );
  const onMap = await d.api<Regressions>(
    `/projects/${d.projectId}/builds/regressions?baseline=2.0.0&candidate=2.1.0&metric=fps&by=platform&days=30&mapId=harbor`,
  );
  const significant = onMap.cells.filter((c) => c.verdict === "regressed" || c.verdict === "improved");
  expect(significant.map((c) => [c.x, c.y, c.verdict])).toEqual([[100, 0, "regressed"]]);
  expect(drawn.map((c) => [c.x, c.y, c.cls, c.fill])).toEqual([[100, 0, "regressed", "#d55e00"]]);
  expect(await page.locator(".significant-map p[role=status]").textContent()).toMatch(
    /^Harbor: 1 cells significantly worse, 0 significantly better/,
  );
  await page.screenshot({ path: join(SCREENSHOTS, "compare-verdicts.png"), fullPage: true });
  await page.close();
});

it("does not call a higher median over four sessions a regression", async () => {
  const page = await d.open(`/projects/${d.projectId}/compare?baseline=3.0.0&candidate=3.0.1`);
  await page.locator("table.diffs tbody tr").first().waitFor({ timeout: 30_000 });
  const cmp = await d.api<{ diffs: Diff[] }>(
    `/projects/${d.projectId}/builds/compare?baseline=3.0.0&candidate=3.0.1&days=30`,
  );
  const frame = cmp.diffs.find((x) => x.metric === "frame_time") as Diff;
  // The p50 is higher (the old page's red "▲ Regression") but four sessions a build prove nothing.
  expect(frame.isRegression).toBe(true);
  expect(frame.verdict).toBe("insufficient_data");
  expect(await page.locator('tr[data-metric="frame_time"] .verdict').textContent()).toBe(
    "Too few sessions (4 / 4, 20 each needed)",
  );
  expect(await page.locator('tr[data-metric="frame_time"]').getAttribute("class")).toBe("");
  expect(await page.locator(".compare-table p[role=status]").textContent()).toBe(
    "No regression: no metric's change is both outside the noise (95 % interval over sessions) and at least 3 %.",
  );
  expect(await page.locator("table.groups tbody tr").first().getAttribute("data-verdict")).toBe(
    "insufficient_data",
  );
  await page.close();
});

it("lists each group's sessions by verdict, the poor share's change in points, and what bounds the slow frames", async () => {
  const page = await d.open(`/projects/${d.projectId}/compare?baseline=4.0.0&candidate=4.1.0&group=platform`);
  await page.locator("table.session-verdicts tbody tr").first().waitFor({ timeout: 30_000 });
  const r = await d.api<Regressions>(
    `/projects/${d.projectId}/builds/regressions?baseline=4.0.0&candidate=4.1.0&metric=poor_session_share&by=platform&days=30`,
  );
  const rows = await page.locator("table.session-verdicts tbody tr").evaluateAll((trs) =>
    trs.map((tr) => ({
      key: tr.getAttribute("data-group"),
      verdict: tr.getAttribute("data-verdict"),
      cells: [...tr.querySelectorAll("th, td")].map((c) => c.textContent),
    })),
  );
  expect(rows.map((x) => [x.key, x.verdict])).toEqual(
    [r.overall, ...r.groups].map((g) => [g.key ?? "", g.verdict]),
  );
  const ci = (r.groups[0]?.ci95 ?? [0, 0]).map(
    (v) => `+${v.toLocaleString("en-US", { maximumFractionDigits: 2 })}`,
  );
  expect(rows.find((x) => x.key === "Switch")).toEqual({
    key: "Switch",
    verdict: "regressed",
    cells: [
      "Switch",
      "24 good · 0 acceptable · 0 poor (0 % poor)",
      "12 good · 0 acceptable · 12 poor (50 % poor)",
      `+50 pts (${ci[0]} pts to ${ci[1]} pts)`,
      "▲ Regressed",
      "GPU-bound 100 %",
      "0 → 0",
    ],
  });
  await page.screenshot({ path: join(SCREENSHOTS, "compare-session-verdicts.png"), fullPage: true });
  await page.close();
});

it("the heatmap's bound-by mode colours the candidate's slow cell by what bounds its frames", async () => {
  const page = await d.open(`/projects/${d.projectId}/heatmap?map=harbor&mode=bound&build=4.1.0&cell=25`);
  const drawn = await heatmapCells(page);
  // 4.1.0's 24 sessions × 8 heartbeats at (300, 300): 12 sessions' GPU-bound 25 ms frames are slow.
  expect(drawn.map((c) => [c.x, c.y, c.cls, c.fill])).toEqual([[300, 300, "gpu", "#d55e00"]]);
  expect(drawn[0]?.lines.slice(1)).toEqual(["Heartbeats: 192, slow 96 (50 %)", "GPU-bound: 96 (100 %)"]);
  const legend = await page.locator(".legend").textContent();
  expect(legend).toContain("Most slow frames GPU-bound");
  expect(legend).toContain("No slow frame");
  // The metric and profile controls do not apply to this mode.
  expect(await page.locator('label[for="ctl-metric"]').isHidden()).toBe(true);
  await page.screenshot({ path: join(SCREENSHOTS, "heatmap-bound-by.png"), fullPage: true });
  await page.close();
});

it("the heatmap's hitches mode sets the cave's first-entry stutter apart from the smooth meadow", async () => {
  const page = await d.open(`/projects/${d.projectId}/heatmap?map=harbor&mode=hitches&build=5.0.0&cell=25`);
  const drawn = await heatmapCells(page);
  expect(drawn.map((c) => [c.x, c.y, c.cls, c.fill])).toEqual([
    [400, 400, "first-entry", "#0072b2"],
    [450, 400, "scale", "hsl(120 75% 45%)"],
  ]);
  expect(drawn[0]?.lines.slice(1)).toEqual([
    "Hitches: 3 of 12 heartbeats (25 %)",
    "First visits 100 %, later 0 %",
    "Stutter on first entry",
  ]);
  expect(await page.locator(".legend").textContent()).toContain("Stutter on first entry");
  expect(await page.locator('label[for="ctl-profile"]').isHidden()).toBe(true);
  await page.screenshot({ path: join(SCREENSHOTS, "heatmap-hitches.png"), fullPage: true });
  await page.close();
});

it("the heatmap's frame-budget mode judges the share of heartbeats within budget by the profile's shares", async () => {
  const { id } = await d.api<{ id: string }>(`/projects/${d.projectId}/threshold-profiles`, {
    method: "POST",
    body: { name: "Budget 90/40", budgetShareGood: 0.9, budgetShareWarn: 0.4 },
  });
  const page = await d.open(
    `/projects/${d.projectId}/heatmap?map=harbor&mode=budget&build=4.1.0&cell=25&profile=${id}`,
  );
  const drawn = await heatmapCells(page);
  // 96 of the cell's 192 heartbeats are over their 60 Hz budget: 50 % within, under 90 %, over 40 %.
  expect(drawn.map((c) => [c.x, c.y, c.cls, c.fill])).toEqual([[300, 300, "warn", "#f2b01e"]]);
  expect(drawn[0]?.lines.slice(1)).toEqual([
    "Within budget: 96 of 192 heartbeats (50 %)",
    "Budget 90/40: warn",
  ]);
  const legend = await page.locator(".legend").textContent();
  expect(legend).toContain("Good: ≥ 90 % within budget");
  expect(legend).toContain("Warn: ≥ 40 % within budget");
  // The profile applies to this mode, the metric does not.
  expect(await page.locator('label[for="ctl-metric"]').isHidden()).toBe(true);
  expect(await page.locator('label[for="ctl-profile"]').isHidden()).toBe(false);
  await page.screenshot({ path: join(SCREENSHOTS, "heatmap-frame-budget.png"), fullPage: true });
  await page.close();
});
