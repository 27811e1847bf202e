import { describe, expect, it } from "vitest";
import { type EventKpis, eventKpis } from "../../workers/api/analytics/project-status.js";
import { chTime, DAY_MS } from "../../workers/api/window.js";
import { testClickHouse } from "../support/events.js";

/**
 * The status KPIs over the settled batches (workers/api/analytics/project-status.ts): the totals come
 * from batch_totals' per-day projection minus the in-flight batches' rows, the latest event from the
 * projection's days without an in-flight batch and the settled rows of the days with one. Each answer is
 * held against the same figures computed here from the rows inserted, for in-flight sets that hold the
 * latest event, a whole day, a batch over two days, a batch that does not exist, and every batch.
 */
const NOW = Date.parse("2026-06-15T12:00:00.000Z");
const DAY = (n: number, hour: number, ms = 0) => NOW - n * DAY_MS + (hour - 12) * 3_600_000 + ms;

type Row = { ts: number; batch: string; player: number };

/** Batches on five days: a late one into a closed day, one over midnight, the latest event in `c`. */
const ROWS: Row[] = [
  ...[1, 2, 3].map((i) => ({ ts: DAY(9, 10, i), batch: "old", player: 1 })),
  ...[1, 2].map((i) => ({ ts: DAY(3, 8, i), batch: "a", player: 2 })),
  ...[1, 2, 3, 4].map((i) => ({ ts: DAY(3, 20, i), batch: "d-late", player: 3 })),
  { ts: DAY(1, 23, 500), batch: "midnight", player: 4 },
  { ts: DAY(0, 0, 250), batch: "midnight", player: 4 },
  ...[1, 2, 3].map((i) => ({ ts: DAY(0, 9, i), batch: "b", player: 5 })),
  { ts: DAY(0, 11, 123), batch: "c", player: 6 },
  { ts: DAY(0, 11, 999), batch: "c", player: 2 },
];

const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, 23)}000Z`;

function reference(held: readonly string[], retainedFromMs: number): Omit<EventKpis, "fetchedAt"> {
  const kept = ROWS.filter((r) => !held.includes(r.batch) && r.ts >= retainedFromMs);
  // The horizon counts whole days in the totals (batch_totals is per day), as the read does.
  const fromDay = Math.floor(retainedFromMs / DAY_MS) * DAY_MS;
  const totals = ROWS.filter((r) => !held.includes(r.batch) && r.ts >= fromDay);
  const last24 = kept.filter((r) => r.ts > NOW - DAY_MS && r.ts <= NOW);
  const last = Math.max(...totals.map((r) => r.ts));
  return {
    events24h: last24.length,
    players24h: new Set(last24.map((r) => r.player)).size,
    totalEvents: totals.length,
    lastEventAt: totals.length ? iso(last) : null,
  };
}

describe("status totals over the settled batches", () => {
  it("equal the rows' own figures for every in-flight set", async () => {
    const projectId = crypto.randomUUID();
    // Two inserts, so the projection is summed over more than one part.
    for (const part of [ROWS.slice(0, 7), ROWS.slice(7)]) {
      await testClickHouse().insert({
        table: "telemetry.events",
        format: "JSONEachRow",
        values: part.map((r, i) => ({
          project_id: projectId,
          timestamp: chTime(r.ts),
          received_at: chTime(r.ts).slice(0, 23),
          event_name: "match_start",
          session_id: `s-${r.player}`,
          player_id: `p-${r.player}`,
          batch_id: r.batch,
          event_index: i,
          player_idx: r.player,
          session_idx: r.player,
        })),
      });
    }
    const sets: Array<readonly string[]> = [
      [],
      ["c"],
      ["a", "d-late"],
      ["midnight"],
      ["b", "no-such-batch"],
      ["c", "b", "midnight"],
      ["old", "a", "d-late", "midnight", "b", "c"],
    ];
    for (const held of sets) {
      for (const retainedFromMs of [0, DAY(3, 0)]) {
        const kpis = await eventKpis(testClickHouse(), projectId, NOW, retainedFromMs, held);
        expect(
          { ...kpis, fetchedAt: undefined },
          `held ${held.join(",") || "none"}, from ${retainedFromMs}`,
        ).toEqual({ ...reference(held, retainedFromMs), fetchedAt: undefined });
      }
    }
    // The cases are not vacuous: holding the latest event's batch moves the latest event back.
    expect(reference(["c"], 0).lastEventAt).toBe(iso(DAY(0, 9, 3)));
    expect(reference(["midnight"], 0).totalEvents).toBe(ROWS.length - 2);
  });
});
