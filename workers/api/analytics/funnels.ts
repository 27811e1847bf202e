import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_FUNNEL_ANCHORS, CH_FUNNEL_EVENTS } from "../../shared/clickhouse.js";
import { chTime, type Window } from "../window.js";
import {
  definitionKey,
  type FunnelDefinition,
  HOUR_MS,
  recordDefinition,
  usableHours,
} from "./funnel-anchors.js";
import { num, pct, selectRows } from "./select.js";

export type FunnelStep = {
  step: number;
  event_name: string;
  count: number;
  pct: number;
  drop_off_pct: number;
};

// Both statements give each player the furthest step reached; the caller turns that into counts.
// They read funnel_events (0008_funnel_retention.sql), the events reduced to name, time and the 64-bit
// hash of the player, ordered by project, name and day: the primary key narrows the read to the steps'
// names over the window, 16 bytes an event, grouped by a UInt64 (with a million players the chance
// that two share a hash is about 3 in 10^8). Cost: the step events of the window, hash-grouped by
// player; at 2M bench events about half the time of the same statements over the events' player string.
const SCOPE = `project_id = {projectId:UUID}
        AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}
        AND event_name IN {steps:Array(String)}`;

/**
 * Distinct step names: ClickHouse's windowFunnel, which keeps for each step the latest start of a
 * chain that reached it and extends a chain only within `window` of its first step (inclusive).
 */
function windowFunnelSql(stepCount: number): string {
  const conditions = Array.from(
    { length: stepCount },
    (_, i) => `event_name = {steps:Array(String)}[${i + 1}]`,
  );
  return `
      SELECT windowFunnel({windowUs:UInt64})(toUInt64(toUnixTimestamp64Micro(timestamp)), ${conditions.join(", ")}) AS level
      FROM ${CH_FUNNEL_EVENTS}
      WHERE ${SCOPE}
      GROUP BY player_hash`;
}

/**
 * Repeated step names: windowFunnel evaluates all conditions on each row, so one event could be two
 * steps of the same name. Each event becomes one row per step position its name holds (ARRAY JOIN),
 * each row matching exactly one condition. Time is scaled by 8 (steps ≤ 8) and the rows of one event
 * are ordered highest step first, so the event extends the chains of earlier events before it starts
 * or extends its own: it is never two steps. The window scales too; the offsets (< 8) cannot carry a
 * step across the window's edge, so a step exactly `window` seconds after step 1 still counts.
 */
function expandedFunnelSql(stepCount: number): string {
  const conditions = Array.from({ length: stepCount }, (_, i) => `k = ${i + 1}`);
  return `
      SELECT windowFunnel({windowScaled:UInt64})(
        toUInt64(toUnixTimestamp64Micro(timestamp)) * 8 + toUInt64(${stepCount} - k), ${conditions.join(", ")}) AS level
      FROM ${CH_FUNNEL_EVENTS}
      ARRAY JOIN arrayFilter(i -> {steps:Array(String)}[i] = event_name, range(1, ${stepCount + 1})) AS k
      WHERE ${SCOPE}
      GROUP BY player_hash`;
}

/**
 * Distinct step names with stored anchor hours (funnel-anchors.ts): per step k, the players reaching it
 * are the OR of the stored hours' bitmaps of level k and of the live players at k or more. The live part
 * is windowFunnel over the step events of the hours that can hold a chain of an anchor in an hour not
 * stored (`live`: [h, h + 1 h + window) of each such hour), with step 1 restricted to those hours, so no
 * chain is counted from both sides; later steps may be any event. A live player without a dense number
 * (rows stored before numbering, until the backfill) is counted by itself.
 */
function anchoredFunnelSql(stepCount: number): string {
  const conditions = Array.from({ length: stepCount }, (_, i) =>
    i === 0
      ? `event_name = {steps:Array(String)}[1] AND toUInt32(intDiv(toUnixTimestamp64Micro(timestamp), 3600000000) * 3600) NOT IN {stored:Array(UInt32)}`
      : `event_name = {steps:Array(String)}[${i + 1}]`,
  );
  return `
      SELECT k, groupBitmapMerge(players) + sum(unnumbered) AS players
      FROM (
        SELECT toUInt64(level) AS k, players, toUInt64(0) AS unnumbered FROM ${CH_FUNNEL_ANCHORS}
        WHERE project_id = {projectId:UUID} AND definition = cityHash64({definition:String}) AND level >= 1
          AND toUInt32(hour) IN {stored:Array(UInt32)}
          AND stamp = toUInt64OrZero({stamps:Array(String)}[indexOf({stored:Array(UInt32)}, toUInt32(hour))])
        UNION ALL
        SELECT k, groupBitmapStateIf(idx, idx != 0) AS players, countIf(idx = 0) AS unnumbered
        FROM (
          SELECT max(player_idx) AS idx,
            windowFunnel({windowUs:UInt64})(toUInt64(toUnixTimestamp64Micro(timestamp)), ${conditions.join(", ")}) AS level
          FROM ${CH_FUNNEL_EVENTS}
          WHERE project_id = {projectId:UUID} AND event_name IN {steps:Array(String)}
            AND timestamp >= {liveFrom:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}
            AND toUInt32(intDiv(toUnixTimestamp64Micro(timestamp), 3600000000) * 3600) IN {live:Array(UInt32)}
          GROUP BY player_hash
          HAVING level > 0)
        ARRAY JOIN range(1, toUInt64(level) + 1) AS k
        GROUP BY k)
      GROUP BY k`;
}

