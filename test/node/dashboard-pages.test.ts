import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Dashboard,
  harborBuilds,
  namedEvents,
  squash,
  startDashboard,
  tableRows,
} from "../support/dashboard.js";

// Builds, retention, funnels, insights, alerts, maps, threshold profiles and content, opened in headless
// Chromium by the studio's owner: what a person sees is compared with what /api/v1 answers to a key of
// the same project. One service start for the file.

let d: Dashboard;
let base: string;

beforeAll(async () => {
  d = await startDashboard();
  base = `/projects/${d.projectId}`;
  await d.send([
    ...harborBuilds((i) => `p${i % 3}`),
    ...namedEvents("match_start", 12, { player: (i) => `p${i % 6}` }),
    ...namedEvents("match_end", 8, { player: (i) => `p${i % 4}` }),
    ...namedEvents("item_pickup", 5, { player: (i) => `p${i % 2}` }),
  ]);
}, 240_000);

afterAll(async () => {
  await d?.close();
}, 60_000);

const n = (v: number) => v.toLocaleString("en-US");
const pct = (v: number | null) => (v === null ? "—" : `${v.toFixed(2)} %`);

const innerWidthOf = (v: { width: number } | null) => v?.width;

describe("analytics pages", () => {
  it("builds: the list is the API's, newest first, each linking to a comparison with the one before", async () => {
    type Build = { build_id: string; event_count: number; session_count: number; player_count: number };
    const api = await d.api<Build[]>(`${base}/builds?days=30`);
    expect(api.map((b) => b.build_id).sort()).toEqual(["1.0.0", "1.1.0"]);
    const page = await d.open(`${base}/builds`);
    const shown = await tableRows(page, "builds");
    expect(shown.map((r) => [r[0], r[3], r[4], r[5]])).toEqual(
      api.map((b) => [b.build_id, n(b.event_count), n(b.session_count), n(b.player_count)]),
    );
    const link = page.locator('table[data-table="builds"] a').first();
    expect(await link.getAttribute("href")).toBe(
      `${base}/compare?baseline=${api[1]?.build_id}&candidate=${api[0]?.build_id}`,
    );
    // At 1280 px every row's actions are in view without scrolling the table: each pin button and
    // compare link lies inside the box of the panel that holds the table.
    const outside = await page.evaluate<string[]>(`(() => {
      const table = document.querySelector('table[data-table="builds"]');
      const box = table.parentElement.getBoundingClientRect();
      return [...table.querySelectorAll("[data-pin], a")]
        .filter((el) => { const r = el.getBoundingClientRect(); return r.left < box.left || r.right > box.right || r.right > innerWidth; })
        .map((el) => el.textContent);
    })()`);
    expect(innerWidthOf(await page.viewportSize())).toBe(1280);
    expect(outside).toEqual([]);
    await page.close();
  });

  it("retention: the cohort table shows the API's sizes and D1/D7/D30 percentages", async () => {
    type Cohort = {
      cohort_date: string;
      cohort_size: number;
      day1: number | null;
      day7: number | null;
      day30: number | null;
    };
    const api = await d.api<Cohort[]>(`${base}/retention?days=7`);
    expect(api.reduce((s, c) => s + c.cohort_size, 0)).toBeGreaterThan(0);
    const page = await d.open(`${base}/retention?days=7`);
    expect(await tableRows(page, "cohorts")).toEqual(
      api.map((c) => [c.cohort_date, n(c.cohort_size), pct(c.day1), pct(c.day7), pct(c.day30)]),
    );
    await page.close();
  });

  it("funnels: shows the API's counts; steps are added, reordered and removed, and the URL carries them", async () => {
    type Step = { step: number; event_name: string; count: number; pct: number; drop_off_pct: number };
    const page = await d.open(`${base}/funnels?steps=match_start,match_end&window=3600`);
    const api = await d.api<Step[]>(`${base}/funnels?steps=match_start,match_end&window=3600&days=30`);
    expect(api.map((s) => s.count)).toEqual([6, 4]);
    expect(await tableRows(page, "funnel")).toEqual(
      api.map((s) => [String(s.step), s.event_name, n(s.count), pct(s.pct), pct(s.drop_off_pct)]),
    );
    expect(await page.getByLabel("Conversion window").inputValue()).toBe("3600");
    // The chart plots the same counts.
    const plotted = await page
      .locator('table[data-chart="Players per step"] tbody td')
      .evaluateAll((tds) => tds.map((td) => td.textContent));
    expect(plotted).toEqual(api.map((s) => String(s.count)));

    // Edit: add item_pickup, move it to the front, remove match_end, apply.
    await page.getByRole("button", { name: "Add step" }).click();
    await page.getByLabel("Step 3", { exact: true }).fill("item_pickup");
    await page.getByRole("button", { name: "Move up step 3" }).click();
    await page.getByRole("button", { name: "Move up step 2" }).click();
    await page.getByRole("button", { name: "Remove step 3" }).click();
    expect(await page.getByLabel("Step 1", { exact: true }).inputValue()).toBe("item_pickup");
    await page.getByRole("button", { name: "Show funnel" }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get("steps")).toBe("item_pickup,match_start");
    const edited = await d.api<Step[]>(`${base}/funnels?steps=item_pickup,match_start&window=3600&days=30`);
    await expect
      .poll(async () => (await tableRows(page, "funnel")).map((r) => r[1]))
      .toEqual(["item_pickup", "match_start"]);
    expect((await tableRows(page, "funnel")).map((r) => r[2])).toEqual(edited.map((s) => n(s.count)));
    await page.close();
  });

  it("funnels: a shared link with one step shows the API's problem detail", async () => {
    const res = await fetch(`${d.origin}/api/v1${base}/funnels?steps=match_start`, {
      headers: { "X-API-Key": d.fullKey },
    });
    const problem = (await res.json()) as { detail: string };
    expect(res.status).toBe(400);
    const page = await d.open(`${base}/funnels?steps=match_start`);
    const alert = page.locator(".state.error");
    await alert.waitFor();
    expect(squash(await alert.textContent())).toBe(problem.detail);
    await page.close();
  });

  it("insights: grouped by event name, the total, chart and table are the API's", async () => {
    type Insights = { groups: { key: string; value: number }[]; total: number };
    const api = await d.api<Insights>(`${base}/insights?metric=unique_players&groupBy=event_name&days=7`);
    const page = await d.open(`${base}/insights?metric=unique_players&groupBy=event_name&days=7`);
    expect(await tableRows(page, "insights")).toEqual(api.groups.map((g) => [g.key || "(none)", n(g.value)]));
    expect(squash(await page.locator('[data-kpi="Unique players (7 d)"] dd').textContent())).toBe(
      n(api.total),
    );
    // Changing a control re-reads the API and rewrites the link.
    await page.getByLabel("Group by").selectOption("platform");
    await expect.poll(() => new URL(page.url()).searchParams.get("groupBy")).toBe("platform");
    const byPlatform = await d.api<Insights>(
      `${base}/insights?metric=unique_players&groupBy=platform&days=7`,
    );
    await expect
      .poll(async () => (await tableRows(page, "insights")).map((r) => r[0]))
      .toEqual(byPlatform.groups.map((g) => g.key || "(none)"));
    await page.close();
  });

  it("insights: an event nobody sent shows the empty state", async () => {
    const page = await d.open(`${base}/insights?eventName=never_sent`);
    const state = page.locator(".state.empty");
    await state.waitFor();
    expect(squash(await state.textContent())).toBe("No events named “never_sent” in the last 30 days.");
    await page.close();
  });
});
