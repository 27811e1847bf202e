import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_PLAYER_DAYS } from "../../shared/clickhouse.js";
import { addDays, type Window } from "../window.js";
import { num, pct, selectRows } from "./select.js";

export type RetentionCohort = {
  cohort_date: string;
  cohort_size: number;
  day1: number | null;
  day7: number | null;
  day30: number | null;
};

/**
 * A player's cohort is the UTC date of their first event in the project ever; their return days are
 * the days they sent an event. Both come from player_days (0008_funnel_retention.sql), one row per
 * player hash and day with an event: the cohort is the minimum of a player's days (a late event of an
 * earlier day moves the player to that cohort), the return days are the rest. Days from the window's
 * end on cannot make a cohort of the window (a player whose first day is there is outside it) nor a
 * return day (cohort date + N < window end), so they are not read; nor are the days before the
 * studio's retention horizon (a player's first day is their first retained day).
 * Cost: the project's player-days before the window's end, grouped by a UInt64, no join: it follows
 * players and the days they played, not events (player_first_seen + daily_actors grouped strings and
 * joined them, about twice the time at 2M bench events).
 */
export async function playerRetentionCohorts(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
): Promise<RetentionCohort[]> {
  const rows = await selectRows(
    ch,
    `
    SELECT toString(cohort) AS cohort_date,
      count() AS size,
      countIf(has(days, cohort + 1)) AS d1,
      countIf(has(days, cohort + 7)) AS d7,
      countIf(has(days, cohort + 30)) AS d30
    FROM (
      SELECT player_hash, min(day) AS cohort,
        groupArrayIf(day, day > toDate({from:DateTime64(6, 'UTC')})) AS days
      FROM ${CH_PLAYER_DAYS}
      WHERE project_id = {projectId:UUID} AND day < toDate({to:DateTime64(6, 'UTC')})
        AND day >= toDate({retainedFrom:DateTime64(6, 'UTC')})
      GROUP BY player_hash
      HAVING cohort >= toDate({from:DateTime64(6, 'UTC')})
    )
    GROUP BY cohort`,
    { projectId, from: w.from, to: w.to, retainedFrom: w.retainedFrom },
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
