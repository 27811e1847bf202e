import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_DB } from "../../shared/clickhouse.js";
import { num, pct, selectRows } from "./select.js";
import type { Window } from "./window.js";

export type FunnelStep = {
  step: number;
  event_name: string;
  count: number;
  pct: number;
  drop_off_pct: number;
};

// Both statements give each player the furthest step reached; the caller turns that into counts.
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
      FROM ${CH_DB}.events
      WHERE ${SCOPE}
      GROUP BY cityHash64(player)`;
}

/**
 * Repeated step names: windowFunnel would let one event satisfy two steps of the same name, so the
 * same chain-keeping runs as an arrayFold over the player's step events in time order, every step
 * reading the state from before the current event: one event is never two steps. Names travel as
 * small integers (a name's first position among the steps), which sort and compare cheaply.
 */
const FOLD_SQL = `
      SELECT arrayCount(start -> start >= 0, arrayFold(
        (acc, e) -> arrayMap(k -> multiIf(
          k = 1, if(e.2 = 1, e.1, acc[1]),
          e.2 = {stepIds:Array(UInt8)}[k] AND acc[k - 1] >= 0 AND e.1 - acc[k - 1] <= {windowUs:UInt64},
            greatest(acc[k], acc[k - 1]),
          acc[k]), range(1, length({stepIds:Array(UInt8)}) + 1)),
        arraySort(groupArray((toUnixTimestamp64Micro(timestamp), toUInt8(indexOf({steps:Array(String)}, event_name))))),
        arrayWithConstant(length({stepIds:Array(UInt8)}), toInt64(-1)))) AS level
      FROM ${CH_DB}.events
      WHERE ${SCOPE}
      GROUP BY cityHash64(player)`;

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
  const perPlayer = new Set(steps).size === steps.length ? windowFunnelSql(steps.length) : FOLD_SQL;
  const rows = await selectRows<{ level: string; players: string }>(
    ch,
    `SELECT level, count() AS players FROM (${perPlayer}) GROUP BY level`,
    {
      projectId,
      from: w.from,
      to: w.to,
      steps,
      stepIds: steps.map((name) => steps.indexOf(name) + 1),
      windowUs: windowSeconds * 1_000_000,
    },
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
