import { afterAll, beforeAll, expect, it } from "vitest";
import { type Dashboard, namedEvents, perfEvents, squash, startDashboard } from "../support/dashboard.js";

// A person opens the project list and a project's overview in headless Chromium; what they see is
// compared with what /api/v1 answers to a key of the same project.

let d: Dashboard;

type DashboardData = {
  kpis: { dau: number; mau: number; sessions: number; events: number };
  dailyActiveUsers: { date: string; count: number }[];
  topEvents: { event_name: string; count: number }[];
};

beforeAll(async () => {
  d = await startDashboard();
  await d.send([
    ...perfEvents({
      count: 120,
      build: "1.0.0",
      mapId: "harbor",
      at: (i) => ({ x: i % 10, y: 3 }),
      fps: () => 60,
      player: (i) => `p${i % 4}`,
    }),
    ...namedEvents("match_start", 30, { player: (i) => `p${i % 3}` }),
    ...namedEvents("item_pickup", 45, { player: (i) => `p${i % 5}` }),
  ]);
}, 240_000);

afterAll(async () => {
  await d?.close();
}, 60_000);

it("lists the studio's projects with their status KPIs, each opening its overview", async () => {
  const page = await d.open("/");
  await expect.poll(() => page.locator(`[data-status-for="${d.projectId}"] .kpi`).count()).toBe(6);
  const status = await d.api<{
    kpis: { totalEvents: number };
    retention: { days: number; retainedFrom: string };
  }>(`/projects/${d.projectId}/status`);
  expect(squash(await page.locator('[data-kpi="Events (kept)"] dd').textContent())).toBe(
    status.kpis.totalEvents.toLocaleString("en-US"),
  );
  // The studio plan's retention, shown as the status answers it.
  expect(status.retention.days).toBe(400);
  expect(squash(await page.locator('[data-kpi="Retention"] dd').textContent())).toBe(
    `400 days, since ${status.retention.retainedFrom}`,
  );
  await page.getByRole("link", { name: "Harbor Run" }).click();
  await page.waitForURL(`${d.origin}/projects/${d.projectId}/overview`);
  await page.close();
});

it("shows the overview's KPIs, DAU series and top events as the API answers them, for the chosen days", async () => {
  const page = await d.open(`/projects/${d.projectId}/overview?days=7`);
  const api = await d.api<DashboardData>(`/projects/${d.projectId}/dashboard?days=7`);
  expect(api.kpis.events).toBe(195);
  await page.locator(".top-events").waitFor();
  for (const [label, value] of [
    ["DAU", api.kpis.dau],
    ["MAU", api.kpis.mau],
    ["Sessions (7 d)", api.kpis.sessions],
    ["Events (7 d)", api.kpis.events],
  ] as const) {
    expect(squash(await page.locator(`[data-kpi="${label}"] dd`).textContent()), label).toBe(
      value.toLocaleString("en-US"),
    );
  }
  const rows = await page
    .locator(".top-events tbody tr")
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
  expect(rows).toEqual(api.topEvents.map((e) => [e.event_name, e.count.toLocaleString("en-US")]));
  // The DAU chart's numbers: one per day of the window, the API's.
  const dau = await page
    .locator('table[data-chart="Daily active players"] tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [tr.querySelector("th")?.textContent, tr.querySelector("td")?.textContent]),
    );
  expect(dau).toEqual(api.dailyActiveUsers.map((p) => [p.date, String(p.count)]));
  expect(await page.locator(".chart canvas").count()).toBeGreaterThanOrEqual(2);

  // The period picker: the URL carries it, and the numbers follow.
  await page.getByLabel("Period").selectOption("30");
  await expect.poll(() => new URL(page.url()).searchParams.get("days")).toBe(null);
  await expect.poll(() => page.locator('[data-kpi="Sessions (30 d)"]').count()).toBe(1);
  await page.close();
});

it("keyboard: the project navigation and the controls are reachable with Tab", async () => {
  const page = await d.open(`/projects/${d.projectId}/overview`);
  await page.locator(".top-events").waitFor();
  const reached: string[] = [];
  // Header, the project navigation (one link per page), then the page's controls.
  for (let i = 0; i < 24 && !reached.includes("ctl-days"); i++) {
    await page.keyboard.press("Tab");
    reached.push(
      await page.evaluate<string>(
        "document.activeElement?.id || document.activeElement?.textContent?.trim() || ''",
      ),
    );
  }
  expect(reached).toEqual(
    expect.arrayContaining(["Projects", "Settings", "Overview", "Sign out", "ctl-days"]),
  );
  await page.close();
});

it("a project without events shows the empty state, not zeros", async () => {
  const quiet = String(
    (await d.admin("project", "create", "--tenant", d.tenantId, "--name", "Quiet Game")).id,
  );
  const page = await d.open(`/projects/${quiet}/overview`);
  const state = page.locator(".state.empty");
  await state.waitFor();
  expect(squash(await state.textContent())).toBe(
    "No events in the last 30 days. Point an engine SDK at the ingest URL with an ingest key of this project.",
  );
  // The project list shows it too, beside the busy one.
  const list = await d.open("/");
  await expect
    .poll(() => list.locator(`[data-status-for="${quiet}"] [data-kpi="Last event"] dd`).textContent())
    .toBe("None yet");
  await page.close();
  await list.close();
});

it("refuses another studio's project with a 404 page, and ignores an invalid period in a shared link", async () => {
  // A project id that is not the user's: the page itself is a 404, never another studio's data.
  const other = await d.open("/projects/00000000-0000-4000-8000-000000000000/overview");
  expect(squash(await other.locator("h1").textContent())).toBe("Not found");
  await other.close();
  // An out-of-range period in a shared link falls back to the default rather than failing.
  const page = await d.open(`/projects/${d.projectId}/overview?days=3`);
  await page.locator(".top-events").waitFor();
  expect(await page.getByLabel("Period").inputValue()).toBe("30");
  await page.close();
});
