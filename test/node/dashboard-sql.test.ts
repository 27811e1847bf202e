import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type Dashboard,
  namedEvents,
  perfEvents,
  SCREENSHOTS,
  squash,
  startDashboard,
  tableRows,
} from "../support/dashboard.js";

// The SQL explorer (docs/dashboard.md, "SQL") in headless Chromium, driven by its visible labels: a
// query typed into the editor and run with Ctrl-Enter, its table and chart compared with what
// POST /api/v1/query answers a full key of the same project; an error shown at its position; the
// query's link; the recent queries; and the editor's bundle loaded on this page only.

let d: Dashboard;

type QueryAnswer = {
  columns: { name: string; type: string }[];
  rows: Record<string, unknown>[];
  rowCount: number;
  rows_read: number;
};

const QUERY = "SELECT event_name, count() AS n FROM events GROUP BY event_name ORDER BY n DESC, event_name";

beforeAll(async () => {
  d = await startDashboard();
  await d.send([
    ...perfEvents({ count: 40, build: "1.0.0", mapId: "harbor", at: (i) => ({ x: i, y: 1 }), fps: () => 60 }),
    ...namedEvents("match_start", 30, { player: (i) => `p${i % 3}` }),
    ...namedEvents("item_pickup", 45, { player: (i) => `p${i % 5}` }),
  ]);
}, 240_000);

afterAll(async () => {
  await d?.close();
}, 60_000);

/** Replaces the editor's text as a person would: focus it by its label, select all, type. */
async function typeQuery(page: import("playwright-core").Page, sql: string): Promise<void> {
  const editor = page.getByRole("textbox", { name: "Query" });
  await editor.click();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.press("Delete");
  await page.keyboard.type(sql);
  // The completion popup (if open) must not keep the last word: Escape closes it.
  await page.keyboard.press("Escape");
}

it("runs a typed query with Ctrl-Enter: the table, the counts and the chart are the API's answer", async () => {
  const cspViolations: string[] = [];
  const scripts: string[] = [];
  const page = await d.context.newPage();
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) {
      cspViolations.push(m.text());
    }
  });
  page.on("request", (r) => {
    if (r.resourceType() === "script") {
      scripts.push(new URL(r.url()).pathname);
    }
  });
  await page.goto(`${d.origin}/projects/${d.projectId}/sql`);
  await page.getByRole("textbox", { name: "Query" }).waitFor();
  // The view's columns arrive after the editor (one query of the API): completions typed before them
  // would offer keywords only, so the test waits for them as a person would see them arrive.
  await page.locator('.sql-editor[data-columns="loaded"]').waitFor();

  // The events view's columns are offered, with their ClickHouse types.
  await page.getByRole("textbox", { name: "Query" }).click();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.press("Delete");
  await page.keyboard.type("SELECT frame_ti");
  const option = page.locator(".cm-tooltip-autocomplete li", { hasText: "frame_time_ms" });
  await option.waitFor();
  expect(squash(await option.textContent())).toContain("Nullable(Float32)");
  await page.keyboard.press("Escape");

  await typeQuery(page, QUERY);
  // Highlighted: the keywords carry the highlight style's class, the same for both; a column name not.
  const classes = await page.locator(".cm-content").evaluate((el) => {
    const of = (text: string) =>
      [...el.querySelectorAll("span")].find((s) => s.textContent === text)?.className ?? null;
    return { select: of("SELECT"), from: of("FROM"), column: of("event_name") };
  });
  expect(classes.select).toMatch(/\S/);
  expect(classes.select).toBe(classes.from);
  expect(classes.column).not.toBe(classes.select);
  await page.keyboard.press("Control+Enter");
  const answer = await d.api<QueryAnswer>("/query", {
    method: "POST",
    body: { project_id: d.projectId, sql: QUERY, limit: 1000 },
  });
  expect(answer.rows.map((r) => [r.event_name, r.n])).toEqual([
    ["item_pickup", 45],
    ["perf_sample", 40],
    ["match_start", 30],
  ]);
  expect(await tableRows(page, "results")).toEqual(
    answer.rows.map((r) => [String(r.event_name), String(r.n)]),
  );
  const summary = squash(await page.locator(".sql-summary").textContent());
  expect(summary).toMatch(
    new RegExp(`^3 rows · ${answer.rows_read.toLocaleString("en-US")} rows read · [\\d,]+ ms$`),
  );
  expect(answer.rows_read).toBeGreaterThanOrEqual(115);
  // Two columns, the second a number: a chart, its numbers the answer's.
  const bars = await page
    .locator('table[data-chart="n by event_name"] tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [tr.querySelector("th")?.textContent, tr.querySelector("td")?.textContent]),
    );
  expect(bars).toEqual(answer.rows.map((r) => [String(r.event_name), String(r.n)]));
  expect(await page.locator(".sql-chart canvas").count()).toBeGreaterThanOrEqual(1);

  // The address bar holds the query; the recent list has it.
  expect(new URL(page.url()).searchParams.get("q")).toBe(QUERY);
  await expect
    .poll(() =>
      page.getByRole("region", { name: "Recent queries" }).getByRole("button", { name: QUERY }).count(),
    )
    .toBe(1);
  await page.screenshot({ path: join(SCREENSHOTS, "sql-results.png"), fullPage: true });

  // The editor's chunks are this page's alone, and CodeMirror's injected styles pass the CSP.
  const editorChunks: string[] = [];
  for (const path of scripts.filter((s) => s.startsWith("/assets/chunk-"))) {
    if ((await (await fetch(`${d.origin}${path}`)).text()).includes("cm-editor")) {
      editorChunks.push(path);
    }
  }
  expect(editorChunks.length).toBeGreaterThanOrEqual(1);
  expect(cspViolations).toEqual([]);
  const overview = await d.context.newPage();
  const overviewScripts: string[] = [];
  overview.on("request", (r) => {
    if (r.resourceType() === "script") {
      overviewScripts.push(new URL(r.url()).pathname);
    }
  });
  await overview.goto(`${d.origin}/projects/${d.projectId}/overview`);
  await overview.locator(".top-events").waitFor();
  expect(overviewScripts.filter((s) => s.startsWith("/assets/dashboard-"))).toHaveLength(1);
  expect(overviewScripts.filter((s) => editorChunks.includes(s))).toEqual([]);
  await overview.close();
  await page.close();
});

