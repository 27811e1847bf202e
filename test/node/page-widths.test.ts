import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type CallbackServer, startCallbackServer } from "../support/callback-server.js";
import { launchChromium } from "../support/chromium.js";
import {
  type Dashboard,
  namedEvents,
  perfEvents,
  SCREENSHOTS,
  startDashboard,
  uploadMap,
} from "../support/dashboard.js";
import { linkIn, mailTo } from "../support/mail.js";
import { waitFor } from "../support/wait.js";

// Every page in headless Chromium at a 1280 px wide window, over data with very long names (studio,
// project, emails, builds, maps, profiles, content, events, sessions, channels, rules, keys, OAuth
// clients): none may be wider than the window. The pages come from the router itself (the web app's GET
// routes and the dashboard's page registry), so a new page fails here until it is given a URL below.

const WIDTH = 1280;
const DIR = join(SCREENSHOTS, "widths");

/** Long names as people and pipelines write them: some with spaces, some one unbroken token. */
const LONG = {
  studio:
    "Northern Lights Interactive Entertainment & Simulation Studios International (Europe) GmbH & Co. KG",
  project: "Harbor Run: Definitive Remastered Anniversary Edition — Early Access Performance Branch",
  email:
    "quality.assurance.performance.lead.northern.region@northern-lights-interactive-entertainment.example",
  member:
    "associate.technical.artist.environment.lighting.team@northern-lights-interactive-entertainment.example",
  signUp:
    "independent.developer.with.an.unusually.long.mailbox.name@a-very-long-personal-domain-name.example",
  build: "2026.11.26-release-candidate-hotfix-7f3e9c2a1b4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c",
  build2: "2026.11.27-release-candidate-hotfix-0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d",
  platform: "NintendoSwitch2-DevKit-HighPerformanceMode-DockedOverclocked-EU",
  mapId: "world_03_frozen_harbor_district_night_variant_with_extended_docks_and_lighthouse_v2_final_FINAL",
  mapName:
    "Frozen Harbor District (Night) — extended docks, lighthouse and the smugglers' tunnels under the old fish market",
  profile:
    "Steam Deck OLED 90 Hz handheld, battery saver off, FSR quality, 800p native, ambient occlusion on",
  event: "player_interacted_with_environmental_hazard_while_mounted_on_vehicle_during_boss_phase_three_x",
  session: "session-0b7e1f0c-5a9d-4f7e-9c3b-2d8e6f4a1b0c-client-reconnect-after-host-migration-attempt-0042",
  contentId:
    "weapon_assault_rifle_mk2_extended_magazine_holographic_sight_variant_desert_camo_season_pass_0001",
  contentType: "weapon_attachment_cosmetic_variant_season_pass_exclusive_bundle_item_category_type",
  client:
    "Northern Lights Level Editor Performance Overlay Plugin for Unreal Engine 5 (internal build, QA only)",
  channel:
    "QA on-call hook for the performance strike team, northern region, weekend rotation (pager escalation)",
  rule: "Frozen Harbor District night variant: FPS under the Steam Deck handheld good mark for half the cells",
  key: "Unity build server for the nightly performance capture pipeline on the dedicated Mac mini farm #3",
};

let d: Dashboard;
let out: BrowserContext;
let outDir = "";
let callback: CallbackServer;
/** Pages reached by a POST along the setup (a key shown once, "check your email"), measured where seen. */
const seen: Array<{ name: string; width: number }> = [];
/** The long-named threshold profile's id. */
let memberId: string;
let profileId = "";

async function widthOf(page: Page, name: string): Promise<number> {
  await settled(page);
  const width = await page.evaluate<number>("document.documentElement.scrollWidth");
  await page.screenshot({ path: join(DIR, `${name.replace(/[^a-z0-9]+/gi, "-")}.png`), fullPage: true });
  return width;
}

/** Waits until the client bundle has drawn the page: no placeholder, no loading state left. */
async function settled(page: Page): Promise<void> {
  await page.waitForLoadState("load");
  // Polled with page.evaluate (Playwright's CDP evaluation): a string given to waitForFunction is eval'd
  // inside the page, which the dashboard's CSP (script-src 'self') refuses.
  await waitFor(
    () =>
      page.evaluate<boolean>(
        `!document.querySelector("[data-placeholder], .state.loading") &&
          [...document.querySelectorAll("canvas")].every((c) => !c.id || c.dataset.cells !== undefined)`,
      ),
    (drawn) => drawn,
    { timeoutMs: 30_000, message: `${page.url()} drawn` },
  );
}

