import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { backfillNumbersPage } from "../../workers/api/analytics/numbers-backfill.js";
import { expireNumbers } from "../../workers/api/data-retention/purge.js";
import { insertRows } from "../../workers/ingest/consumer/events.js";
import { appendRows, RowSink } from "../../workers/ingest/consumer/wire-rows.js";
import { dispatchIngestQueue } from "../../workers/ingest/queues.js";
import type { ActorKind } from "../../workers/shared/actors.js";
import { CH_EVENTS } from "../../workers/shared/clickhouse.js";
import { configOf } from "../../workers/shared/config.js";
import { sealEnvelope } from "../../workers/shared/envelope.js";
import { batch, type EventInit, event, nowUs } from "../support/batches.js";
import { eraseAndWait } from "../support/erasures.js";
import { ingestAndWait, testClickHouse } from "../support/events.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import { TEST_OPERATOR_SECRET } from "../support/operator.js";
import { waitFor } from "../support/wait.js";

// Dense numbers at ingest (workers/shared/actors.ts, docs/ingest.md "Dense numbers"): every player and
// session of a project gets a UInt32 in the consumer's delivery, from the project's BatchClaims object,
// written on every row as player_idx and session_idx.

const DAY_US = 86_400_000_000n;

/** An event of `player` ('' : anonymous) in `session`, `i` µs after `baseUs`. */
function ev(session: string, player: string, i: number, baseUs = nowUs() - 3_600_000_000n): EventInit {
  return event(i, { sessionId: session, playerId: player, timestampUs: baseUs + BigInt(i) });
}

let messageSeq = 0;

function message(
  tenant: Pick<Tenant, "projectId" | "tenantId">,
  key: string,
  events: EventInit[],
  attempts = 1,
) {
  const bytes = sealEnvelope(
    {
      v: 1,
      projectId: tenant.projectId,
      tenantId: tenant.tenantId,
      batchKey: key,
      receivedAt: Date.now(),
      encoding: "identity",
      eventCount: events.length,
    },
    batch(events),
  );
  return {
    id: `${key}-${++messageSeq}`,
    timestamp: new Date(),
    attempts,
    body: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  };
}

/** One delivery of the events queue, handed to the consumer in-process. */
async function deliver(messages: ReturnType<typeof message>[], workerEnv: Env = env) {
  const b = createMessageBatch("telemetry-events", messages);
  const ctx = createExecutionContext();
  await dispatchIngestQueue(b, workerEnv);
  return (await getQueueResult(b, ctx)) as unknown as {
    explicitAcks: string[];
    retryMessages: Array<{ msgId: string }>;
  };
}

type Row = {
  batch_id: string;
  event_index: number;
  player: string;
  session_id: string;
  player_idx: number;
  session_idx: number;
};

async function rows(projectId: string): Promise<Row[]> {
  const rs = await testClickHouse().query({
    query: `SELECT batch_id, event_index, player, session_id, player_idx, session_idx FROM ${CH_EVENTS}
            WHERE project_id = {p:UUID} ORDER BY timestamp, batch_id, event_index`,
    query_params: { p: projectId },
    format: "JSONEachRow",
  });
  return rs.json<Row>();
}

/** Each id's number as the rows carry it; fails if one id carries two numbers. */
function numbersOfRows(rs: Row[], kind: ActorKind): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rs) {
    const id = kind === "player" ? r.player : r.session_id;
    const idx = kind === "player" ? r.player_idx : r.session_idx;
    expect(out[id] ?? idx, `${kind} ${id}`).toBe(idx);
    out[id] = idx;
  }
  return out;
}

const claims = (projectId: string) => env.BATCH_CLAIMS.get(env.BATCH_CLAIMS.idFromName(projectId));

