import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_ACTOR_BUCKETS } from "../../shared/clickhouse.js";
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
 * A player's cohort is the UTC date of their first event in the project (since the studio's retention
 * horizon: their first retained day); their return days are the days they sent an event. From the day
 * bitmaps of dense numbers (actor_buckets' day grain, 0027_actor_buckets.sql), exactly: cohort(C) = players(C) minus the OR of
 * players(d) for every retained day d before C (a late event of an earlier day moves the player to that
 * cohort, as the bitmaps of that day then hold them), and day N's returns = |cohort(C) ∧ players(C + N)|.
 * The running OR and the return days (the bitmap N days later, by a RANGE frame over the day's number) are
 * window functions over the days in order, in one pass: the days' bitmaps are merged once (a CTE used in
 * joins is computed once per use: four times, when the return days were joins; about twice the time at
 * 100M events, docs/benchmarks.md). Days from the window's end on cannot make a
 * cohort of the window nor a return day of one that has ended, so they are not read.
 * Cost: one row (a bitmap) per retained day before the window's end: bounded by days, not by players or
 * events (the retired player_days read a row per player and day).
 */
export async function playerRetentionCohorts(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
): Promise<RetentionCohort[]> {
  const rows = await selectRows(
    ch,
    `
    WITH days AS (
      SELECT day, groupBitmapMergeState(players) AS players
      FROM ${CH_ACTOR_BUCKETS}
      WHERE project_id = {projectId:UUID} AND grain = 'day' AND day < toDate({to:DateTime64(6, 'UTC')})
        AND day >= toDate({retainedFrom:DateTime64(6, 'UTC')})
      GROUP BY day
    )
    SELECT toString(day) AS cohort_date,
      bitmapCardinality(cohort) AS size,
      bitmapAndCardinality(cohort, r1) AS d1,
      bitmapAndCardinality(cohort, r7) AS d7,
      bitmapAndCardinality(cohort, r30) AS d30
    FROM (
      SELECT day, bitmapAndnot(players, seen) AS cohort, r1, r7, r30
      FROM (
        SELECT day, players,
          groupBitmapOrState(players) OVER (ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS seen,
          groupBitmapOrState(players) OVER (ORDER BY n RANGE BETWEEN 1 FOLLOWING AND 1 FOLLOWING) AS r1,
          groupBitmapOrState(players) OVER (ORDER BY n RANGE BETWEEN 7 FOLLOWING AND 7 FOLLOWING) AS r7,
          groupBitmapOrState(players) OVER (ORDER BY n RANGE BETWEEN 30 FOLLOWING AND 30 FOLLOWING) AS r30
        FROM (SELECT day, toUInt32(day) AS n, players FROM days)
      )
      WHERE day >= toDate({from:DateTime64(6, 'UTC')})
    )`,
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