/** The players reaching each step (index k - 1), from the counts per furthest level. */
function reachedFromLevels(rows: Array<{ level: unknown; players: unknown }>, stepCount: number): number[] {
  const atLevel = new Map(rows.map((r) => [num(r.level), num(r.players)]));
  return Array.from({ length: stepCount }, (_, i) => {
    let n = 0;
    for (const [level, players] of atLevel) {
      n += level > i ? players : 0;
    }
    return n;
  });
}

/**
 * Distinct steps: the stored anchor hours whose stamp still holds, the rest live. None usable (a
 * definition read for the first time, or whose hours the job has not stored yet): all live.
 */
async function anchoredReached(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  d: FunnelDefinition,
  dataVersion: number,
): Promise<number[] | null> {
  const usable = await usableHours(ch, projectId, d, w.fromMs, w.toMs, dataVersion);
  if (!usable.size) {
    return null;
  }
  // Hours of the window not stored: their chains' events, [h, h + 1 h + window), are read live.
  const live = new Set<number>();
  let liveFrom = w.toMs;
  for (let h = w.fromMs; h < w.toMs; h += HOUR_MS) {
    if (usable.has(h)) {
      continue;
    }
    liveFrom = Math.min(liveFrom, h);
    for (let c = h; c < Math.min(w.toMs, h + HOUR_MS + d.windowS * 1000); c += HOUR_MS) {
      live.add(c / 1000);
    }
  }
  const stored = [...usable.keys()];
  const rows = await selectRows(
    ch,
    anchoredFunnelSql(d.steps.length),
    {
      projectId,
      definition: definitionKey(d),
      steps: d.steps,
      stored: stored.map((h) => h / 1000),
      stamps: stored.map((h) => (usable.get(h) ?? 0n).toString()),
      live: [...live].sort((a, b) => a - b),
      liveFrom: chTime(liveFrom),
      to: w.to,
      windowUs: d.windowS * 1_000_000,
    },
    { k: "unknown", players: "unknown" },
  );
  const byStep = new Map(rows.map((r) => [num(r.k), num(r.players)]));
  return d.steps.map((_, i) => byStep.get(i + 1) ?? 0);
}

/**
 * A player reaches step k when they did steps 1..k in order within `window` seconds of step 1; only
 * events of the window count. Events of one player at the very same microsecond have no defined order.
 * Distinct steps use the stored anchor hours (funnel-anchors.ts) and record the definition for the job
 * (`at.nowMs`: the reader's clock; `at.dataVersion`: the project's, which stored hours must carry);
 * repeated steps are computed live.
 */
export async function funnelSteps(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  steps: string[],
  windowSeconds: number,
  at: { nowMs?: number; dataVersion?: number } = {},
): Promise<FunnelStep[]> {
  const distinct = new Set(steps).size === steps.length;
  const d: FunnelDefinition = { steps, windowS: windowSeconds };
  let reached: number[] | null = null;
  if (distinct) {
    // The record goes beside the read, not before it.
    const [, anchored] = await Promise.all([
      at.nowMs === undefined ? undefined : recordDefinition(ch, projectId, d, at.nowMs),
      anchoredReached(ch, projectId, w, d, at.dataVersion ?? 0),
    ]);
    reached = anchored;
  }
  if (!reached) {
    const perPlayer = distinct ? windowFunnelSql(steps.length) : expandedFunnelSql(steps.length);
    const rows = await selectRows(
      ch,
      `SELECT level, count() AS players FROM (${perPlayer}) GROUP BY level`,
      {
        projectId,
        from: w.from,
        to: w.to,
        steps,
        windowUs: windowSeconds * 1_000_000,
        windowScaled: windowSeconds * 8_000_000,
      },
      { level: "unknown", players: "unknown" },
    );
    reached = reachedFromLevels(rows, steps.length);
  }
  const counts = reached;
  return steps.map((event_name, i) => {
    const count = counts[i] ?? 0;
    const previous = i === 0 ? count : (counts[i - 1] ?? 0);
    return {
      step: i + 1,
      event_name,
      count,
      pct: pct(count, counts[0] ?? 0),
      drop_off_pct: i === 0 ? 0 : pct(previous - count, previous),
    };
  });
}