beforeAll(async () => {
  await mkdir(DIR, { recursive: true });
  d = await startDashboard({ studio: LONG.studio, project: LONG.project, email: LONG.email });
  const base = `/projects/${d.projectId}`;
  await uploadMap(d, {
    mapId: LONG.mapId,
    name: LONG.mapName,
    minX: 0,
    minY: 0,
    maxX: 500,
    maxY: 500,
    width: 1600,
    height: 1600,
  });
  const profile = await d.api<{ id: string }>(`${base}/threshold-profiles`, {
    method: "POST",
    body: { name: LONG.profile, fpsGood: 60, fpsWarn: 30 },
  });
  profileId = profile.id;
  const perf = (build: string, fps: number) =>
    perfEvents({
      count: 60,
      build,
      mapId: LONG.mapId,
      platform: LONG.platform,
      at: (i) => ({ x: 12.5 + (i % 6) * 25, y: 12.5 + Math.floor(i / 10) * 25 }),
      fps: (i) => fps + (i % 30),
      player: (i) => `${LONG.session}-player-${i % 4}`,
    }).map((e) => ({ ...e, sessionId: `${LONG.session}-${e.playerId?.slice(-1)}` }));
  await d.send([
    ...perf(LONG.build, 20),
    ...perf(LONG.build2, 40),
    ...namedEvents(LONG.event, 10, { player: (i) => `p${i % 3}`, mapId: LONG.mapId }),
    ...namedEvents(`${LONG.event}_completed`, 6, { player: (i) => `p${i % 3}` }),
  ]);
  const content = await fetch(`${d.origin}/api/v1/content`, {
    method: "POST",
    headers: { "X-API-Key": d.fullKey, "X-Project-Id": d.projectId, "Content-Type": "application/json" },
    body: JSON.stringify({
      entries: [
        {
          contentType: LONG.contentType,
          contentId: LONG.contentId,
          displayName: "Assault rifle Mk II with extended magazine, holographic sight and desert camouflage",
          category: "Weapons › Attachments › Cosmetic variants › Season pass exclusive bundle items",
          description:
            "Granted by the season pass tier 87 reward track; appears in the armory preview, the loadout editor and the post-match summary with its own three-dimensional inspection model.",
          metadata: {
            damage: 42,
            magazineSizeWithExtendedMagazineAttachmentEquipped: 45,
            internalAssetPath:
              "/Game/Weapons/AssaultRifle/MkII/Variants/DesertCamo/SeasonPass/Tier87/BP_Variant",
          },
        },
      ],
    }),
  });
  expect(content.ok, await content.text()).toBe(true);
  const channel = await d.api<{ id: string }>(`${base}/channels`, {
    method: "POST",
    body: {
      name: LONG.channel.slice(0, 100),
      kind: "webhook",
      url: `http://127.0.0.1:9/${"hooks/performance/".repeat(8)}`,
    },
  });
  const maps = await d.api<Array<{ id: string; mapId: string }>>(`${base}/maps`);
  await d.api(`${base}/alerts`, {
    method: "POST",
    body: {
      name: LONG.rule,
      mapId: maps.find((m) => m.mapId === LONG.mapId)?.id,
      metric: "fps",
      thresholdLevel: "good",
      failPercentage: 50,
      evaluationDays: 1,
      cellSize: 25,
      cooldownMinutes: 60,
      thresholdProfileIds: [profile.id],
      channelIds: [channel.id],
    },
  });
  // One evaluation, so the alert history lists the rule and its worst cells.
  expect((await fetch(`${d.origin}/__scheduled?cron=${encodeURIComponent("*/5 * * * *")}`)).status).toBe(200);
  memberId = String(
    (
      await d.admin(
        "user",
        "create",
        "--tenant",
        d.tenantId,
        "--email",
        LONG.member,
        "--password",
        "member-password-long-1",
        "--role",
        "member",
      )
    ).id,
  );
  callback = await startCallbackServer();
  await d.admin(
    "client",
    "create",
    "--name",
    LONG.client.slice(0, 100),
    "--redirect-uri",
    `http://127.0.0.1:${callback.port}/${"callback/".repeat(10)}`,
    "--id",
    "fdc_long_named_editor_plugin",
  );
  outDir = await mkdtemp(join(tmpdir(), "chromium-signed-out-"));
  out = await launchChromium(outDir, { viewport: { width: WIDTH, height: 900 } });
}, 300_000);

