import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { REBUILT_ROLLUPS } from "../../workers/api/erasure/rollups.js";
import { launchChromium } from "../support/chromium.js";
import {
  type Dashboard,
  namedEvents,
  SCREENSHOTS,
  squash,
  startDashboard,
  tableRows,
} from "../support/dashboard.js";
import { parkBatch } from "../support/dead-letters.js";
import { waitFor } from "../support/wait.js";

// The data-administration pages in headless Chromium, driven by their visible labels as an owner: an
// export followed to its download (the file's rows counted), a player erased and gone from the SQL
// query, and parked batches replayed once however often Replay is pressed.

let d: Dashboard;

/** One number from POST /v1/query, as the API answers a client. */
async function count(where: string): Promise<number> {
  const q = await d.api<{ rows: Array<Record<string, unknown> | unknown[]> }>("/query", {
    method: "POST",
    body: { project_id: d.projectId, sql: `SELECT count() AS n FROM events WHERE ${where}` },
  });
  const row = q.rows[0];
  return Number(Array.isArray(row) ? row[0] : row?.n);
}

beforeAll(async () => {
  d = await startDashboard({ studio: "Privacy Studio", project: "Harbor Run" });
  await d.send([
    ...namedEvents("match_start", 12, { player: () => "alice" }),
    ...namedEvents("match_start", 7, { player: () => "bob" }),
    ...namedEvents("item_pickup", 5, { player: (i) => `p${i}` }),
  ]);
}, 240_000);

afterAll(async () => {
  await d?.close();
}, 60_000);

