import { beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../workers/shared/credentials/secrets.js";
import { event } from "../support/batches.js";
import { type Erasure, eraseAndWait } from "../support/erasures.js";
import { ingestAndWait, ingestKeyFor, storedCount } from "../support/events.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import type { OkBody } from "../support/schema.js";

type Ev = ReturnType<typeof event>;
let t: Tenant;
let events: Ev[];
const SIBLING_EVENTS = 4;

const ev = (i: number, playerId: string, sessionId: string, secondsAgo = 120) =>
  event(i, { playerId, sessionId, eventName: `e${i % 3}` }, secondsAgo);

beforeAll(async () => {
  t = await seedTenant("enterprise", "Erasure Studio");
  events = [
    // alice, identified, in two sessions; her pre-sign-in events in s-a1 have no player_id.
    ...[0, 1, 2].map((i) => ev(i, "alice", "s-a1")),
    ...[3, 4].map((i) => ev(i, "", "s-a1")),
    ...[5, 6].map((i) => ev(i, "alice", "s-a2", 3 * 86_400)),
    // bob and an anonymous player (no player_id at all: the session is the player).
    ...[7, 8, 9].map((i) => ev(i, "bob", "s-b1")),
    ...[10, 11].map((i) => ev(i, "", "anon-1")),
    // carol, whose session id happens to be "alice": carol's events, not alice's.
    ...[12, 13].map((i) => ev(i, "carol", "alice")),
  ];
  await ingestAndWait(t.projectId, t.keys.ingest.key, events);
  const siblingEvents = Array.from({ length: SIBLING_EVENTS }, (_, i) => ev(i, "alice", "s-a1"));
  await ingestAndWait(t.siblingProjectId, await ingestKeyFor(t.siblingProjectId), siblingEvents);
});

/** The UTC date of an event's timestamp. */
const dayOf = (e: Ev) => new Date(Number(e.timestampUs) / 1000).toISOString().slice(0, 10);

function erase(playerId: unknown, projectId = t.projectId, key = t.keys.full.key) {
  return api(
    `/v1/projects/${projectId}/erasures`,
    { key },
    {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ playerId }),
    },
  );
}

async function playersInStore(): Promise<Map<string, number>> {
  const res = await api(
    "/v1/query",
    { key: t.keys.full.key },
    {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        project_id: t.projectId,
        sql: "SELECT concat(player_id, '|', session_id) AS who, count() AS n FROM events GROUP BY who",
      }),
    },
  );
  expect(res.status).toBe(200);
  const rows = ((await res.json()) as OkBody<"/v1/query", "post">).data.rows as Array<{
    who: string;
    n: number;
  }>;
  return new Map(rows.map((r) => [r.who, r.n]));
}

/** The same tally computed from what was sent. */
function expectedPlayers(kept: Ev[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const e of kept) {
    const who = `${e.playerId}|${e.sessionId}`;
    m.set(who, (m.get(who) ?? 0) + 1);
  }
  return m;
}