it("a shared link opens with the query and runs it; a date series is drawn as a line over the days", async () => {
  const sql = "SELECT toDate(timestamp) AS day, count() AS events FROM events GROUP BY day ORDER BY day";
  const page = await d.open(`/projects/${d.projectId}/sql?q=${encodeURIComponent(sql)}`);
  const answer = await d.api<QueryAnswer>("/query", {
    method: "POST",
    body: { project_id: d.projectId, sql, limit: 1000 },
  });
  expect(await tableRows(page, "results")).toEqual(answer.rows.map((r) => [String(r.day), String(r.events)]));
  const points = await page
    .locator('table[data-chart="events by day"] tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [tr.querySelector("th")?.textContent, tr.querySelector("td")?.textContent]),
    );
  expect(points).toEqual(answer.rows.map((r) => [String(r.day), String(r.events)]));
  expect(squash(await page.getByRole("textbox", { name: "Query" }).textContent())).toBe(sql);
  await page.close();
});

it("shows a syntax error with the position it names, underlined in the editor", async () => {
  const page = await d.open(`/projects/${d.projectId}/sql`);
  // A blank first line: the endpoint trims the text, the page still points at the right place.
  const bad = "\nSELECT event_name\nFROM events\nWHERE event_name = = 'x'";
  await typeQuery(page, bad);
  await page.keyboard.press("Control+Enter");
  const alert = page.getByRole("region", { name: "Results" }).getByRole("alert");
  await alert.waitFor();
  // The API's own words, and where: the second "=" is position 50 of the trimmed text, line 4, column
  // 20 of the editor's.
  const res = await fetch(`${d.origin}/api/v1/query`, {
    method: "POST",
    headers: { "X-API-Key": d.fullKey, "Content-Type": "application/json" },
    body: JSON.stringify({ project_id: d.projectId, sql: bad }),
  });
  expect(res.status).toBe(400);
  const problem = (await res.json()) as { detail: string };
  expect(problem.detail).toMatch(/failed at position 50\b/);
  expect(squash(await alert.locator(".sql-error-at").textContent())).toBe("Line 4, column 20");
  expect(squash(await alert.textContent())).toContain(squash(problem.detail));
  expect(await page.locator(".cm-sql-error").textContent()).toBe("=");
  await page.screenshot({ path: join(SCREENSHOTS, "sql-error.png"), fullPage: true });
  // An execution failure (422) names no position: its detail is shown as the API wrote it.
  await typeQuery(page, "SELECT no_such_column FROM events");
  await page.keyboard.press("Control+Enter");
  await expect.poll(async () => squash(await alert.textContent())).toMatch(/no_such_column/);
  expect(await page.locator(".cm-sql-error").count()).toBe(0);
  await page.close();
});

it("the project navigation names the page; a member (no data:admin) neither sees it nor opens it", async () => {
  const page = await d.open(`/projects/${d.projectId}/overview`);
  await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "SQL" }).click();
  await page.waitForURL(`${d.origin}/projects/${d.projectId}/sql`);
  await page.close();

  const member = { email: "sql.analyst@studio.test", password: "dashboard-test-password-2" };
  await d.admin(
    "user",
    "create",
    "--tenant",
    d.tenantId,
    "--email",
    member.email,
    "--password",
    member.password,
    "--role",
    "member",
  );
  // Last in the file: the shared context signs out of the owner's session and in as the member.
  const other = await d.context.newPage();
  await d.context.clearCookies();
  await other.goto(`${d.origin}/sign-in`);
  await other.getByLabel("Email").fill(member.email);
  await other.getByLabel("Password").fill(member.password);
  await Promise.all([
    other.waitForURL(`${d.origin}/`),
    other.getByRole("button", { name: "Sign in" }).click(),
  ]);
  await other.goto(`${d.origin}/projects/${d.projectId}/overview`);
  const nav = other.getByRole("navigation", { name: "Project" });
  await nav.getByRole("link", { name: "Overview" }).waitFor();
  expect(await nav.getByRole("link", { name: "SQL" }).count()).toBe(0);
  const res = await other.goto(`${d.origin}/projects/${d.projectId}/sql`);
  expect(res?.status()).toBe(403);
  expect(squash(await other.locator("main").textContent())).toContain("needs the data:admin scope");
  await other.close();
});