it("starts a CSV export, follows it to Completed and downloads the file with every row", async () => {
  const page = await d.open(`/projects/${d.projectId}/exports`);
  await page.getByText("No exports yet. Start one above.").waitFor();
  await page.getByLabel("Format").selectOption({ label: "CSV (with a header row)" });
  await page.getByLabel("Window").selectOption({ label: "Last 7 days" });
  await page.getByLabel("Event name").fill("match_start");
  await page.getByRole("button", { name: "Start export" }).click();
  await page.getByText(/^Export started \(csv,/).waitFor();
  const link = page.getByRole("link", { name: "Download csv" });
  await link.waitFor({ timeout: 60_000 });

  const [row] = await tableRows(page, "exports");
  const listed = await d.api<Array<{ id: string; rowCount: number; rowsWritten: number; status: string }>>(
    `/projects/${d.projectId}/exports`,
  );
  expect(listed[0]).toMatchObject({ status: "completed", rowCount: 19, rowsWritten: 19 });
  expect(row?.[3]).toBe("match_start");
  expect(row?.[4]).toBe("Completed");
  expect(row?.[5]).toBe("19 rows");
  expect(
    await page.getByRole("progressbar", { name: `Export ${listed[0]?.id} progress` }).getAttribute("value"),
  ).toBe("1");
  await page.screenshot({ path: join(SCREENSHOTS, "jobs-exports.png"), fullPage: true });

  const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
  const text = await readFile(await download.path(), "utf8");
  const [header, ...lines] = text.trimEnd().split("\n");
  expect(header?.split(",")).toContain('"event_name"');
  expect(lines).toHaveLength(19);
  expect(lines.every((l) => l.includes('"match_start"'))).toBe(true);
  await page.close();
});

it("a refused export says why in the form; a failed one says why and Retry starts the same export again", async () => {
  const page = await d.open(`/projects/${d.projectId}/exports`);
  await page.locator('table[data-table="exports"]').waitFor();
  const before = (await tableRows(page, "exports")).length;
  await page.getByLabel("Format").selectOption({ label: "NDJSON (one JSON object a line)" });
  await page.getByLabel("Window").selectOption({ label: "From … to … (UTC dates)" });
  await page.getByLabel("From (UTC date)").fill("2026-01-02");
  await page.getByLabel("To (UTC date, exclusive)").fill("2026-01-01");
  await page.getByRole("button", { name: "Start export" }).click();
  // The API refuses it and the form says why, naming the field; nothing was started.
  await expect
    .poll(() => page.locator("#export-form [role=alert]").textContent())
    .toContain("json.to: must be after from");
  expect(await page.getByLabel("To (UTC date, exclusive)").getAttribute("aria-invalid")).toBe("true");
  expect((await tableRows(page, "exports")).length).toBe(before);

  // An export fails only after three deliveries of its message failed in ClickHouse or R2 (about 30 s
  // of retry delays): the record is put in that end state as the consumer leaves it.
  const created = await d.api<{ id: string }>(`/projects/${d.projectId}/exports`, {
    method: "POST",
    body: { days: 2, format: "ndjson", eventName: "item_pickup" },
  });
  await waitFor(
    () => d.api<{ status: string }>(`/projects/${d.projectId}/exports/${created.id}`),
    (e) => e.status === "completed",
    { timeoutMs: 30_000, intervalMs: 250, message: "the export completed" },
  );
  const db = new pg.Client({ connectionString: d.service.databaseUrl });
  await db.connect();
  try {
    await db.query(
      "UPDATE data_exports SET status = 'failed', error = $2, object_key = NULL, row_count = NULL WHERE id = $1",
      [created.id, "Code: 241. DB::Exception: Memory limit exceeded"],
    );
  } finally {
    await db.end();
  }
  await page.reload();
  await page.getByText("Code: 241. DB::Exception: Memory limit exceeded").waitFor();
  const failedRow = (await tableRows(page, "exports"))[0];
  expect(failedRow?.[4]).toBe("Failed Code: 241. DB::Exception: Memory limit exceeded");
  expect(failedRow?.[6]).toBe("—");
  await page.screenshot({ path: join(SCREENSHOTS, "jobs-exports-failed.png"), fullPage: true });
  await page.getByRole("button", { name: `Retry export ${created.id}` }).click();
  // The same export again, as a new one, completed with the 5 item pickups.
  await page.getByRole("link", { name: "Download ndjson" }).first().waitFor({ timeout: 60_000 });
  const listed = await d.api<Array<{ id: string; status: string; eventName: string; rowCount: number }>>(
    `/projects/${d.projectId}/exports`,
  );
  expect(listed[0]).toMatchObject({ status: "completed", eventName: "item_pickup", rowCount: 5 });
  expect(listed[0]?.id).not.toBe(created.id);
  await page.close();
});

it("lists parked batches with reason and size and replays them until none remain; a second replay adds nothing", async () => {
  const events = namedEvents("parked_event", 9, { player: (i) => `dl${i}` });
  // The same batch parked twice (two dead-lettered deliveries of it).
  const parked = await parkBatch(d.service, {
    tenantId: d.tenantId,
    projectId: d.projectId,
    batchKey: "parkedbatch1",
    events,
    messageIds: ["dl-1", "dl-2"],
  });
  const page = await d.open(`/projects/${d.projectId}/dead-letters`);
  const rows = await tableRows(page, "dead-letters");
  expect(rows).toHaveLength(2);
  for (const r of rows) {
    expect(r[1]).toBe("parkedbatch1");
    expect(r[2]).toBe(`${parked.bytes} bytes`);
    expect(r[4]).toBe("Storing it failed on every delivery (ClickHouse refused or was unreachable)");
  }
  await page.screenshot({ path: join(SCREENSHOTS, "jobs-dead-letters.png"), fullPage: true });

  await page.getByRole("button", { name: "Replay all" }).click();
  await page.getByText("Replayed 2 batches. None remain.").waitFor({ timeout: 30_000 });
  await page.getByText("No parked batches: every batch was stored.").waitFor();
  expect(await page.getByRole("button", { name: "Replay all" }).isDisabled()).toBe(true);
  await waitFor(
    () => count("event_name = 'parked_event'"),
    (n) => n >= 9,
    { timeoutMs: 30_000, intervalMs: 250, message: "the replayed events stored" },
  );

  // Parked and replayed again: the consumer skips the events it holds. A marker sent afterwards through
  // the same queue is the barrier (one delivery at a time, in order).
  await parkBatch(d.service, {
    tenantId: d.tenantId,
    projectId: d.projectId,
    batchKey: "parkedbatch1",
    events,
    messageIds: ["dl-3"],
  });
  await page.reload();
  expect(await tableRows(page, "dead-letters")).toHaveLength(1);
  await page.getByRole("button", { name: "Replay all" }).click();
  await page.getByText("Replayed 1 batch. None remain.").waitFor({ timeout: 30_000 });
  await d.send(namedEvents("replay_marker", 1));
  await waitFor(
    () => count("event_name = 'replay_marker'"),
    (n) => n === 1,
    { timeoutMs: 30_000, intervalMs: 250, message: "the marker stored" },
  );
  await d.service.insertsSettled();
  expect(await count("event_name = 'parked_event'")).toBe(9);
  await page.screenshot({ path: join(SCREENSHOTS, "jobs-dead-letters-replayed.png"), fullPage: true });
  await page.close();
});

it("erases a player after a confirmation naming the tables, shows each table's rows and the result, and the player is gone from a query", async () => {
  expect(await count("player_id = 'alice'")).toBe(12);
  const page = await d.open(`/projects/${d.projectId}/erasure`);
  await page.getByText("No player has been erased in this project.").waitFor();
  await page.getByLabel("Player ID").fill("alice");
  await page.getByRole("button", { name: "Review erasure" }).click();
  await page.getByRole("heading", { name: "Erase player “alice”?" }).waitFor();
  const plan = await tableRows(page, "erasure-plan");
  expect(plan[0]).toEqual(["telemetry.events", "12"]);
  expect(plan.map((r) => r[0])).toContain("telemetry.funnel_events");
  await page.screenshot({ path: join(SCREENSHOTS, "jobs-erasure-confirm.png"), fullPage: true });

  // The page asks for the asynchronous answer (the erasure runs on its queue) and follows the erasure
  // by polling GET …/erasures/{erasureId} until it is done.
  const started = page.waitForResponse(
    (r) => r.request().method() === "POST" && /\/erasures$/.test(new URL(r.url()).pathname),
  );
  await page.getByRole("button", { name: "Erase player" }).click();
  const answer = await started;
  expect(answer.status()).toBe(202);
  expect(answer.headers().location).toMatch(/\/erasures\/[0-9a-f-]{36}$/);
  const result = page.locator("[data-result=completed]");
  await result.waitFor({ timeout: 60_000 });
  expect(squash(await result.textContent())).toMatch(
    new RegExp(
      `^Done: [\\d,]+ rows removed from \\d+ tables \\(12 events\\); ${REBUILT_ROLLUPS.length} rollups rebuilt without the player\\.$`,
    ),
  );
  const steps = await tableRows(page, "erasure-steps");
  expect(steps[0]).toEqual(["telemetry.events", "12"]);
  expect(steps.every((r) => r[1] !== "waiting")).toBe(true);
  const id = new URL(page.url()).searchParams.get("erasure");
  const erasure = await d.api<{ status: string; rowsRemoved: number; steps: unknown[] }>(
    `/projects/${d.projectId}/erasures/${id}`,
  );
  expect(erasure).toMatchObject({ status: "completed", rowsRemoved: 12 });
  expect(steps).toHaveLength(erasure.steps.length);
  // The studio's history lists it.
  await expect.poll(async () => (await tableRows(page, "erasures")).length).toBe(1);
  const [history] = await tableRows(page, "erasures");
  expect(history?.[2]).toBe("Done");
  expect(history?.[3]).toBe("12");
  await page.screenshot({ path: join(SCREENSHOTS, "jobs-erasure-done.png"), fullPage: true });

  // Gone from the SQL query; bob is untouched.
  expect(await count("player_id = 'alice'")).toBe(0);
  expect(await count("player_id = 'bob'")).toBe(7);

  // The status page is its URL.
  const again = await d.open(`/projects/${d.projectId}/erasure?erasure=${id}`);
  await again.locator("[data-result=completed]").waitFor();
  expect(await tableRows(again, "erasure-steps")).toEqual(steps);
  await again.close();
  await page.close();
});

it("a member's session gets the three pages' 403 naming the scope, no form and no link", async () => {
  const member = { email: "privacy.analyst@studio.test", password: "member-test-password-1" };
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
  const profileDir = await mkdtemp(join(tmpdir(), "chromium-member-"));
  const context = await launchChromium(profileDir, { viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    await page.goto(`${d.origin}/sign-in`);
    await page.getByLabel("Email").fill(member.email);
    await page.getByLabel("Password").fill(member.password);
    await Promise.all([
      page.waitForURL(`${d.origin}/`),
      page.getByRole("button", { name: "Sign in" }).click(),
    ]);
    for (const [path, what, form] of [
      ["exports", "Exports", "Start export"],
      ["erasure", "Player erasure", "Review erasure"],
      ["dead-letters", "Dead letters", "Replay all"],
    ] as const) {
      // The shell answers 403 naming the scope (PAGE_SCOPES), and the navigation leaves the page out.
      const res = await page.goto(`${d.origin}/projects/${d.projectId}/${path}`);
      expect(res?.status(), path).toBe(403);
      expect(await page.locator("body").textContent()).toContain(
        `The ${what} page needs the data:admin scope`,
      );
      expect(await page.getByRole("button", { name: form }).count(), path).toBe(0);
      await page.goto(`${d.origin}/projects/${d.projectId}/overview`);
      expect(await page.getByRole("link", { name: what, exact: true }).count(), path).toBe(0);
    }
    await page.screenshot({ path: join(SCREENSHOTS, "jobs-member.png"), fullPage: true });
  } finally {
    await context.close();
    await rm(profileDir, { recursive: true, force: true });
  }
});
