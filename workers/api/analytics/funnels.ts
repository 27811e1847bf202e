import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_FUNNEL_EVENTS } from "../../shared/clickhouse.js";
import type { Window } from "../window.js";
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
 * A player reaches step k when they did steps 1..k in order within `window` seconds of step 1; only
 * events of the window count. Events of one player at the very same microsecond have no defined order.
 */
export async function funnelSteps(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  steps: string[],
  windowSeconds: number,
): Promise<FunnelStep[]> {
  const perPlayer =
    new Set(steps).size === steps.length ? windowFunnelSql(steps.length) : expandedFunnelSql(steps.length);
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
  const atLevel = new Map(rows.map((r) => [num(r.level), num(r.players)]));
  const reached = steps.map((_, i) => {
    let n = 0;
    for (const [level, players] of atLevel) {
      n += level > i ? players : 0;
    }
    return n;
  });
  return steps.map((event_name, i) => {
    const count = reached[i] ?? 0;
    const previous = i === 0 ? count : (reached[i - 1] ?? 0);
    return {
      step: i + 1,
      event_name,
      count,
      pct: pct(count, reached[0] ?? 0),
      drop_off_pct: i === 0 ? 0 : pct(previous - count, previous),
    };
  });
}
