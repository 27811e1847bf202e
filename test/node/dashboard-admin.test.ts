import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkerPng,
  type Dashboard,
  harborBuilds,
  squash,
  startDashboard,
  tableRows,
  uploadMap,
} from "../support/dashboard.js";

// The pages that change things: alert rules, the evaluation history and channels; maps; threshold
// profiles; the content registry. Each test works through the page as the studio's owner in headless
// Chromium and checks the outcome against what /api/v1 answers to a key of the same project. Every test
// creates its own records under names no other test uses, so none depends on another's state.

let d: Dashboard;
let base: string;

beforeAll(async () => {
  d = await startDashboard();
  base = `/projects/${d.projectId}`;
  await d.send(harborBuilds());
}, 240_000);

afterAll(async () => {
  await d?.close();
}, 60_000);

/** The rows of a table whose first cell is `first`. */
async function rowsNamed(page: Page, table: string, first: string): Promise<string[][]> {
  return (await tableRows(page, table)).filter((r) => r[0] === first);
}

type Rule = {
  id: string;
  name: string;
  mapId: string;
  metric: string;
  thresholdLevel: string;
  failPercentage: number;
  evaluationDays: number;
  cellSize: number;
  cooldownMinutes: number;
  isActive: boolean;
  thresholdProfileIds: string[];
  channelIds: string[];
};

type Channel = { id: string; kind: string; name: string; url: string };

async function profile(name: string, fields: Record<string, unknown>): Promise<string> {
  return (
    await d.api<{ id: string }>(`${base}/threshold-profiles`, { method: "POST", body: { name, ...fields } })
  ).id;
}

/** A 100 × 100 world map drawn by a 64 px image (an existing map ID is replaced). */
const squareMap = (mapId: string, name: string) =>
  uploadMap(d, { mapId, name, minX: 0, minY: 0, maxX: 100, maxY: 100, width: 64, height: 64 });

