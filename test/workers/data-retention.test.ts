import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditLog, tenants } from "../../schema/pg/schema.js";
import {
  deleteExpired,
  PURGE_PROJECTS_PER_MESSAGE,
  planPurge,
  projectHorizons,
} from "../../workers/api/data-retention/purge.js";
import { RETAINED_TABLES } from "../../workers/api/data-retention/tables.js";
import { PLANS } from "../../workers/shared/plans.js";
import type { GenEvent } from "../support/analytics-dataset.js";
import { type ClockedTenant, clocked, getData, ingestAll } from "../support/analytics-ingest.js";
import { Browser, seedUser } from "../support/browser.js";
import { testClickHouse } from "../support/events.js";
import { seedTenant, withDb } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import type { Ok, OkBody } from "../support/schema.js";
import { waitFor } from "../support/wait.js";

// Retention (docs/architecture.md, "Data retention"): a studio's events of 10 days ago and of yesterday, read
// through every read path on the plan's retention (both counted), then with the studio's retention
// shortened to 5 days (yesterday's only), then the purge deleting the expired rows from every table.

const DAY_MS = 86_400_000;
const anchor = Date.now();
const today = Math.floor(anchor / DAY_MS) * DAY_MS;
const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const OLD = today - 10 * DAY_MS + 12 * 3_600_000;
const NEW = today - DAY_MS + 12 * 3_600_000;
const MAP = "retention-map";

/** Per group: a funnel (match_start, match_end) and four positioned samples, two of each build. */
function group(label: string, at: number): GenEvent[] {
  const base = { sessionId: `${label}-s`, playerId: `${label}-p`, mapId: MAP, platform: "pc", buildId: "" };
  const us = (ms: number) => ms * 1000;
  return [
    { ...base, tsUs: us(at), eventName: "match_start" },
    { ...base, tsUs: us(at + 60_000), eventName: "match_end" },
    ...[0, 1, 2, 3].map(
      (i): GenEvent => ({
        ...base,
        tsUs: us(at + 1_000 * (i + 1)),
        eventName: "frame_sample",
        buildId: i % 2 === 0 ? "b1" : "b2",
        pos: { x: 10, y: 10 },
        perf: { fps: 60, frameTimeMs: 16 + i },
      }),
    ),
  ];
}

let t: ClockedTenant;

type Dashboard = Ok<"/v1/projects/{id}/dashboard">;

/** The rows of a user's SQL through POST /v1/query at `now`. */
async function userQuery(now: number, sql: string): Promise<Array<Record<string, string | number>>> {
  const res = await api(
    "/v1/query",
    { key: t.keys.full.key, now },
    {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ project_id: t.projectId, sql }),
    },
  );
  expect(res.status).toBe(200);
  return ((await res.json()) as OkBody<"/v1/query", "post">).data.rows as Array<
    Record<string, string | number>
  >;
}

/** Every read path's count of the studio's events (or of what derives from them), at `now`. */
async function reads(now: number) {
  const at = { ...t, now };
  const sum = (xs: Array<{ [k: string]: unknown }>, k: string) => xs.reduce((s, x) => s + Number(x[k]), 0);
  const dashboard = await getData<Dashboard>(at, "/dashboard?days=30");
  const cohorts = await getData<Ok<"/v1/projects/{id}/retention">>(at, "/retention?days=30");
  const funnel = await getData<Ok<"/v1/projects/{id}/funnels">>(
    at,
    "/funnels?steps=match_start,match_end&days=30",
  );
  const insights = await getData<Ok<"/v1/projects/{id}/insights">>(
    at,
    "/insights?metric=count&groupBy=day&days=30",
  );
  const heatmap = await getData<Ok<"/v1/projects/{id}/heatmap">>(
    at,
    `/heatmap?mapId=${MAP}&cellSize=25&days=30`,
  );
  const fine = await getData<Ok<"/v1/projects/{id}/heatmap">>(at, `/heatmap?mapId=${MAP}&cellSize=5&days=30`);
  const cell = await getData<Ok<"/v1/projects/{id}/heatmap/cell">>(
    at,
    `/heatmap/cell?mapId=${MAP}&x=0&y=0&cellSize=25&days=30`,
  );
  const builds = await getData<Ok<"/v1/projects/{id}/builds">>(at, "/builds?days=30&fresh=1");
  const compare = await getData<Ok<"/v1/projects/{id}/builds/compare">>(
    at,
    "/builds/compare?baseline=b1&candidate=b2&days=30&fresh=1",
  );
  const regressions = await getData<Ok<"/v1/projects/{id}/builds/regressions">>(
    at,
    "/builds/regressions?candidate=b2&baseline=b1&days=30&minSessions=2",
  );
  const status = await getData<Ok<"/v1/projects/{id}/status">>(at, "/status?fresh=1");
  const [row] = await userQuery(
    now,
    "SELECT count() AS n, toString(min(toDate(timestamp))) AS oldest FROM events",
  );
  return {
    dashboard: dashboard.kpis.events,
    mau: dashboard.kpis.mau,
    sessions: dashboard.kpis.sessions,
    oldDay: dashboard.dailyActiveUsers.find((d) => d.date === date(OLD))?.count,
    cohorts: sum(cohorts, "cohort_size"),
    funnel: funnel[0]?.count,
    insights: insights.total,
    heatmap: sum(heatmap, "event_count"),
    heatmapFine: sum(fine, "event_count"),
    cell: cell.samples,
    builds: sum(builds, "event_count"),
    compare: compare.baseline.event_count,
    regressions: regressions.overall.baseline.sessions,
    status: status.kpis.totalEvents,
    query: Number(row?.n),
    oldest: row?.oldest,
  };
}

