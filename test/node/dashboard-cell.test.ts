import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Dashboard, perfEvents, SCREENSHOTS, startDashboard, uploadMap } from "../support/dashboard.js";

// The heatmap's cell panel in headless Chromium: a click opens it, its numbers are the API's, the URL
// names the cell (opening that URL opens the panel), and Copy repro writes the repro to the clipboard.

let d: Dashboard;
let profileId = "";

type Drilldown = {
  samples: number;
  sessions: number;
  players: number;
  distributions: { fps: { p50: number; p95: number; p99: number; counts: number[] } };
  breakdowns: { build_id: Array<{ key: string | null; samples: number }> };
  worstSessions: Array<{ sessionId: string }>;
  repro: Record<string, unknown>;
};

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
  profileId = (
    await d.api<{ id: string }>(`/projects/${d.projectId}/threshold-profiles`, {
      method: "POST",
      body: { name: "PC High", fpsGood: 60, fpsWarn: 30 },
    })
  ).id;
  await d.send(
    perfEvents({
      count: 120,
      build: "1.0.0",
      mapId: "harbor",
      // Two cells of 25: (100, 100) slow, (300, 300) fast.
      at: (i) => (i % 2 ? { x: 112.5, y: 112.5 } : { x: 312.5, y: 312.5 }),
      fps: (i) => (i % 2 ? 20 + (i % 7) : 90),
      player: (i) => `p${i % 5}`,
    }),
  );
}, 300_000);

afterAll(async () => {
  await d?.close();
}, 60_000);

it("a click opens the cell's panel with the API's numbers, in a shareable URL, and copies the repro", async () => {
  const path = `/projects/${d.projectId}/heatmap?map=harbor&profile=${profileId}`;
  const page = await d.open(path);
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: d.origin });
  await page.locator("#heatmap-canvas[data-cells]").waitFor({ timeout: 30_000 });
  const box = await page.locator("#heatmap-canvas").boundingBox();
  if (!box) {
    throw new Error("no canvas box");
  }
  await page.mouse.click(box.x + (112.5 / 500) * box.width, box.y + ((500 - 112.5) / 500) * box.height);
  const summary = page.locator("[data-cell-summary]");
  await summary.waitFor({ timeout: 30_000 });
  expect(new URL(page.url()).searchParams.get("at")).toBe("100,100");

  const api = await d.api<Drilldown>(
    `/projects/${d.projectId}/heatmap/cell?mapId=harbor&x=100&y=100&cellSize=25&days=7&profileId=${profileId}`,
  );
  expect(api.samples).toBe(60);
  const text = await summary.textContent();
  expect(text).toContain(`${api.samples} samples, ${api.sessions} sessions, ${api.players} players.`);
  expect(text).toContain(`p95 ${api.distributions.fps.p95} fps`);
  // The histogram's plotted counts are the API's non-empty span.
  const plotted = await page
    .locator("table[data-chart] tbody td")
    .allTextContents()
    .then((xs) => xs.map(Number));
  const counts = api.distributions.fps.counts;
  const first = counts.findIndex((n) => n > 0);
  const last = counts.length - 1 - [...counts].reverse().findIndex((n) => n > 0);
  expect(plotted).toEqual(counts.slice(first, last + 1));
  const builds = await page.locator('[data-table="cell-build_id"] tbody tr td:first-child').allTextContents();
  expect(builds).toEqual(api.breakdowns.build_id.map((g) => g.key ?? "not reported"));
  const sessions = await page
    .locator('[data-table="cell-sessions"] tbody tr td:first-child')
    .allTextContents();
  expect(sessions).toEqual(api.worstSessions.map((s) => s.sessionId));

  await page.locator('[data-action="copy-repro"]').click();
  await expect.poll(() => page.locator("[data-copy-status]").textContent()).toContain("copied");
  const copied = JSON.parse(await page.evaluate<string>("navigator.clipboard.readText()")) as Record<
    string,
    unknown
  >;
  expect(copied).toMatchObject({ ...api.repro, mapName: "Harbor", cellSize: 25, days: 7 });
  await page.screenshot({ path: join(SCREENSHOTS, "heatmap-cell.png"), fullPage: true });

  // The URL as shared opens the same panel.
  const shared = await d.open(`${path}&at=100,100`);
  await shared.locator("[data-cell-summary]").waitFor({ timeout: 30_000 });
  expect(await shared.locator("[data-cell-summary]").textContent()).toBe(text);
  await shared.close();
  await page.close();
});

it("Enter on the keyboard's focus cell opens it", async () => {
  const page = await d.open(`/projects/${d.projectId}/heatmap?map=harbor`);
  await page.locator("#heatmap-canvas[data-cells]").waitFor({ timeout: 30_000 });
  await page.locator("#heatmap-canvas").focus();
  await page.keyboard.press("Enter");
  await page.locator("[data-cell-summary]").waitFor({ timeout: 30_000 });
  // Cells come by x then y: the first is the slow one.
  expect(new URL(page.url()).searchParams.get("at")).toBe("100,100");
  await page.locator('[data-action="close-cell"]').click();
  await expect.poll(() => new URL(page.url()).searchParams.get("at")).toBeNull();
  await page.close();
});