describe("alerts page", () => {
  it("a channel is created through the form, its signing secret shown once, and deleted", async () => {
    const page = await d.open(`${base}/alerts`);
    page.on("dialog", (dialog) => void dialog.accept());
    const form = page.locator("#channel-form");
    await form.getByLabel("Name").fill("QA on-call hook");
    await form.getByLabel("URL").fill("http://127.0.0.1:9/qa-hook");
    await form.getByRole("button", { name: "Create channel" }).click();
    const secret = page.getByLabel("Signing secret");
    await secret.waitFor();
    const channels = await d.api<Channel[]>(`${base}/channels`);
    const mine = channels.filter((c) => c.name === "QA on-call hook");
    expect(mine.map((c) => [c.kind, c.url])).toEqual([["webhook", "http://127.0.0.1:9/qa-hook"]]);
    // A webhook's secret is a signing key: shown in the create answer only, never listed again.
    expect((await secret.inputValue()).length).toBeGreaterThanOrEqual(32);
    expect(JSON.stringify(channels)).not.toContain(await secret.inputValue());
    await expect
      .poll(async () => (await rowsNamed(page, "channels", "QA on-call hook")).map((r) => r.slice(0, 3)))
      .toEqual([["QA on-call hook", "Webhook", "http://127.0.0.1:9/qa-hook"]]);

    // Reloaded, the secret is gone from the page; the channel is still listed.
    await page.reload();
    await expect.poll(() => rowsNamed(page, "channels", "QA on-call hook")).toHaveLength(1);
    expect(await page.getByLabel("Signing secret").count()).toBe(0);

    await page.getByRole("button", { name: "Delete QA on-call hook" }).click();
    await expect.poll(() => rowsNamed(page, "channels", "QA on-call hook").catch(() => [])).toEqual([]);
    expect((await d.api<Channel[]>(`${base}/channels`)).some((c) => c.name === "QA on-call hook")).toBe(
      false,
    );
    await page.close();
  });

  it("a channel URL the API refuses shows its detail in the form, and nothing is created", async () => {
    const page = await d.open(`${base}/alerts`);
    const form = page.locator("#channel-form");
    await form.getByLabel("Name").fill("Plain http hook");
    await form.getByLabel("URL").fill("http://hooks.example.test/x");
    await form.getByRole("button", { name: "Create channel" }).click();
    const alert = form.locator('[role="alert"]');
    await expect
      .poll(async () => squash(await alert.textContent()))
      .toBe("json.url: must use https (plain http only to a loopback host)");
    expect(await form.getByLabel("URL").getAttribute("aria-invalid")).toBe("true");
    expect((await d.api<Channel[]>(`${base}/channels`)).some((c) => c.name === "Plain http hook")).toBe(
      false,
    );
    await page.close();
  });

  it("a rule is created, edited, deactivated and reactivated through the page; the API holds each change", async () => {
    const map = await squareMap("docks", "Docks");
    const profileId = await profile("Docks console", { fpsGood: 50, fpsWarn: 30 });
    const page = await d.open(`${base}/alerts`);
    page.on("dialog", (dialog) => void dialog.accept());
    const form = page.locator("#rule-form");
    await form.getByLabel("Name", { exact: true }).fill("Docks FPS");
    await form.getByLabel("Map").selectOption(map.id);
    await form.getByLabel("Metric").selectOption("fps");
    await form.getByLabel("A cell fails when it misses the").selectOption("good");
    await form.getByLabel("Trigger above (% of cells failing)").fill("25");
    await form.getByLabel("Evaluation period (days)").fill("3");
    await form.getByLabel("Cell size").selectOption("25");
    await form.getByLabel("Cooldown (minutes between notifications)").fill("30");
    await form.getByLabel("Docks console").check();
    await form.getByRole("button", { name: "Create rule" }).click();
    await expect
      .poll(async () => squash(await form.getByRole("status").textContent()))
      .toBe("Created “Docks FPS”.");

    const find = async () => (await d.api<Rule[]>(`${base}/alerts`)).find((r) => r.name === "Docks FPS");
    const created = await find();
    expect(created).toMatchObject({
      mapId: map.id,
      metric: "fps",
      thresholdLevel: "good",
      failPercentage: 25,
      evaluationDays: 3,
      cellSize: 25,
      cooldownMinutes: 30,
      isActive: true,
      thresholdProfileIds: [profileId],
      channelIds: [],
    });
    await expect
      .poll(async () => (await rowsNamed(page, "rules", "Docks FPS")).map((r) => r.slice(0, 13)))
      .toEqual([
        [
          "Docks FPS",
          "Docks",
          "FPS",
          "misses good",
          "25 %",
          "3 d",
          "25",
          "30 min",
          "Docks console",
          "—",
          "Active",
          "Not evaluated yet",
          "not evaluated yet",
        ],
      ]);

    // Edit: the form is filled with the rule; a changed trigger is saved with PATCH.
    await page.getByRole("button", { name: "Edit Docks FPS" }).click();
    expect(await form.getByLabel("Name", { exact: true }).inputValue()).toBe("Docks FPS");
    expect(await form.getByLabel("Cell size").inputValue()).toBe("25");
    await form.getByLabel("Trigger above (% of cells failing)").fill("40.5");
    await form.getByRole("button", { name: "Save rule" }).click();
    await expect.poll(async () => (await find())?.failPercentage).toBe(40.5);
    expect((await find())?.id).toBe(created?.id);
    await expect.poll(async () => (await rowsNamed(page, "rules", "Docks FPS"))[0]?.[4]).toBe("40.5 %");

    await page.getByRole("button", { name: "Deactivate Docks FPS" }).click();
    await expect.poll(async () => (await find())?.isActive).toBe(false);
    await expect.poll(async () => (await rowsNamed(page, "rules", "Docks FPS"))[0]?.[10]).toBe("Inactive");

    await page.getByRole("button", { name: "Reactivate Docks FPS" }).click();
    await expect.poll(async () => (await find())?.isActive).toBe(true);
    await expect.poll(async () => (await rowsNamed(page, "rules", "Docks FPS"))[0]?.[10]).toBe("Active");
    await page.close();
  });

  it("a rule on the frame-budget share is created through the page and listed by its label", async () => {
    const map = await squareMap("quay", "Quay");
    await profile("Quay phones", { budgetShareGood: 0.95, budgetShareWarn: 0.8 });
    const page = await d.open(`${base}/alerts`);
    const form = page.locator("#rule-form");
    await form.getByLabel("Name", { exact: true }).fill("Quay budget");
    await form.getByLabel("Map").selectOption(map.id);
    await form.getByLabel("Metric").selectOption({ label: "Within frame budget (% of heartbeats)" });
    await form.getByLabel("Quay phones").check();
    await form.getByRole("button", { name: "Create rule" }).click();
    await expect
      .poll(async () => squash(await form.getByRole("status").textContent()))
      .toBe("Created “Quay budget”.");
    const rule = (await d.api<Rule[]>(`${base}/alerts`)).find((r) => r.name === "Quay budget");
    expect(rule).toMatchObject({ metric: "budget_share", thresholdLevel: "warn" });
    await expect
      .poll(async () => (await rowsNamed(page, "rules", "Quay budget"))[0]?.slice(0, 4))
      .toEqual(["Quay budget", "Quay", "Within frame budget", "misses warn"]);
    await page.close();
  });

  it("a rule the API refuses (no profile) shows the problem detail and is not created", async () => {
    await squareMap("pier", "Pier");
    await profile("Pier unused", { fpsGood: 50 });
    const page = await d.open(`${base}/alerts`);
    const form = page.locator("#rule-form");
    await form.getByLabel("Name", { exact: true }).fill("No profile rule");
    // The map choices load after the form is drawn; a required select left empty would stop the
    // browser from sending anything, so the map is chosen (waiting for its option) first.
    await form.getByLabel("Map").selectOption({ label: "Pier (pier)" });
    await form.getByRole("button", { name: "Create rule" }).click();
    const alert = form.locator('[role="alert"]');
    await expect.poll(async () => squash(await alert.textContent())).toMatch(/thresholdProfileIds/);
    expect((await d.api<Rule[]>(`${base}/alerts`)).some((r) => r.name === "No profile rule")).toBe(false);
    await page.close();
  });

  it("after a cron run the history shows the API's evaluation: 3 of 3 PS5 cells under the good mark", async () => {
    const map = await squareMap("harbor", "Harbor");
    const profileId = await profile("PS5 at 50", { platform: "PS5", fpsGood: 50, fpsWarn: 30 });
    await d.api(`${base}/alerts`, {
      method: "POST",
      body: {
        name: "Harbor PS5 FPS",
        mapId: map.id,
        metric: "fps",
        thresholdLevel: "good",
        failPercentage: 50,
        evaluationDays: 1,
        cellSize: 10,
        cooldownMinutes: 60,
        thresholdProfileIds: [profileId],
        channelIds: [],
      },
    });
    const cron = await fetch(`${d.origin}/__scheduled?cron=${encodeURIComponent("*/5 * * * *")}`);
    expect(cron.status).toBe(200);
    type Evaluation = {
      ruleName: string;
      status: string;
      failCount: number;
      totalCount: number;
      failPercentage: number;
      notified: boolean;
      thresholdProfileName: string | null;
      createdAt: string;
      worstCells: unknown[];
      links: { heatmap: string } | null;
    };
    const mine = async () =>
      (await d.api<Evaluation[]>(`${base}/alerts/history`)).filter((e) => e.ruleName === "Harbor PS5 FPS");
    await expect.poll(async () => (await mine()).length, { timeout: 30_000 }).toBe(1);
    const [event] = await mine();
    // Independently: PS5 samples sit at x = 0..24 (cells 0, 10, 20 of size 10), every one at 45 fps,
    // below the profile's good mark of 50: 3 failing cells of 3, 100 %, over the rule's 50 %.
    expect(event).toMatchObject({
      status: "triggered",
      failCount: 3,
      totalCount: 3,
      failPercentage: 100,
      notified: false,
      thresholdProfileName: "PS5 at 50",
    });

    const page = await d.open(`${base}/alerts`);
    const shown = (await tableRows(page, "history")).filter((r) => r[1] === "Harbor PS5 FPS");
    expect(shown).toEqual([
      [
        `${event?.createdAt.slice(0, 16).replace("T", " ")} UTC`,
        "Harbor PS5 FPS",
        "PS5 at 50",
        "FPS",
        "Triggered",
        "3 of 3",
        "100.00 %",
        "No",
        // Worst first: equal means, then more samples (10, 10, 5), then lower x; every sample is below
        // the mark, so each cell fails whole.
        "(0, 0) 45 fps, 10 samples, 100 % failing(10, 0) 45 fps, 10 samples, 100 % failing" +
          "(20, 0) 45 fps, 5 samples, 100 % failingOpen heatmap",
      ],
    ]);
    // The links open the heatmap set to the evaluation (this service has no APP_URL: root-relative),
    // each cell's with its `at`.
    const heatmap = `${base}/heatmap?map=harbor&metric=fps&profile=${profileId}&build=&cell=10&days=1`;
    const row = page.locator('table[data-table="history"] tbody tr', { hasText: "Harbor PS5 FPS" });
    const hrefs = await row
      .locator(".worst-cells a")
      .evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    expect(hrefs).toEqual([`${heatmap}&at=0,0`, `${heatmap}&at=10,0`, `${heatmap}&at=20,0`, heatmap]);
    expect(event).toMatchObject({
      links: { heatmap },
      worstCells: [
        { x: 0, y: 0, cellSize: 10, value: 45, samples: 10, link: `${heatmap}&at=0,0` },
        { x: 10, y: 0, cellSize: 10, value: 45, samples: 10, link: `${heatmap}&at=10,0` },
        { x: 20, y: 0, cellSize: 10, value: 45, samples: 5, link: `${heatmap}&at=20,0` },
      ],
    });
    // The rule's row carries the same latest status.
    const rule = await rowsNamed(page, "rules", "Harbor PS5 FPS");
    expect(rule[0]?.[11]).toMatch(/^Triggered/);
    // And when it was evaluated, through the jobs queue the cron planned: moments ago, not flagged.
    expect(rule[0]?.[12]).toMatch(/^evaluated (just now|[0-9] min ago)$/);
    // A cell's link opens the heatmap page with the rule's map, metric, profile, cell size and days set.
    await row.locator(".worst-cells a", { hasText: "(10, 0)" }).click();
    await page.waitForURL((u) => u.pathname === `${base}/heatmap`);
    expect(new URL(page.url()).searchParams.get("at")).toBe("10,0");
    await page.locator("#ctl-days").waitFor();
    const controls = await Promise.all(
      ["map", "metric", "profile", "cell", "days"].map((n) => page.locator(`#ctl-${n}`).inputValue()),
    );
    expect(controls).toEqual(["harbor", "fps", profileId, "10", "1"]);
    await page.close();
  });
});