/** The funnel events' (player hash, number) pairs of a project, those of its events, and its unnumbered rows. */
async function funnelNumbers(projectId: string) {
  const rs = await testClickHouse().query({
    query: `SELECT
        (SELECT countIf(player_idx = 0) FROM telemetry.funnel_events WHERE project_id = {p:UUID}) AS unnumbered,
        (SELECT arraySort(groupUniqArray((toString(player_hash), player_idx))) FROM telemetry.funnel_events
          WHERE project_id = {p:UUID}) AS pairs,
        (SELECT arraySort(groupUniqArray((toString(cityHash64(player)), player_idx))) FROM telemetry.events
          WHERE project_id = {p:UUID}) AS fromEvents`,
    query_params: { p: projectId },
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ unnumbered: number | string; pairs: unknown[]; fromEvents: unknown[] }>();
  return { unnumbered: Number(row?.unnumbered), pairs: row?.pairs ?? [], fromEvents: row?.fromEvents ?? [] };
}

describe("dense player and session numbers", () => {
  it("numbers a delivery's players and sessions 1, 2, 3… in first-seen order, on every row", async () => {
    const t = await seedTenant("pro", "Numbers Studio");
    const a = [
      ev("s1", "alice", 0),
      ev("s1", "alice", 1),
      ev("s2", "", 2),
      ev("s3", "bob", 3),
      ev("s1", "alice", 4),
    ];
    const b = [ev("s4", "carol", 5), ev("s2", "", 6), ev("s3", "bob", 7)];
    const done = await deliver([message(t, "n-a", a), message(t, "n-b", b)]);
    expect(done.explicitAcks).toHaveLength(2);

    const stored = await rows(t.projectId);
    expect(stored).toHaveLength(8);
    // An anonymous event's player is its session.
    expect(numbersOfRows(stored, "player")).toEqual({ alice: 1, s2: 2, bob: 3, carol: 4 });
    expect(numbersOfRows(stored, "session")).toEqual({ s1: 1, s2: 2, s3: 3, s4: 4 });
    expect(await claims(t.projectId).numbersOf("player", ["alice", "s2", "bob", "carol", "dave"])).toEqual([
      1,
      2,
      3,
      4,
      null,
    ]);

    // Later batches, and a redelivery of the first inside another delivery: the same numbers for the
    // same ids, the next free ones for new ids, nothing stored twice.
    const c = [ev("s5", "alice", 8), ev("s6", "dave", 9), ev("s4", "carol", 10)];
    const again = await deliver([message(t, "n-a", a, 2), message(t, "n-c", c)]);
    expect(again.explicitAcks).toHaveLength(2);
    const after = await rows(t.projectId);
    expect(after).toHaveLength(11);
    expect(numbersOfRows(after, "player")).toEqual({ alice: 1, s2: 2, bob: 3, carol: 4, dave: 5 });
    expect(numbersOfRows(after, "session")).toEqual({ s1: 1, s2: 2, s3: 3, s4: 4, s5: 5, s6: 6 });
  });

  it("keeps a delivery's numbers when ClickHouse failed it: the retry stores the same ones, no gap", async () => {
    const t = await seedTenant("pro", "Numbers Outage Studio");
    const down = { ...env, CLICKHOUSE_URL: "http://127.0.0.1:9" } as Env;
    const d = [ev("s1", "erin", 0), ev("s2", "", 1)];
    const failed = await deliver([message(t, "o-d", d)], down);
    expect(failed.explicitAcks).toEqual([]);
    expect(failed.retryMessages).toHaveLength(1);
    expect(await rows(t.projectId)).toEqual([]);

    const retried = await deliver([message(t, "o-d", d, 2), message(t, "o-e", [ev("s3", "frank", 2)])]);
    expect(retried.explicitAcks).toHaveLength(2);
    const stored = await rows(t.projectId);
    expect(numbersOfRows(stored, "player")).toEqual({ erin: 1, s2: 2, frank: 3 });
    expect(numbersOfRows(stored, "session")).toEqual({ s1: 1, s2: 2, s3: 3 });
  });

  it("retries the delivery, claims given back, when the object cannot number: nothing is stored unnumbered", async () => {
    const t = await seedTenant("pro", "Numbers Object Down Studio");
    // The claims answer; numbering fails (the object restarting between the two calls, say).
    const failing = {
      idFromName: (name: string) => env.BATCH_CLAIMS.idFromName(name),
      get: (id: DurableObjectId) => {
        const real = env.BATCH_CLAIMS.get(id);
        return {
          // Arrows, not bind: a stub's method is itself a stub, whose `bind` would be a remote call.
          claim: (keys: string[], holder: string, leaseMs: number) => real.claim(keys, holder, leaseMs),
          release: (keys: string[], holder: string) => real.release(keys, holder),
          number: () => Promise.reject(new Error("object unavailable")),
        };
      },
    };
    const down = { ...env, BATCH_CLAIMS: failing } as unknown as Env;
    const events = [ev("d-s1", "dora", 0), ev("d-s2", "", 1)];
    const failed = await deliver([message(t, "down-1", events)], down);
    expect(failed.explicitAcks).toEqual([]);
    expect(failed.retryMessages).toHaveLength(1);
    expect(await rows(t.projectId)).toEqual([]);
    // The claim went back at once: the retry takes it, numbers and stores.
    const retried = await deliver([message(t, "down-1", events, 2)]);
    expect(retried.explicitAcks).toHaveLength(1);
    expect(numbersOfRows(await rows(t.projectId), "player")).toEqual({ dora: 1, "d-s2": 2 });
  });

  it("numbers a delivery of several INSERT slices in first-seen order, each id once, with its latest day", async () => {
    const t = await seedTenant("pro", "Numbers Slices Studio");
    const now = nowUs();
    const today = now - 7_200_000_000n;
    const regular = (m: number, i: number) => ev(`sl-s${i % 100}`, `sl-p${i % 50}`, m * 10_000 + i, today);
    // Four messages of 10,000 events: the first three make one INSERT slice (25,000 rows or more), the
    // fourth another. "early" plays first, yesterday, in the first slice and again today in the second;
    // "late" is first seen in the second.
    const messages = [0, 1, 2, 3].map((m) =>
      message(
        t,
        `slices-${m}`,
        Array.from({ length: 10_000 }, (_, i) => {
          if (m === 0 && i === 0) {
            return ev("sl-first", "early", 0, today - DAY_US);
          }
          if (m === 3 && i >= 9_990) {
            const player = i % 2 ? "early" : "late";
            return ev(`sl-last-${player}`, player, 40_000 + i, today);
          }
          return regular(m, i);
        }),
      ),
    );
    const done = await deliver(messages);
    expect(done.explicitAcks).toHaveLength(4);
    const stored = await rows(t.projectId);
    expect(stored).toHaveLength(40_000);
    const players = numbersOfRows(stored, "player");
    expect(Object.keys(players)).toHaveLength(52);
    expect(players.early).toBe(1);
    expect(players.late).toBe(52);
    expect(Object.values(players).sort((x, y) => x - y)).toEqual(Array.from({ length: 52 }, (_, i) => i + 1));
    expect(Object.values(numbersOfRows(stored, "session")).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 103 }, (_, i) => i + 1),
    );
    // The object heard "early"'s latest day from the second slice: a horizon of today keeps it, and
    // drops the session it played only yesterday.
    const horizon = new Date(Number(today / 1000n)).toISOString().slice(0, 10);
    await expireNumbers(env, [{ id: t.projectId, horizon }]);
    expect(await claims(t.projectId).numbersOf("player", ["early", "late"])).toEqual([1, 52]);
    expect(await claims(t.projectId).numbersOf("session", ["sl-first", "sl-last-early"])).toEqual([
      null,
      103,
    ]);
  }, 60_000);

  it("numbers each project on its own", async () => {
    const t = await seedTenant("pro", "Numbers Projects Studio");
    const sibling = { projectId: t.siblingProjectId, tenantId: t.tenantId };
    await deliver([message(t, "p-1", [ev("x", "alice", 0), ev("y", "bob", 1)])]);
    // The same ids in the other project, in another order, in the same delivery as a new one of the first.
    const both = await deliver([
      message(sibling, "p-2", [ev("y", "bob", 2), ev("x", "alice", 3)]),
      message(t, "p-3", [ev("z", "carol", 4)]),
    ]);
    expect(both.explicitAcks).toHaveLength(2);
    expect(numbersOfRows(await rows(t.projectId), "player")).toEqual({ alice: 1, bob: 2, carol: 3 });
    expect(numbersOfRows(await rows(sibling.projectId), "player")).toEqual({ bob: 1, alice: 2 });
    expect(numbersOfRows(await rows(sibling.projectId), "session")).toEqual({ y: 1, x: 2 });
  });

  it("numbers what arrives through the real ingest path and queue: one number per id, dense", async () => {
    const t = await seedTenant("pro", "Numbers Queue Studio");
    const events = Array.from({ length: 60 }, (_, i) =>
      ev(`q-s${i % 9}`, i % 5 === 0 ? "" : `q-p${i % 7}`, i),
    );
    await ingestAndWait(t.projectId, t.keys.ingest.key, events.slice(0, 30));
    await ingestAndWait(t.projectId, t.keys.ingest.key, events.slice(30));
    const stored = await rows(t.projectId);
    expect(stored).toHaveLength(60);
    const players = numbersOfRows(stored, "player");
    const sessions = numbersOfRows(stored, "session");
    const dense = (n: Record<string, number>) => Object.values(n).sort((x, y) => x - y);
    const count = (n: Record<string, number>) => Object.keys(n).length;
    expect(dense(players)).toEqual(Array.from({ length: count(players) }, (_, i) => i + 1));
    expect(dense(sessions)).toEqual(Array.from({ length: count(sessions) }, (_, i) => i + 1));
    expect(count(sessions)).toBe(9);
  });

  it("an erasure forgets the player's numbers and their emptied sessions'; they come back as new ones", async () => {
    const t = await seedTenant("pro", "Numbers Erasure Studio");
    // alice signs in on e-s1 after an anonymous start; bob plays e-s2; both on e-s3 (shared).
    await ingestAndWait(t.projectId, t.keys.ingest.key, [
      ev("e-s1", "", 0),
      ev("e-s1", "alice", 1),
      ev("e-s2", "bob", 2),
      ev("e-s3", "alice", 3),
      ev("e-s3", "bob", 4),
    ]);
    const before = numbersOfRows(await rows(t.projectId), "player");
    expect(before).toEqual({ "e-s1": 1, alice: 2, bob: 3 });
    expect(await eraseAndWait(t.projectId, t.keys.full.key, "alice")).toMatchObject({ status: "completed" });

    const object = claims(t.projectId);
    expect(await object.numbersOf("player", ["alice", "e-s1", "bob"])).toEqual([null, null, 3]);
    // e-s1 lost every event; e-s3 keeps bob's.
    expect(await object.numbersOf("session", ["e-s1", "e-s2", "e-s3"])).toEqual([null, 2, 3]);

    // alice returns: a new player with a new number; bob keeps his.
    await ingestAndWait(t.projectId, t.keys.ingest.key, [ev("e-s4", "alice", 5), ev("e-s2", "bob", 6)]);
    const after = numbersOfRows(await rows(t.projectId), "player");
    expect(after).toEqual({ bob: 3, alice: 4 });
    expect(numbersOfRows(await rows(t.projectId), "session")).toEqual({ "e-s2": 2, "e-s3": 3, "e-s4": 4 });
  }, 90_000);

  it("retention forgets the numbers of ids last seen before the horizon; a returning player is new", async () => {
    const t = await seedTenant("pro", "Numbers Retention Studio");
    const now = nowUs();
    const old = now - 10n * DAY_US;
    await deliver([
      message(t, "r-1", [
        ev("r-s1", "old-player", 0, old),
        ev("r-s2", "kept", 1, old),
        ev("r-s3", "kept", 2, now - 3_600_000_000n),
      ]),
    ]);
    expect(numbersOfRows(await rows(t.projectId), "player")).toEqual({ "old-player": 1, kept: 2 });

    const horizon = new Date(Number((now - 5n * DAY_US) / 1000n)).toISOString().slice(0, 10);
    // old-player and sessions r-s1, r-s2 were last seen 10 days ago.
    expect(await expireNumbers(env, [{ id: t.projectId, horizon }])).toBe(3);
    expect(await expireNumbers(env, [{ id: t.projectId, horizon }])).toBe(0);
    const object = claims(t.projectId);
    expect(await object.numbersOf("player", ["old-player", "kept"])).toEqual([null, 2]);
    expect(await object.numbersOf("session", ["r-s1", "r-s2", "r-s3"])).toEqual([null, null, 3]);

    await deliver([message(t, "r-2", [ev("r-s4", "old-player", 3, now - 60_000_000n)])]);
    expect(await object.numbersOf("player", ["old-player"])).toEqual([3]);
    expect(await object.numbersOf("session", ["r-s4"])).toEqual([4]);
  });

  /** The project's day bitmaps (actor_buckets' day grain) as sorted number arrays. */
  async function dayBitmaps(projectId: string) {
    const rs = await testClickHouse().query({
      query: `SELECT toString(day) AS day, arraySort(bitmapToArray(groupBitmapMergeState(players))) AS players,
          arraySort(bitmapToArray(groupBitmapMergeState(sessions))) AS sessions
        FROM telemetry.actor_buckets WHERE project_id = {p:UUID} AND grain = 'day' GROUP BY day ORDER BY day`,
      query_params: { p: projectId },
      format: "JSONEachRow",
    });
    return (await rs.json<{ day: string; players: number[]; sessions: number[] }>()).filter(
      (d) => d.players.length || d.sessions.length,
    );
  }

  /** compare_rollup's session and player bitmaps (0034_compare_bitmaps.sql) per build, level and day. */
  async function compareBitmaps(projectId: string) {
    const rs = await testClickHouse().query({
      query: `SELECT toString(build_id) AS build, toString(level) AS level, toString(day) AS day,
          arraySort(bitmapToArray(groupBitmapMergeState(players))) AS players,
          arraySort(bitmapToArray(groupBitmapMergeState(sessions))) AS sessions
        FROM telemetry.compare_rollup WHERE project_id = {p:UUID}
        GROUP BY build, level, day ORDER BY build, level, day`,
      query_params: { p: projectId },
      format: "JSONEachRow",
    });
    return rs.json<{ build: string; level: string; day: string; players: number[]; sessions: number[] }>();
  }

  /** build_days' session and player bitmaps (0045_build_days_bitmaps.sql) per build and day. */
  async function buildBitmaps(projectId: string) {
    const rs = await testClickHouse().query({
      query: `SELECT toString(build_id) AS build, toString(day) AS day,
          arraySort(bitmapToArray(groupBitmapMergeState(players))) AS players,
          arraySort(bitmapToArray(groupBitmapMergeState(sessions))) AS sessions
        FROM telemetry.build_days WHERE project_id = {p:UUID} GROUP BY build, day ORDER BY build, day`,
      query_params: { p: projectId },
      format: "JSONEachRow",
    });
    return rs.json<{ build: string; day: string; players: number[]; sessions: number[] }>();
  }

  it("the backfill numbers stored events as ingest would have: by first event, page by page", async () => {
    const t = await seedTenant("pro", "Numbers Backfill Studio");
    const stored = { projectId: t.siblingProjectId, tenantId: t.tenantId };
    // Players and sessions interleaved; each id's first event somewhere in the middle.
    const events = Array.from({ length: 40 }, (_, i) =>
      ev(`b-s${(i * 7) % 11}`, i % 4 === 0 ? "" : `b-p${(i * 5) % 9}`, i),
    );
    const slices = [0, 10, 20, 30].map((at) => events.slice(at, at + 10));
    // Through ingest, in time order: numbered by the consumer.
    for (const [k, slice] of slices.entries()) {
      expect((await deliver([message(t, `bf-${k}`, slice)])).explicitAcks).toHaveLength(1);
    }
    // The same events stored before numbering existed: the consumer's rows without numbers.
    await storeUnnumbered(stored, slices);
    expect((await rows(stored.projectId)).every((r) => r.player_idx === 0 && r.session_idx === 0)).toBe(true);
    // The bitmaps leave unnumbered rows out.
    expect((await dayBitmaps(stored.projectId)).flatMap((d) => [...d.players, ...d.sessions])).toEqual([]);

    // Pages of 5 ids of each kind.
    const pages = [];
    for (let page = await backfillNumbersPage(env, stored.projectId, 5); ; ) {
      pages.push(page);
      if (!page.more || pages.length > 20) {
        break;
      }
      page = await backfillNumbersPage(env, stored.projectId, 5);
    }
    const viaIngest = await rows(t.projectId);
    const backfilled = await rows(stored.projectId);
    expect(backfilled.filter((r) => r.player_idx === 0 || r.session_idx === 0)).toEqual([]);
    expect(numbersOfRows(backfilled, "player")).toEqual(numbersOfRows(viaIngest, "player"));
    expect(numbersOfRows(backfilled, "session")).toEqual(numbersOfRows(viaIngest, "session"));
    expect(Object.keys(numbersOfRows(backfilled, "session"))).toHaveLength(11);
    // Each page rebuilt the bitmaps of its rows' days: they hold what ingest's views hold.
    expect(await dayBitmaps(stored.projectId)).toEqual(await dayBitmaps(t.projectId));
    expect((await dayBitmaps(t.projectId)).flatMap((d) => d.sessions).length).toBeGreaterThanOrEqual(11);
    // compare's session and player sets too: bitmaps since 0034, which number 0 stayed out of.
    const compared = await compareBitmaps(t.projectId);
    expect(compared.map((r) => r.level).sort()).toEqual(["build", "map_platform"]);
    expect(compared.every((r) => r.sessions.length === 11 && r.players.length === 19)).toBe(true);
    expect(await compareBitmaps(stored.projectId)).toEqual(compared);
    // And the builds' (0045_build_days_bitmaps.sql).
    const builds = await buildBitmaps(t.projectId);
    expect(builds.length).toBeGreaterThan(0);
    expect(builds.every((r) => r.sessions.length > 0 && r.players.length > 0)).toBe(true);
    expect(await buildBitmaps(stored.projectId)).toEqual(builds);
    // Its funnel events (0029_funnel_anchors.sql) got the same numbers, by the player's hash.
    const funnel = await funnelNumbers(stored.projectId);
    expect(funnel.unnumbered).toBe(0);
    expect(funnel.pairs).toEqual(funnel.fromEvents);
    expect(funnel.pairs).toHaveLength(19);
    // 19 players (10 of them anonymous sessions) in pages of 5: 5, 5, 5, 4.
    expect(pages.length).toBe(4);
    // Nothing left: a repeat changes nothing.
    expect(await backfillNumbersPage(env, stored.projectId, 5)).toEqual({
      players: 0,
      sessions: 0,
      more: false,
    });
  });

  it("the backfill numbers a page of many long ids in one statement, whatever the ids hold", async () => {
    const t = await seedTenant("pro", "Numbers Backfill Page Studio");
    // 800 players with 100-character ids (quotes, backslashes, non-ASCII): far more than a URL carries.
    const odd = "'\\\"é漢 ";
    const events = Array.from({ length: 800 }, (_, i) =>
      ev(`bp-s${i}`, `${odd}${String(i).padStart(4, "0")}`.padEnd(100, "x"), i),
    );
    await storeUnnumbered(t, [events.slice(0, 400), events.slice(400)]);
    expect(await backfillNumbersPage(env, t.projectId)).toEqual({ players: 800, sessions: 800, more: false });
    const stored = await rows(t.projectId);
    const players = numbersOfRows(stored, "player");
    expect(Object.keys(players)).toHaveLength(800);
    // In first-event order: the i-th player got i + 1.
    for (const [i, e] of events.entries()) {
      expect(players[e.playerId as string], e.playerId as string).toBe(i + 1);
    }
    expect(numbersOfRows(stored, "session")["bp-s799"]).toBe(800);
  });

  it("an operator backfills through the jobs queue; an id numbered since keeps its number on its old rows", async () => {
    const t = await seedTenant("pro", "Numbers Operator Studio");
    // Stored before numbering: x1 first, then x2.
    await storeUnnumbered(t, [[ev("o-s1", "x1", 0), ev("o-s2", "x2", 1)]]);
    // x2 comes back after numbering began: it gets 1.
    await deliver([message(t, "o-live", [ev("o-s3", "x2", 2)])]);

    const post = (body: unknown, secret = TEST_OPERATOR_SECRET) =>
      api(
        "/operator/number-backfills",
        {},
        {
          method: "POST",
          headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" },
          body: JSON.stringify(body),
        },
      );
    for (const bad of [{}, { projectIds: [] }, { projectIds: ["not-a-uuid"] }]) {
      const res = await post(bad);
      expect(res.status).toBe(400);
      expect((await problemOf(res)).field).toBe("projectIds");
    }
    const res = await post({ projectIds: [t.projectId] });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ success: true, data: { queued: 1 } });
    const done = await waitFor(
      () => rows(t.projectId),
      (rs) => rs.every((r) => r.player_idx > 0 && r.session_idx > 0),
      { intervalMs: 250, message: "the queued backfill numbered every row" },
    );
    expect(numbersOfRows(done, "player")).toEqual({ x2: 1, x1: 2 });
    expect(numbersOfRows(done, "session")).toEqual({ "o-s3": 1, "o-s1": 2, "o-s2": 3 });
  });
});

/** Rows as the consumer stored them before numbering existed: every number 0. */
async function storeUnnumbered(project: Pick<Tenant, "projectId" | "tenantId">, slices: EventInit[][]) {
  for (const slice of slices) {
    const sink = new RowSink();
    appendRows(
      sink,
      {
        v: 1,
        projectId: project.projectId,
        tenantId: project.tenantId,
        batchKey: `old-${crypto.randomUUID()}`,
        receivedAt: Date.now(),
        encoding: "identity",
        eventCount: slice.length,
      },
      batch(slice),
    );
    await insertRows(configOf(env), sink);
  }
}