/** The rows an export of the last 30 days writes (the consumer runs at the real clock: `anchor`'s). */
async function exportRows(): Promise<number> {
  const res = await api(
    `/v1/projects/${t.projectId}/exports`,
    { key: t.keys.full.key },
    {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ days: 30, format: "ndjson" }),
    },
  );
  expect(res.status).toBe(202);
  const { id } = ((await res.json()) as OkBody<"/v1/projects/{id}/exports", "post">).data;
  const done = await waitFor(
    async () =>
      (
        (await (await api(`/v1/projects/${t.projectId}/exports/${id}`, { key: t.keys.full.key })).json()) as {
          data: { status: string; rowCount: number | null; error: string | null };
        }
      ).data,
    (e) => e.status === "completed" || e.status === "failed",
    { timeoutMs: 30_000, intervalMs: 250, message: `export ${id}` },
  );
  expect(done.status, done.error ?? "").toBe("completed");
  return done.rowCount ?? -1;
}

function setRetention(retentionDays: number | null, auth: { key?: string; token?: string } = {}) {
  return api(
    "/v1/data-retention",
    { key: t.keys.full.key, ...auth, now: anchor },
    {
      method: "PATCH",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ retentionDays }),
    },
  );
}

/** A project's rows dated before `horizon` in every retained table. */
async function expiredRows(projectId: string, horizon: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of RETAINED_TABLES) {
    const rs = await testClickHouse().query({
      query: `SELECT count() AS n FROM ${table.table} WHERE project_id = {p:UUID} AND ${table.day} < {h:Date}`,
      query_params: { p: projectId, h: horizon },
      format: "JSONEachRow",
    });
    const [r] = await rs.json<{ n: string | number }>();
    out[table.table] = Number(r?.n ?? 0);
  }
  return out;
}

beforeAll(async () => {
  t = clocked(await seedTenant("pro", "Retention Studio"), anchor);
  await ingestAll(t, [...group("old", OLD), ...group("new", NEW)]);
}, 120_000);