describe("maps page", () => {
  type MapRecord = {
    id: string;
    mapId: string;
    name: string;
    worldMinX: number;
    worldMaxX: number;
    worldMinY: number;
    worldMaxY: number;
    worldMinZ: number | null;
    worldMaxZ: number | null;
    imageWidth: number;
    imageHeight: number;
  };
  const png = (w: number, h: number, name: string) => ({
    name,
    mimeType: "image/png",
    buffer: Buffer.from(checkerPng(w, h)),
  });

  it("a map uploaded through the form is listed with its bounds and image size, then deleted", async () => {
    const page = await d.open(`${base}/maps`);
    page.on("dialog", (dialog) => void dialog.accept());
    const form = page.locator("#map-form");
    await form.getByLabel("Image").setInputFiles(png(80, 40, "canyon.png"));
    await form.getByLabel("Map ID").fill("canyon");
    await form.getByLabel("Name", { exact: true }).fill("Canyon");
    await form.getByLabel("World min X").fill("-200");
    await form.getByLabel("World max X").fill("200");
    await form.getByLabel("World min Y").fill("-50.5");
    await form.getByLabel("World max Y").fill("149.5");
    await form.getByRole("button", { name: "Upload map" }).click();
    await expect
      .poll(async () => squash(await form.getByRole("status").textContent()))
      .toBe("Map “canyon” uploaded.");

    const maps = await d.api<MapRecord[]>(`${base}/maps`);
    const canyon = maps.find((m) => m.mapId === "canyon");
    expect(canyon).toMatchObject({
      name: "Canyon",
      worldMinX: -200,
      worldMaxX: 200,
      worldMinY: -50.5,
      worldMaxY: 149.5,
      worldMinZ: null,
      worldMaxZ: null,
      imageWidth: 80,
      imageHeight: 40,
    });
    const row = (await tableRows(page, "maps")).find((r) => r[2] === "canyon");
    expect(row?.slice(1, 6)).toEqual(["Canyon", "canyon", "-200 … 200", "-50.5 … 149.5", "—"]);
    expect(row?.[6]).toBe("80 × 40 px");
    // The thumbnail is the uploaded image, served to the session.
    await expect
      .poll(() =>
        page.evaluate<number>(
          `(() => { const i = document.querySelector('img[alt="Canyon map image"]'); return i && i.complete ? i.naturalWidth : 0; })()`,
        ),
      )
      .toBe(80);

    await page.getByRole("button", { name: "Delete Canyon" }).click();
    await expect
      .poll(async () => (await d.api<MapRecord[]>(`${base}/maps`)).some((m) => m.mapId === "canyon"))
      .toBe(false);
    await expect.poll(() => page.getByAltText("Canyon map image").count()).toBe(0);
    await page.close();
  });

  it("bounds that do not enclose an area show the API's detail on that field, and nothing is stored", async () => {
    const page = await d.open(`${base}/maps`);
    const form = page.locator("#map-form");
    await form.getByLabel("Image").setInputFiles(png(32, 32, "flat.png"));
    await form.getByLabel("Map ID").fill("flatland");
    await form.getByLabel("Name", { exact: true }).fill("Flatland");
    await form.getByLabel("World min X").fill("10");
    await form.getByLabel("World max X").fill("10");
    await form.getByLabel("World min Y").fill("0");
    await form.getByLabel("World max Y").fill("10");
    await form.getByRole("button", { name: "Upload map" }).click();
    const res = await fetch(`${d.origin}/api/v1/maps/upload`, {
      method: "POST",
      headers: { "X-API-Key": d.fullKey, "X-Project-Id": d.projectId },
      body: (() => {
        const f = new FormData();
        f.set("image", new Blob([checkerPng(32, 32)], { type: "image/png" }), "flat.png");
        for (const [k, v] of Object.entries({
          mapId: "flatland",
          name: "Flatland",
          worldMinX: "10",
          worldMaxX: "10",
          worldMinY: "0",
          worldMaxY: "10",
        })) {
          f.set(k, v);
        }
        return f;
      })(),
    });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { detail: string };
    const alert = form.locator('[role="alert"]');
    await expect.poll(async () => squash(await alert.textContent())).toBe(problem.detail);
    expect(
      await form.locator("[aria-invalid=true]").evaluateAll((els) => els.map((e) => e.getAttribute("name"))),
    ).toHaveLength(1);
    expect((await d.api<MapRecord[]>(`${base}/maps`)).some((m) => m.mapId === "flatland")).toBe(false);
    await page.close();
  });
});

