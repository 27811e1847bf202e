import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Dashboard, perfEvents, SCREENSHOTS, startDashboard, uploadMap } from "../support/dashboard.js";

// The cell panel in headless Chromium, on the heatmap and on the Compare page's difference map: a click
// opens it, its numbers are the API's, the URL names the cell (opening that URL opens the panel), and
// Copy repro writes the repro to the clipboard. A click outlines and describes the cell clicked, and
// cells stand out over a green map.

let d: Dashboard;
let profileId = "";

type Dist = { p50: number; p95: number; p99: number; counts: number[] };
type Drilldown = {
  samples: number;
  sessions: number;
  players: number;
  distributions: { fps: Dist; frame_time: Dist };
  breakdowns: { build_id: Array<{ key: string | null; samples: number }> };
  worstSessions: Array<{ sessionId: string }>;
  repro: Record<string, unknown>;
  why: { basis: string; bounds: Array<{ bound: string; slow: number; pct: number | null }> };
};

/** Numbers as the dashboard prints them (dom.ts fmt): integers with separators, else 2 decimals. */
const fmtMs = (n: number) =>
  `${new Intl.NumberFormat("en-US", { maximumFractionDigits: Number.isInteger(n) ? 0 : 2 }).format(n)} ms`;

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
      // The slow cell's frames are GPU-bound: the GPU takes 90 % of each.
      gpuMs: (i) => (i % 2 ? 900 / (20 + (i % 7)) : 8),
      player: (i) => `p${i % 5}`,
    }),
  );
  // A green meadow: one good cell alone at (200, 200), one bad at (300, 300).
  await uploadMap(d, {
    mapId: "meadow",
    name: "Meadow",
    minX: 0,
    minY: 0,
    maxX: 500,
    maxY: 500,
    width: 500,
    height: 500,
    tones: [
      [70, 150, 60],
      [95, 175, 75],
    ],
  });
  await d.send(
    perfEvents({
      count: 20,
      build: "1.0.0",
      mapId: "meadow",
      at: (i) => (i % 2 ? { x: 212.5, y: 212.5 } : { x: 312.5, y: 312.5 }),
      fps: (i) => (i % 2 ? 90 : 20),
    }),
  );
  // The candidate build in the same two cells: slower still in the slow one.
  await d.send(
    perfEvents({
      count: 80,
      build: "1.1.0",
      mapId: "harbor",
      at: (i) => (i % 2 ? { x: 112.5, y: 112.5 } : { x: 312.5, y: 312.5 }),
      fps: (i) => (i % 2 ? 12 + (i % 5) : 85),
      player: (i) => `q${i % 4}`,
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
  // The map takes the panel's width and may reach below the screen: the click is given relative to the
  // canvas, which Playwright scrolls into view first.
  const heat = page.locator("#heatmap-canvas");
  const box = await heat.boundingBox();
  if (!box) {
    throw new Error("no canvas box");
  }
  await heat.click({ position: { x: (112.5 / 500) * box.width, y: ((500 - 112.5) / 500) * box.height } });
  const summary = page.locator("[data-cell-summary]");
  await summary.waitFor({ timeout: 30_000 });
  expect(new URL(page.url()).searchParams.get("at")).toBe("100,100");

  const api = await d.api<Drilldown>(
    `/projects/${d.projectId}/heatmap/cell?mapId=harbor&x=100&y=100&cellSize=25&days=7&profileId=${profileId}`,
  );
  // Both builds: the heatmap page filters by none.
  expect(api.samples).toBe(100);
  const text = await summary.textContent();
  expect(text).toContain(`${api.samples} samples, ${api.sessions} sessions, ${api.players} players.`);
  expect(text).toContain(`p95 ${api.distributions.fps.p95} fps`);
  // Why: the profile marks fps (warn 30), every sample of the cell is under it, and the 1.0.0 build's
  // are GPU-bound (the candidate's carry the default 8 ms of GPU time: nothing collected explains them).
  expect(api.why.basis).toBe("fps");
  const gpuBound = api.why.bounds.find((b) => b.bound === "gpu");
  expect(gpuBound?.slow).toBe(60);
  expect(await page.locator("[data-cell-why]").textContent()).toBe(
    `Why: ${Math.round(gpuBound?.pct ?? 0)} % of slow frames GPU-bound; under 30 fps.`,
  );
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

it("a click on a cell other than the first outlines, describes and opens that cell", async () => {
  const page = await d.open(`/projects/${d.projectId}/heatmap?map=harbor&profile=${profileId}`);
  await page.locator("#heatmap-canvas[data-cells]").waitFor({ timeout: 30_000 });
  const first = await page.evaluate<{ x: number; y: number }>(
    `window.dashboardMaps["heatmap-canvas"].cells[0]`,
  );
  // The fast cell at (300, 300), not the first of the answer.
  expect(first).toMatchObject({ x: 100, y: 100 });
  const canvas = page.locator("#heatmap-canvas");
  const size = await canvas.boundingBox();
  if (!size) {
    throw new Error("no canvas box");
  }
  await canvas.click({ position: { x: (312.5 / 500) * size.width, y: ((500 - 312.5) / 500) * size.height } });
  await expect.poll(() => new URL(page.url()).searchParams.get("at")).toBe("300,300");
  const summary = page.locator("[data-cell-summary]");
  await summary.waitFor({ timeout: 30_000 });
  const api = await d.api<Drilldown>(
    `/projects/${d.projectId}/heatmap/cell?mapId=harbor&x=300&y=300&cellSize=25&days=7&profileId=${profileId}`,
  );
  expect(await page.locator(".cell-panel h2").textContent()).toBe("Cell x 300…325, y 300…325");
  expect(await summary.textContent()).toContain(
    `${api.samples} samples, ${api.sessions} sessions, ${api.players} players.`,
  );
  expect(await summary.textContent()).toContain(`p95 ${api.distributions.fps.p95} fps`);
  // The tooltip describes that cell, and the outline is drawn around it.
  const tip = page.getByRole("tooltip");
  expect(await tip.getAttribute("data-cell")).toBe("300:300");
  expect(await tip.textContent()).toContain("Cell x 300…325, y 300…325");
  // Where the canvas is now (the click scrolled it into view).
  const box = await canvas.boundingBox();
  if (!box) {
    throw new Error("no canvas box");
  }
  const outline = await page.locator(".cell-focus").boundingBox();
  const k = box.width / 500;
  expect(outline).not.toBeNull();
  expect(Math.abs((outline?.x ?? 0) - (box.x + 300 * k))).toBeLessThan(1.5);
  expect(Math.abs((outline?.y ?? 0) - (box.y + (500 - 325) * k))).toBeLessThan(1.5);
  expect(Math.abs((outline?.width ?? 0) - 25 * k)).toBeLessThan(1.5);
  await page.screenshot({ path: join(SCREENSHOTS, "heatmap-click-second-cell.png"), fullPage: true });

  // A click on the first cell then moves both to it.
  await canvas.click({ position: { x: (112.5 / 500) * box.width, y: ((500 - 112.5) / 500) * box.height } });
  await expect.poll(() => new URL(page.url()).searchParams.get("at")).toBe("100,100");
  await expect.poll(() => page.locator(".cell-panel h2").textContent()).toBe("Cell x 100…125, y 100…125");
  expect(await tip.getAttribute("data-cell")).toBe("100:100");
  const after = (await canvas.boundingBox()) ?? box;
  const moved = await page.locator(".cell-focus").boundingBox();
  expect(Math.abs((moved?.x ?? 0) - (after.x + 100 * k))).toBeLessThan(1.5);
  await page.close();
});

it("good cells stand out over a green map: an edge of at least 3:1 contrast, and a hue apart from the map", async () => {
  const page = await d.open(`/projects/${d.projectId}/heatmap?map=meadow&profile=${profileId}`);
  await page.locator("#heatmap-canvas[data-cells]").waitFor({ timeout: 30_000 });
  const cells = await page.evaluate<Array<{ x: number; y: number; cls: string }>>(
    `window.dashboardMaps["heatmap-canvas"].cells`,
  );
  expect(cells.map((c) => [c.x, c.y, c.cls])).toEqual([
    [200, 200, "good"],
    [300, 300, "bad"],
  ]);
  // Canvas pixels (the image is 500 × 500 for 0…500: one pixel per unit). The good cell spans x 200…225
  // and canvas rows 275…300; the map beside it (x 196) holds no cell.
  type Rgb = [number, number, number];
  const px = (x: number, y: number) =>
    page.evaluate<Rgb>(`(() => {
      const ctx = document.getElementById("heatmap-canvas").getContext("2d");
      return [...ctx.getImageData(${x}, ${y}, 1, 1).data.slice(0, 3)];
    })()`);
  const [map, edge, centre] = await Promise.all([px(196, 287), px(200, 287), px(212, 287)]);
  // WCAG's relative luminance and contrast ratio (non-text contrast asks for 3:1).
  const lum = ([r, g, b]: Rgb) => {
    const lin = (v: number) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  };
  const contrast = (a: Rgb, b: Rgb) => {
    const [hi, lo] = [lum(a), lum(b)].sort((p, q) => q - p) as [number, number];
    return (hi + 0.05) / (lo + 0.05);
  };
  expect(contrast(edge, map), `edge ${edge} over map ${map}`).toBeGreaterThanOrEqual(3);
  // The cell's fill is clearly another colour than the map around it (distance in RGB).
  const distance = Math.hypot(centre[0] - map[0], centre[1] - map[1], centre[2] - map[2]);
  expect(distance, `cell ${centre} over map ${map}`).toBeGreaterThan(60);
  // Still green where good: the judgement's hue is kept.
  expect(centre[1]).toBeGreaterThan(centre[0]);
  await page.locator("#heatmap-canvas").scrollIntoViewIfNeeded();
  await page.locator("#heatmap-canvas").screenshot({ path: join(SCREENSHOTS, "heatmap-green-map.png") });
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

it("a difference-map cell opens the candidate's panel, switches to the baseline, and its URL reopens it", async () => {
  const path = `/projects/${d.projectId}/compare?baseline=1.0.0&candidate=1.1.0&map=harbor`;
  const page = await d.open(path);
  await page.locator("#diff-canvas[data-cells]").waitFor({ timeout: 30_000 });
  // The difference map sits below the comparison table, whose verdicts may still be arriving and move
  // it: the click is given relative to the canvas, which Playwright scrolls into view and waits to be
  // stable before clicking (a page coordinate measured first could land where the canvas was).
  const canvas = page.locator("#diff-canvas");
  const box = await canvas.boundingBox();
  if (!box) {
    throw new Error("no canvas box");
  }
  await canvas.click({ position: { x: (112.5 / 500) * box.width, y: ((500 - 112.5) / 500) * box.height } });
  const summary = page.locator("[data-cell-summary]");
  await summary.waitFor({ timeout: 30_000 });
  expect(new URL(page.url()).searchParams.get("at")).toBe("100,100");
  expect(new URL(page.url()).searchParams.get("side")).toBeNull();

  // The Compare page's defaults: frame time, cells of 25, 30 days.
  const cellOf = (build: string) =>
    d.api<Drilldown>(
      `/projects/${d.projectId}/heatmap/cell?mapId=harbor&x=100&y=100&cellSize=25&days=30&buildId=${build}&metric=frame_time`,
    );
  const summaryOf = (a: Drilldown) =>
    `${a.samples} samples, ${a.sessions} sessions, ${a.players} players. ` +
    `frame_time: p50 ${fmtMs(a.distributions.frame_time.p50)}, p95 ${fmtMs(a.distributions.frame_time.p95)}, ` +
    `p99 ${fmtMs(a.distributions.frame_time.p99)}.`;
  const [cand, base] = await Promise.all([cellOf("1.1.0"), cellOf("1.0.0")]);
  expect(cand.samples).toBe(40);
  expect(base.samples).toBe(60);
  expect(await summary.textContent()).toBe(summaryOf(cand));
  const shownBuilds = () =>
    page.locator('[data-table="cell-build_id"] tbody tr td:first-child').allTextContents();
  expect(await shownBuilds()).toEqual(["1.1.0"]);
  const sessions = await page
    .locator('[data-table="cell-sessions"] tbody tr td:first-child')
    .allTextContents();
  expect(sessions).toEqual(cand.worstSessions.map((s) => s.sessionId));
  expect(await page.locator('[data-side="candidate"]').getAttribute("aria-pressed")).toBe("true");

  await page.locator('[data-side="baseline"]').click();
  await expect.poll(() => summary.textContent(), { timeout: 30_000 }).toBe(summaryOf(base));
  expect(await shownBuilds()).toEqual(["1.0.0"]);
  const url = new URL(page.url());
  expect(url.searchParams.get("at")).toBe("100,100");
  expect(url.searchParams.get("side")).toBe("baseline");
  await page.screenshot({ path: join(SCREENSHOTS, "compare-cell.png"), fullPage: true });

  // The URL as shared reopens the baseline's panel of that cell.
  const shared = await d.open(`${url.pathname}${url.search}`);
  await shared.locator("[data-cell-summary]").waitFor({ timeout: 30_000 });
  expect(await shared.locator("[data-cell-summary]").textContent()).toBe(summaryOf(base));
  expect(await shared.locator('[data-side="baseline"]').getAttribute("aria-pressed")).toBe("true");
  await shared.locator('[data-action="close-cell"]').click();
  await expect.poll(() => new URL(shared.url()).searchParams.get("at")).toBeNull();
  expect(new URL(shared.url()).searchParams.get("side")).toBeNull();
  await shared.close();
  await page.close();
});

it("the maps take the panel's width, and a changed cell of the difference map never looks unchanged", async () => {
  const page = await d.open(`/projects/${d.projectId}/compare?baseline=1.0.0&candidate=1.1.0&map=harbor`);
  await page.locator("#diff-canvas[data-cells]").waitFor({ timeout: 30_000 });
  // The canvas fills its container's content box, or one screen of height (the map is square).
  const fit = await page.evaluate<{ canvas: number; room: number; natural: number }>(`(() => {
    const canvas = document.getElementById("diff-canvas");
    const box = canvas.parentElement.parentElement;
    const cs = getComputedStyle(box);
    const content = box.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    return { canvas: canvas.getBoundingClientRect().width, room: Math.min(content, innerHeight), natural: canvas.width };
  })()`);
  expect(fit.natural).toBe(500);
  expect(fit.room).toBeGreaterThan(800);
  expect(fit.canvas).toBeGreaterThan(fit.room - 2);
  // Every changed cell's colour, as the browser paints it, is far from the legend's "Unchanged".
  type Rgb = [number, number, number];
  const rgbOf = (css: string) =>
    page.evaluate<Rgb>(`(() => {
      const el = document.createElement("span");
      el.style.color = ${JSON.stringify(css)};
      document.body.append(el);
      const m = getComputedStyle(el).color.match(/[\\d.]+/g).map(Number);
      el.remove();
      return m.slice(0, 3);
    })()`);
  const swatches = await page.evaluate<Array<[string, string]>>(
    `[...document.querySelectorAll(".legend > span")].map((s) => [s.textContent, s.querySelector(".swatch").style.background])`,
  );
  const unchanged = swatches.find(([label]) => label === "Unchanged")?.[1];
  expect(unchanged).toBeDefined();
  const grey = await rgbOf(unchanged as string);
  const cells = await page.evaluate<Array<{ cls: string; fill: string }>>(
    `window.dashboardMaps["diff-canvas"].cells`,
  );
  const changed = cells.filter((c) => c.cls === "worse" || c.cls === "better");
  expect(changed.length).toBeGreaterThan(0);
  for (const c of changed) {
    const rgb = await rgbOf(c.fill);
    const distance = Math.hypot(rgb[0] - grey[0], rgb[1] - grey[1], rgb[2] - grey[2]);
    expect(distance, `${c.cls} ${c.fill} against unchanged ${unchanged}`).toBeGreaterThan(60);
  }
  // The heatmap's canvas too.
  const heat = await d.open(`/projects/${d.projectId}/heatmap?map=harbor`);
  await heat.locator("#heatmap-canvas[data-cells]").waitFor({ timeout: 30_000 });
  const width = await heat.evaluate<number>(
    `document.getElementById("heatmap-canvas").getBoundingClientRect().width`,
  );
  expect(width).toBeGreaterThan(800);
  await heat.close();
  await page.close();
});