describe("retention", () => {
  it("every plan keeps at least 90 days (the spec's longest window)", () => {
    for (const plan of Object.values(PLANS)) {
      expect(plan.retentionDays).toBeGreaterThanOrEqual(90);
    }
  });

  it("every table of telemetry rows is one the purge reaches", async () => {
    const rs = await testClickHouse().query({
      query: `SELECT concat(database, '.', name) AS t FROM system.tables
        WHERE database = 'telemetry' AND engine LIKE '%MergeTree' AND name != 'schema_migrations'
          AND NOT startsWith(name, 'test_')`,
      format: "JSONEachRow",
    });
    const tables = (await rs.json<{ t: string }>()).map((r) => r.t).sort();
    expect(tables).toEqual(RETAINED_TABLES.map((r) => r.table).sort());
  });

  it("actor_buckets keeps its minutes 2 days and its hours 32 days, and its days to the backstop", async () => {
    // One table holds the day, hour and minute bitmaps (0027_actor_buckets.sql) with a row TTL per grain,
    // applied when parts merge: an event 40, 33, 31, 3 and 1 days ago each makes a row of every grain
    // (through the view, as ingest does); once merged (chdb merges such parts by itself soon after the
    // insert; OPTIMIZE makes it happen), the hours older than 32 days and the minutes older than 2 days are
    // gone, and every day is still there.
    const ch = testClickHouse();
    const project = crypto.randomUUID();
    const agesDays = [40, 33, 31, 3, 1];
    await ch.command({
      query: `INSERT INTO telemetry.events (project_id, batch_id, event_index, timestamp, event_name, session_id,
          player_id, player_idx, session_idx)
        SELECT {p:UUID}, generateUUIDv4(), 0, now64(6) - toIntervalDay(age), 'ttl_probe', 's', 'p', 1, 1
        FROM (SELECT arrayJoin({ages:Array(UInt16)}) AS age)`,
      query_params: { p: project, ages: agesDays },
    });
    const buckets = async () => {
      const rs = await ch.query({
        query: `SELECT toString(grain) AS grain, toUInt32(uniqExact(bucket)) AS n,
            toUInt32(dateDiff('day', min(bucket), now())) AS oldest
          FROM telemetry.actor_buckets WHERE project_id = {p:UUID} GROUP BY grain ORDER BY grain`,
        query_params: { p: project },
        format: "JSONEachRow",
      });
      return rs.json<{ grain: string; n: number; oldest: number }>();
    };
    const partitions = await (
      await ch.query({
        query: "SELECT DISTINCT toYYYYMM(day) AS p FROM telemetry.actor_buckets WHERE project_id = {p:UUID}",
        query_params: { p: project },
        format: "JSONEachRow",
      })
    ).json<{ p: number }>();
    const kept = await waitFor(
      async () => {
        for (const { p } of partitions) {
          await ch.command({ query: `OPTIMIZE TABLE telemetry.actor_buckets PARTITION ${Number(p)} FINAL` });
        }
        return buckets();
      },
      (rows) =>
        rows.find((r) => r.grain === "minute")?.n === 1 && rows.find((r) => r.grain === "hour")?.n === 3,
      { message: (last) => `expired hours and minutes still stored: ${JSON.stringify(last)}` },
    );
    expect(kept).toEqual([
      { grain: "day", n: 5, oldest: 40 },
      { grain: "hour", n: 3, oldest: 31 },
      { grain: "minute", n: 1, oldest: 1 },
    ]);
  });

  it("one purge message's worth of projects (PURGE_PROJECTS_PER_MESSAGE) is counted and deleted in one go", async () => {
    // The message's projects and horizons travel as the statements' query parameters: a full message must
    // not outgrow what the ClickHouse endpoint takes in a request (the suite's own cron purges every
    // project the suite made, a few hundred, in one message).
    const horizons = Array.from({ length: PURGE_PROJECTS_PER_MESSAGE }, () => ({
      id: crypto.randomUUID(),
      horizon: "2026-01-01",
    }));
    const deleted = await deleteExpired(testClickHouse(), horizons);
    expect(Object.keys(deleted).sort()).toEqual(RETAINED_TABLES.map((r) => r.table).sort());
    expect(Object.values(deleted).every((n) => n === 0)).toBe(true);
  });

  it("a shortened retention leaves every read path at once; the purge then deletes the rows; the clock moves the horizon", async () => {
    // On the plan's 180 days: both groups everywhere (the test could fail: this is what changes).
    const full = await reads(anchor);
    expect(full).toEqual({
      dashboard: 12,
      mau: 2,
      sessions: 2,
      oldDay: 1,
      cohorts: 2,
      funnel: 2,
      insights: 12,
      heatmap: 8,
      heatmapFine: 8,
      cell: 8,
      builds: 8,
      compare: 4,
      regressions: 2,
      status: 12,
      query: 12,
      oldest: date(OLD),
    });
    expect(await exportRows()).toBe(12);
    const planned = await api("/v1/data-retention", { key: t.keys.read.key, now: anchor });
    expect(((await planned.json()) as OkBody<"/v1/data-retention">).data).toEqual({
      days: 180,
      planDays: 180,
      chosenDays: null,
      retainedFrom: date(today - 179 * DAY_MS),
    });

    // Five days: the oldest day kept is four days ago; the events of ten days ago are expired.
    const res = await setRetention(5);
    expect(res.status).toBe(200);
    const horizon = date(today - 4 * DAY_MS);
    expect(((await res.json()) as OkBody<"/v1/data-retention", "patch">).data).toEqual({
      days: 5,
      planDays: 180,
      chosenDays: 5,
      retainedFrom: horizon,
    });
    expect(await reads(anchor)).toEqual({
      dashboard: 6,
      mau: 1,
      sessions: 1,
      oldDay: 0,
      cohorts: 1,
      funnel: 1,
      insights: 6,
      heatmap: 4,
      heatmapFine: 4,
      cell: 4,
      builds: 4,
      compare: 2,
      regressions: 1,
      status: 6,
      query: 6,
      oldest: date(NEW),
    });
    expect(await exportRows()).toBe(6);
    // User SQL cannot reach around the horizon: the expired rows are not in `events` at all.
    const [hidden] = await userQuery(
      anchor,
      "SELECT count() AS n FROM events WHERE timestamp < now() - INTERVAL 5 DAY",
    );
    expect(Number(hidden?.n)).toBe(0);

    // The rows are still stored until the purge: reads left them out, not storage.
    const before = await expiredRows(t.projectId, horizon);
    expect(before["telemetry.events"]).toBe(6);
    expect(before["telemetry.actor_buckets"]).toBeGreaterThan(0);
    // The deletion itself (the daily claim is the cron's, which other test files' cron runs share: the
    // once-a-day plan is checked below on a day of its own).
    const deleted = await deleteExpired(testClickHouse(), await withDb((db) => projectHorizons(db, anchor)));
    expect(deleted["telemetry.events"]).toBeGreaterThanOrEqual(6);
    expect(Object.values(await expiredRows(t.projectId, horizon)).every((n) => n === 0)).toBe(true);
    // The kept rows are untouched: yesterday's six events, and the sibling project's rows.
    expect((await reads(anchor)).status).toBe(6);

    // Days later, with no change: the horizon moves with the clock. Three days on, yesterday's events
    // are on the oldest day kept; four days on, they have expired too.
    expect((await reads(anchor + 3 * DAY_MS)).status).toBe(6);
    expect((await reads(anchor + 4 * DAY_MS)).query).toBe(0);

    // The cron's way (scheduled() → planPurge): four days on, that day's purge is planned from Postgres
    // onto the jobs queue, in bounded messages, and its consumer deletes yesterday's events too.
    const later = anchor + 4 * DAY_MS;
    expect((await expiredRows(t.projectId, date(today)))["telemetry.events"]).toBe(6);
    const queued = await withDb((db) => planPurge(env, db, new Date(later)));
    expect(queued?.day).toBe(date(later));
    expect(queued?.projects).toBeGreaterThanOrEqual(1);
    expect(queued?.messages).toBe(Math.ceil((queued?.projects ?? 0) / PURGE_PROJECTS_PER_MESSAGE));
    await waitFor(
      () => expiredRows(t.projectId, date(today)),
      (rows) => Object.values(rows).every((n) => n === 0),
      { timeoutMs: 60_000, message: "the queued purge deleted the expired rows" },
    );
    // The day is queued once.
    expect(await withDb((db) => planPurge(env, db, new Date(later)))).toBeNull();
  }, 180_000);

  it("refuses a retention above the plan's or below a day, naming the field, and changes nothing", async () => {
    for (const days of [181, 0, 2.5]) {
      const res = await setRetention(days);
      expect(res.status).toBe(400);
      const problem = await problemOf(res);
      expect(String(problem.detail)).toMatch(/^json\.retentionDays: /);
    }
    const stored = await withDb(async (db) => {
      const [row] = await db
        .select({ d: tenants.retentionDays })
        .from(tenants)
        .where(eq(tenants.id, t.tenantId));
      return row?.d;
    });
    expect(stored).toBe(5);
    // An OAuth token never holds data:admin.
    expect((await setRetention(30, { key: undefined, token: t.token })).status).toBe(403);
  });

  it("records each change in the audit log, and null goes back to the plan's", async () => {
    const res = await setRetention(null);
    expect(res.status).toBe(200);
    expect(((await res.json()) as OkBody<"/v1/data-retention", "patch">).data).toMatchObject({
      days: 180,
      chosenDays: null,
    });
    const entries = await withDb((db) =>
      db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.tenantId, t.tenantId), eq(auditLog.action, "studio.retention_changed")))
        .orderBy(auditLog.at),
    );
    // Both at the same request clock (X-Test-Now): compared as a set.
    expect(entries).toHaveLength(2);
    expect(entries.map((e) => [e.outcome, e.detail])).toEqual(
      expect.arrayContaining([
        ["success", { from: 180, to: 5, chosen: 5 }],
        ["success", { from: 5, to: 180, chosen: null }],
      ]),
    );
    expect(entries[0]?.actorType).toBe("api_key");
  });

  it("the settings page: members read it, owners change it", async () => {
    const owner = await seedUser(t.tenantId, "owner");
    const member = await seedUser(t.tenantId, "member");
    const path = `/settings/studios/${t.tenantId}/retention`;
    const b = new Browser();
    expect((await b.signIn(owner.email, owner.password)).status).toBe(303);
    const page = await (await b.get(path)).text();
    expect(page).toContain("180 days");
    expect((await b.submit(path, { retentionDays: "500" })).status).toBe(400);
    const saved = await b.submit(path, { retentionDays: "7" });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe(`${path}?done=saved`);
    const after = await (await b.get(`${path}?done=saved`)).text();
    expect(after).toContain("Retention saved.");
    expect(after).toContain("7 days");
    const m = new Browser();
    expect((await m.signIn(member.email, member.password)).status).toBe(303);
    const read = await (await m.get(path)).text();
    expect(read).toContain("7 days");
    expect(read).not.toContain('name="retentionDays"');
    expect((await m.submit("/", { retentionDays: "3" }, path)).status).toBe(403);
    const status = await getData<Ok<"/v1/projects/{id}/status">>(t, "/status");
    expect(status.retention).toMatchObject({ days: 7, chosenDays: 7 });
  });
});