describe("threshold profiles page", () => {
  type Profile = Record<string, string | number | null> & { id: string; name: string };

  it("a profile is created with device filters and thresholds, edited (a blank clears), and deleted", async () => {
    const page = await d.open(`${base}/profiles`);
    page.on("dialog", (dialog) => void dialog.accept());
    const form = page.locator("#profile-form");
    await form.getByLabel("Name", { exact: true }).fill("Steam Deck");
    await form.getByLabel("Platform").fill("SteamDeck");
    await form.getByLabel("Resolution").fill("1280x800");
    await form.getByLabel("FPS good (fps)").fill("40");
    await form.getByLabel("FPS warn (fps)").fill("30");
    await form.getByLabel("Frame time good (ms)").fill("25");
    await form.getByLabel("Memory warn (MB)").fill("12288");
    // The frame budget's share in percent; the API holds 0 to 1.
    await form.getByLabel("Within frame budget good (%)").fill("90");
    await form.getByRole("button", { name: "Create profile" }).click();
    await expect
      .poll(async () => squash(await form.getByRole("status").textContent()))
      .toBe("Created “Steam Deck”.");

    const find = async () =>
      (await d.api<Profile[]>(`${base}/threshold-profiles`)).find((p) => p.name === "Steam Deck");
    expect(await find()).toMatchObject({
      platform: "SteamDeck",
      resolution: "1280x800",
      buildConfig: null,
      gpu: null,
      storage: null,
      fpsGood: 40,
      fpsWarn: 30,
      frameTimeGood: 25,
      frameTimeWarn: null,
      memoryGood: null,
      memoryWarn: 12288,
      gpuTimeGood: null,
      gpuTimeWarn: null,
      budgetShareGood: 0.9,
      budgetShareWarn: null,
    });
    await expect
      .poll(async () => (await rowsNamed(page, "profiles", "Steam Deck")).map((r) => r.slice(0, 7)))
      .toEqual([
        [
          "Steam Deck",
          "Platform: SteamDeck, Resolution: 1280x800",
          "40 / 30",
          "25 / —",
          "— / 12,288",
          "— / —",
          "90 % / —",
        ],
      ]);

    await page.getByRole("button", { name: "Edit Steam Deck" }).click();
    expect(await form.getByLabel("FPS warn (fps)").inputValue()).toBe("30");
    expect(await form.getByLabel("Within frame budget good (%)").inputValue()).toBe("90");
    await form.getByLabel("FPS warn (fps)").fill("25");
    await form.getByLabel("Resolution").fill("");
    await form.getByRole("button", { name: "Save profile" }).click();
    await expect.poll(async () => (await find())?.fpsWarn).toBe(25);
    expect(await find()).toMatchObject({ resolution: null, fpsGood: 40, memoryWarn: 12288 });
    await expect
      .poll(async () => (await rowsNamed(page, "profiles", "Steam Deck"))[0]?.slice(1, 3))
      .toEqual(["Platform: SteamDeck", "40 / 25"]);

    await page.getByRole("button", { name: "Delete Steam Deck" }).click();
    await expect.poll(async () => (await find()) === undefined).toBe(true);
    await expect
      .poll(async () => (await rowsNamed(page, "profiles", "Steam Deck").catch(() => [])).length)
      .toBe(0);
    await page.close();
  });

  it("a device filter longer than ingest accepts is refused with the API's detail, on that field", async () => {
    const page = await d.open(`${base}/profiles`);
    const form = page.locator("#profile-form");
    const resolution = "7680x4320-ultrawide-experimental-mode";
    await form.getByLabel("Name", { exact: true }).fill("Too long");
    await form.getByLabel("Resolution").fill(resolution);
    await form.getByLabel("FPS good (fps)").fill("60");
    await form.getByRole("button", { name: "Create profile" }).click();
    const res = await fetch(`${d.origin}/api/v1${base}/threshold-profiles`, {
      method: "POST",
      headers: { "X-API-Key": d.fullKey, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Too long", resolution, fpsGood: 60 }),
    });
    const problem = (await res.json()) as { detail: string };
    expect(res.status).toBe(400);
    expect(problem.detail).toMatch(/^json\.resolution: /);
    await expect
      .poll(async () => squash(await form.locator('[role="alert"]').textContent()))
      .toBe(problem.detail);
    expect(await form.getByLabel("Resolution").getAttribute("aria-invalid")).toBe("true");
    expect((await d.api<Profile[]>(`${base}/threshold-profiles`)).some((p) => p.name === "Too long")).toBe(
      false,
    );
    await page.close();
  });
});

describe("content registry page", () => {
  type Entry = {
    id: string;
    contentType: string;
    contentId: string;
    displayName: string;
    category: string | null;
    description: string | null;
    metadata: Record<string, unknown> | null;
  };

  it("entries are saved (upsert by type and id), filtered by type in the URL, and deleted", async () => {
    const page = await d.open(`${base}/content`);
    page.on("dialog", (dialog) => void dialog.accept());
    const form = page.locator("#content-form");
    const save = async (e: {
      type: string;
      id: string;
      name: string;
      category?: string;
      metadata?: string;
    }) => {
      await form.getByLabel("Content type").fill(e.type);
      await form.getByLabel("Content ID").fill(e.id);
      await form.getByLabel("Display name").fill(e.name);
      await form.getByLabel("Category").fill(e.category ?? "");
      await form.getByLabel("Metadata (JSON object)").fill(e.metadata ?? "");
      await form.getByRole("button", { name: "Save entry" }).click();
      await expect
        .poll(async () => squash(await form.getByRole("status").textContent()))
        .toBe(`Saved ${e.type} / ${e.id}.`);
    };
    await save({
      type: "weapon",
      id: "wpn_rifle_01",
      name: "Rifle",
      category: "primary",
      metadata: '{"damage": 42}',
    });
    await save({ type: "weapon", id: "wpn_rifle_01", name: "Marksman rifle", category: "primary" });
    await save({ type: "zone", id: "zn_docks", name: "Docks" });

    const all = await d.api<Entry[]>(`${base}/content`);
    const rifle = all.filter((e) => e.contentId === "wpn_rifle_01");
    // Saved twice, stored once: the second save replaced the name and cleared the metadata.
    expect(rifle.map((e) => [e.contentType, e.displayName, e.category, e.metadata])).toEqual([
      ["weapon", "Marksman rifle", "primary", null],
    ]);

    await page.locator("#ctl-type").fill("weapon");
    await page.locator("#ctl-type").press("Enter");
    await expect.poll(() => new URL(page.url()).searchParams.get("type")).toBe("weapon");
    const weapons = await d.api<Entry[]>(`${base}/content?type=weapon`);
    await expect
      .poll(async () => (await tableRows(page, "content")).map((r) => r.slice(0, 4)))
      .toEqual(weapons.map((e) => [e.contentType, e.contentId, e.displayName, e.category ?? "—"]));
    expect(weapons.map((e) => e.contentId)).toContain("wpn_rifle_01");
    expect(weapons.some((e) => e.contentType === "zone")).toBe(false);

    // A shared link opens the same filter.
    const shared = await d.open(`${base}/content?type=zone`);
    expect((await tableRows(shared, "content")).map((r) => r.slice(0, 3))).toEqual([
      ["zone", "zn_docks", "Docks"],
    ]);
    shared.on("dialog", (dialog) => void dialog.accept());
    await shared.getByRole("button", { name: "Delete zone zn_docks" }).click();
    await expect
      .poll(async () => (await d.api<Entry[]>(`${base}/content?type=zone`)).map((e) => e.contentId))
      .toEqual([]);
    await expect
      .poll(async () => squash(await shared.locator(".state.empty").textContent()))
      .toBe("No entries of type “zone”.");
    await shared.close();
    await page.close();
  });

  it("metadata that is not a JSON object is refused in the form, and nothing is saved", async () => {
    const page = await d.open(`${base}/content`);
    const form = page.locator("#content-form");
    await form.getByLabel("Content type").fill("weapon");
    await form.getByLabel("Content ID").fill("wpn_broken");
    await form.getByLabel("Display name").fill("Broken");
    await form.getByLabel("Metadata (JSON object)").fill("{damage: 42");
    await form.getByRole("button", { name: "Save entry" }).click();
    await expect
      .poll(async () => squash(await form.locator('[role="alert"]').textContent()))
      .toBe("Metadata: not valid JSON.");
    expect((await d.api<Entry[]>(`${base}/content`)).some((e) => e.contentId === "wpn_broken")).toBe(false);
    await page.close();
  });
});