describe("player erasure", () => {
  it("refuses a bad body and changes nothing", async () => {
    for (const bad of ["", 42, "x".repeat(129)]) {
      const res = await erase(bad);
      expect(res.status).toBe(400);
      expect((await problemOf(res)).detail).toContain("playerId");
    }
    expect(await storedCount(t.projectId)).toBe(events.length);
  });

  it("removes the player's events, and only them; audit entry says who, when and how many", async () => {
    const isAlice = (e: Ev) => e.playerId === "alice" || (e.playerId === "" && e.sessionId === "s-a1");
    const expectedRemoved = events.filter(isAlice).length;
    expect(expectedRemoved).toBe(7);

    // The preview (the dashboard's confirmation) counts what will go, and changes nothing.
    const previewed = await api(
      `/v1/projects/${t.projectId}/erasures/preview`,
      { key: t.keys.full.key },
      {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ playerId: "alice" }),
      },
    );
    expect(previewed.status).toBe(200);
    const plan = (
      (await previewed.json()) as {
        data: { tables: Array<{ table: string; rows: number }>; rebuilt: string[]; days: number };
      }
    ).data;
    expect(plan.tables[0]).toEqual({ table: "telemetry.events", rows: expectedRemoved });
    expect(plan.days).toBe(new Set(events.filter(isAlice).map((e) => dayOf(e))).size);
    expect(await storedCount(t.projectId)).toBe(events.length);

    const created: Erasure = await eraseAndWait(t.projectId, t.keys.full.key, "alice");
    // Each deleting step removed what the preview counted; the rest are the rollups it named.
    expect(
      created.steps.slice(0, plan.tables.length).map((s) => ({ table: s.table, rows: s.rowsRemoved })),
    ).toEqual(plan.tables);
    expect(created.steps.slice(plan.tables.length).map((s) => s.table)).toEqual(plan.rebuilt);
    expect(created.rebuiltTables).toEqual(plan.rebuilt);
    expect(created).toMatchObject({
      projectId: t.projectId,
      playerIdSha256: await sha256Hex("alice"),
      requestedBy: { keyId: t.keys.full.id },
      status: "completed",
      rowsRemoved: expectedRemoved,
    });
    // The rollups first (found through the events), then the events themselves.
    expect(created.steps.map((s) => s.table)).toEqual([
      "telemetry.events",
      "telemetry.cell_samples",
      "telemetry.funnel_events",
      "telemetry.session_devices",
      "telemetry.heatmap_cells",
      "telemetry.alert_cells",
      "telemetry.daily_events",
      "telemetry.build_days",
      "telemetry.compare_rollup",
      "telemetry.session_values",
      "telemetry.session_cells",
      "telemetry.actor_buckets",
      "telemetry.player_dims",
      "telemetry.batch_totals",
    ]);
    expect(created.steps[0]?.rowsRemoved).toBe(expectedRemoved);
    // alice's cell samples, and the day bitmaps of her days, replaced by rebuilt ones.
    expect(created.steps[1]?.rowsRemoved).toBeGreaterThan(0);
    expect(
      created.steps.find((s) => s.table === "telemetry.actor_buckets")?.rowsRemoved,
    ).toBeGreaterThanOrEqual(1);
    expect(Date.parse(created.completedAt as string)).toBeGreaterThanOrEqual(Date.parse(created.createdAt));

    expect(await playersInStore()).toEqual(expectedPlayers(events.filter((e) => !isAlice(e))));
    // Another project's "alice" is another person's data: untouched.
    expect(await storedCount(t.siblingProjectId)).toBe(SIBLING_EVENTS);

    const status = await api(`/v1/projects/${t.projectId}/status?fresh=1`, { key: t.keys.read.key });
    const kpis = ((await status.json()) as OkBody<"/v1/projects/{id}/status">).data.kpis;
    expect(kpis.totalEvents).toBe(events.length - expectedRemoved);
    // bob, anon-1 and carol remain in the last 24 hours.
    expect(kpis.players24h).toBe(3);

    const read = await api(`/v1/projects/${t.projectId}/erasures/${created.id}`, { key: t.keys.full.key });
    expect(read.status).toBe(200);
    expect(((await read.json()) as OkBody<"/v1/projects/{id}/erasures/{erasureId}">).data).toEqual(created);

    // Erasing again finds nothing and says so.
    const again: Erasure = await eraseAndWait(t.projectId, t.keys.full.key, "alice");
    expect(again.rowsRemoved).toBe(0);
    expect(again.id).not.toBe(created.id);
    // The history lists both, newest first.
    const listed = await api(`/v1/projects/${t.projectId}/erasures`, { key: t.keys.full.key });
    expect(listed.status).toBe(200);
    const history = ((await listed.json()) as OkBody<"/v1/projects/{id}/erasures">).data;
    expect(history.slice(0, 2)).toEqual([again, created]);
  });

  it("erases an anonymous player by session id", async () => {
    const erased = await eraseAndWait(t.projectId, t.keys.full.key, "anon-1");
    expect(erased).toMatchObject({ status: "completed", rowsRemoved: 2 });
    expect(await storedCount(t.projectId, "session_id = 'anon-1'")).toBe(0);
    expect(await storedCount(t.projectId, "player_id = 'carol'")).toBe(2);
  });

  it("another project's erasure is not readable (404), nor another tenant's project", async () => {
    const other = await seedTenant("pro", "Erasure Neighbour");
    expect((await erase("bob", other.projectId)).status).toBe(404);
    const mine = await eraseAndWait(t.projectId, t.keys.full.key, "nobody");
    expect(
      (await api(`/v1/projects/${t.projectId}/erasures/${mine.id}`, { key: other.keys.full.key })).status,
    ).toBe(404);
    expect(
      (await api(`/v1/projects/${t.projectId}/erasures/${crypto.randomUUID()}`, { key: t.keys.full.key }))
        .status,
    ).toBe(404);
    expect(await storedCount(t.projectId, "player_id = 'bob'")).toBe(3);
  });
});
