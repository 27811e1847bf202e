import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_DAILY_ACTORS, CH_PLAYER_FIRST_SEEN } from "../../shared/clickhouse.js";
import { addDays, type Window } from "../../shared/window.js";
import { num, pct, selectRows } from "./select.js";

export type RetentionCohort = {
  cohort_date: string;
  cohort_size: number;
  day1: number | null;
  day7: number | null;
  day30: number | null;
};

/**
 * A player's cohort is the UTC date of their first event in the project ever, read from
 * player_first_seen (kept by a materialized view, so no scan of history before the window). Their
 * active days come from daily_actors (a row per player and day), of the window only: cohort date + N
 * is never before the window.
 */
export async function retentionCohorts(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
): Promise<RetentionCohort[]> {
  const rows = await selectRows(
    ch,
    `
    SELECT toString(c.cohort_date) AS cohort_date,
      count() AS size,
      countIf(has(a.days, c.cohort_date + 1)) AS d1,
      countIf(has(a.days, c.cohort_date + 7)) AS d7,
      countIf(has(a.days, c.cohort_date + 30)) AS d30
    FROM (
      SELECT player, toDate(min(first_seen)) AS cohort_date
      FROM ${CH_PLAYER_FIRST_SEEN}
      WHERE project_id = {projectId:UUID}
      GROUP BY player
      HAVING cohort_date >= toDate({from:DateTime64(6, 'UTC')}) AND cohort_date < toDate({to:DateTime64(6, 'UTC')})
    ) AS c
    LEFT JOIN (
      SELECT id AS player, groupUniqArray(day) AS days
      FROM ${CH_DAILY_ACTORS}
      WHERE project_id = {projectId:UUID} AND kind = 'player'
        AND day >= toDate({from:DateTime64(6, 'UTC')}) + 1
        AND day < toDate({to:DateTime64(6, 'UTC')}) - 1
      GROUP BY id
    ) AS a USING (player)
    GROUP BY c.cohort_date`,
    { projectId, from: w.from, to: w.to },
    { cohort_date: "string", size: "unknown", d1: "unknown", d7: "unknown", d30: "unknown" },
  );
  const byDate = new Map(rows.map((r) => [r.cohort_date, r]));
  return w.dates.map((date) => {
    const r = byDate.get(date);
    const size = num(r?.size);
    const rate = (n: number, reached: unknown) =>
      // Day N has ended only when cohort date + N is before today; null wins over an empty cohort's 0.
      addDays(date, n) >= w.today ? null : pct(num(reached), size);
    return {
      cohort_date: date,
      cohort_size: size,
      day1: rate(1, r?.d1),
      day7: rate(7, r?.d7),
      day30: rate(30, r?.d30),
    };
  });
}
