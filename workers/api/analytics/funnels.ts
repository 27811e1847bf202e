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

/**
 * Per player, one ordered pass over their step events (ties at the same microsecond in SDK order)
 * keeping, for each step k, the latest start of a chain that reached k. An event can extend a chain
 * from k-1 to k only if it lies within `window` seconds of that chain's first step (inclusive), and
 * every step reads the state before this event, so one event never counts as two steps: a repeated
 * name needs repeated events. windowFunnel is not used because it lets one event satisfy two
 * conditions of the same name.
 */
export async function funnelSteps(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  steps: string[],
  windowSeconds: number,
): Promise<FunnelStep[]> {
  const rows = await selectRows<{ level: string; players: string }>(
    ch,
    `
    SELECT level, count() AS players
    FROM (
      SELECT arrayCount(start -> start >= 0, arrayFold(
        (acc, e) -> arrayMap(k -> multiIf(
          k = 1, if(e.3 = {steps:Array(String)}[1], e.1, acc[1]),
          e.3 = {steps:Array(String)}[k] AND acc[k - 1] >= 0 AND e.1 - acc[k - 1] <= {windowUs:Int64},
            greatest(acc[k], acc[k - 1]),
          acc[k]), range(1, length({steps:Array(String)}) + 1)),
        arraySort(groupArray((toUnixTimestamp64Micro(timestamp), event_index, event_name))),
        arrayWithConstant(length({steps:Array(String)}), toInt64(-1)))) AS level
      FROM ${CH_DB}.events
      WHERE project_id = {projectId:UUID}
        AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp < {to:DateTime64(6, 'UTC')}
        AND event_name IN {steps:Array(String)}
      GROUP BY player
    )
    GROUP BY level`,
    { projectId, from: w.from, to: w.to, steps, windowUs: windowSeconds * 1_000_000 },
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