afterAll(async () => {
  await out?.close();
  callback?.server.close();
  await d?.close();
  if (outDir) {
    await rm(outDir, { recursive: true, force: true });
  }
}, 60_000);

/** The consent page's URL for the long-named client (PKCE with a fixed challenge: never exchanged). */
function authorizeUrl(): string {
  const q = new URLSearchParams({
    response_type: "code",
    client_id: "fdc_long_named_editor_plugin",
    redirect_uri: `http://127.0.0.1:${callback.port}/${"callback/".repeat(10)}`,
    scope: "analytics:read resources:write",
    state: "width-test",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGjSstw-cM",
    code_challenge_method: "S256",
  });
  return `/oauth/authorize?${q}`;
}

/** Opens `path` in the signed-in or the signed-out browser and measures it. */
async function measure(name: string, path: string, signedIn = true): Promise<number> {
  const page = signedIn ? await d.open(path) : await out.newPage();
  if (!signedIn) {
    await page.goto(`${d.origin}${path}`);
  }
  const width = await widthOf(page, name);
  await page.close();
  return width;
}

/** A link from a mail, as a path on this origin. */
const pathOf = (link: string) => {
  const u = new URL(link);
  return `${u.pathname}${u.search}`;
};

it("no page is wider than a 1280 px window", async () => {
  const base = `/projects/${d.projectId}`;
  const { webApp } = await import("../../workers/api/web/app.js");
  const { DASHBOARD_PAGES } = await import("../../workers/api/web/dashboard.js");

  // Flows that leave pages behind: a key with a long name (shown once), a grant (connected apps), an
  // invitation, a sign-up and a password reset (their mailed links).
  const keys = await d.open(`/settings/projects/${d.projectId}/api-keys`);
  await keys.getByLabel("Name").fill(LONG.key.slice(0, 100));
  await keys.getByRole("button", { name: /Create/ }).click();
  await keys.waitForLoadState("load");
  seen.push({ name: "api keys: key created", width: await widthOf(keys, "api-keys-created") });
  await keys.close();
  const consent = await d.open(authorizeUrl());
  seen.push({ name: "oauth consent", width: await widthOf(consent, "oauth-consent") });
  await consent.getByRole("button", { name: "Allow" }).click();
  await consent.waitForURL((u) => u.port === String(callback.port));
  await consent.close();
  const members = await d.open(`/settings/studios/${d.tenantId}/members`);
  const invitee = `invited.${LONG.member}`;
  await members.getByLabel("Email").fill(invitee);
  await members.getByRole("button", { name: "Send invitation" }).click();
  await members.getByRole("cell", { name: invitee, exact: true }).waitFor();
  await members.close();
  const accept = pathOf(linkIn(await mailTo(d.service.inboxUrl, invitee, /invited/), "/invitations/accept"));
  const signUp = await out.newPage();
  await signUp.goto(`${d.origin}/sign-up`);
  await signUp.getByLabel("Email").fill(LONG.signUp);
  await signUp.getByLabel("Password").fill("sign-up-password-long-1");
  await signUp.getByLabel("Studio name").fill(LONG.studio);
  await signUp.getByRole("button", { name: "Sign up" }).click();
  await signUp.getByRole("heading", { name: "Check your email" }).waitFor();
  seen.push({ name: "sign-up: check your email", width: await widthOf(signUp, "sign-up-sent") });
  await signUp.close();
  const verify = pathOf(
    linkIn(await mailTo(d.service.inboxUrl, LONG.signUp, /Confirm your email/), "/sign-up/verify"),
  );
  const reset = await out.newPage();
  await reset.goto(`${d.origin}/password-reset`);
  await reset.getByLabel("Email").fill(LONG.member);
  await reset.getByRole("button", { name: "Send reset link" }).click();
  await reset.getByRole("heading", { name: "Check your email" }).waitFor();
  await reset.close();
  const confirm = pathOf(
    linkIn(await mailTo(d.service.inboxUrl, LONG.member, /Reset your/), "/password-reset/confirm"),
  );

  // Every GET route of the web app: a URL to open it at (and whether signed in), or null for what is
  // not a page. A route missing here fails the test, so a new page is measured from its first commit.
  const dashboard = DASHBOARD_PAGES.map((p) => ({ name: `dashboard: ${p.label}`, path: `${base}/${p.id}` }));
  const ROUTES: Record<string, Array<{ name: string; path: string; signedOut?: true }> | null> = {
    "/.well-known/oauth-authorization-server": null,
    "/favicon.svg": null,
    "/favicon.ico": null,
    "/sign-in": [{ name: "sign-in", path: "/sign-in", signedOut: true }],
    "/oauth/authorize": [{ name: "oauth consent (GET)", path: authorizeUrl() }],
    "/": [{ name: "home (projects)", path: "/" }],
    "/settings/projects/:projectId/api-keys": [
      { name: "api keys", path: `/settings/projects/${d.projectId}/api-keys` },
    ],
    "/settings/connected-apps": [{ name: "connected apps", path: "/settings/connected-apps" }],
    "/settings/studios/:tenantId/members": [
      { name: "members", path: `/settings/studios/${d.tenantId}/members` },
    ],
    "/settings/studios/:tenantId/members/:userId/remove": [
      { name: "member removal", path: `/settings/studios/${d.tenantId}/members/${memberId}/remove` },
    ],
    "/settings/studios/:tenantId/audit-log": [
      { name: "audit log", path: `/settings/studios/${d.tenantId}/audit-log` },
    ],
    "/settings/studios/:tenantId/sso": [
      { name: "single sign-on", path: `/settings/studios/${d.tenantId}/sso` },
    ],
    // The providers' redirect back: a redirect, or the sign-in page with the refusal.
    "/sso/callback": null,
    "/settings/studios/:tenantId/retention": [
      { name: "data retention", path: `/settings/studios/${d.tenantId}/retention` },
    ],
    "/settings/account": [{ name: "account", path: "/settings/account" }],
    "/sign-up": [{ name: "sign-up", path: "/sign-up", signedOut: true }],
    "/sign-up/verify": [{ name: "sign-up verify", path: verify, signedOut: true }],
    "/password-reset": [{ name: "password reset", path: "/password-reset", signedOut: true }],
    "/password-reset/confirm": [{ name: "password reset confirm", path: confirm, signedOut: true }],
    "/invitations/accept": [{ name: "invitation accept", path: accept, signedOut: true }],
    "/projects/:projectId": [{ name: "project (redirect to overview)", path: base }],
    "/projects/:projectId/:page": [
      ...dashboard,
      // The states with the most on screen: a heatmap cell's panel, a comparison, funnels and
      // insights grouped by long names.
      {
        name: "dashboard: Heatmap, cell panel open",
        path: `${base}/heatmap?map=${LONG.mapId}&profile=${profileId}&at=25,25`,
      },
      {
        name: "dashboard: Compare two builds",
        path: `${base}/compare?baseline=${LONG.build}&candidate=${LONG.build2}&map=${LONG.mapId}&at=25,25`,
      },
      { name: "dashboard: Funnels", path: `${base}/funnels?steps=${LONG.event},${LONG.event}_completed` },
      { name: "dashboard: Insights by build", path: `${base}/insights?groupBy=build_id&days=7` },
      { name: "dashboard: Insights by platform", path: `${base}/insights?groupBy=platform&days=7` },
    ],
  };
  const routes = [
    ...new Set(
      webApp()
        .routes.filter((r) => r.method === "GET" && !r.path.startsWith("/assets/"))
        .map((r) => r.path),
    ),
  ];
  const unknown = routes.filter((r) => !(r in ROUTES));
  expect(unknown, "GET routes with no URL in this test: add each page to ROUTES").toEqual([]);

  const widths = [...seen];
  for (const route of routes) {
    for (const p of ROUTES[route] ?? []) {
      widths.push({ name: p.name, width: await measure(p.name, p.path, !p.signedOut) });
    }
  }
  // The API reference (Swagger UI, served under /api by the API app, not the web app).
  widths.push({ name: "api reference", width: await measure("api reference", "/api/docs", false) });
  console.log(widths.map((w) => `${w.width}\t${w.name}`).join("\n"));
  expect(widths.filter((w) => w.width > WIDTH).map((w) => `${w.name}: ${w.width} px`)).toEqual([]);
  expect(widths.length).toBeGreaterThan(DASHBOARD_PAGES.length + 12);
}, 600_000);
