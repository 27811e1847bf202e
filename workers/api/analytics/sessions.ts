import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_DAILY_SESSION_COUNTS, CH_DAILY_SESSIONS } from "../../shared/clickhouse.js";
import { addDays, chTime, dateOf, type Window } from "../window.js";
import { inChunks, num, STALE_DAYS_PER_STATEMENT, selectRows } from "./select.js";

/**
 * How far back a closed day's stored `earlier` looks: the longest window (90 days) less the day itself.
 * A window starting on d0 only asks whether a session was seen on a day >= d0, never further back.
 */
export const SESSION_LOOKBACK_DAYS = 89;

const STORED = {
  date: "string",
  sessions: "unknown",
  earlier: "unknown",
  events: "unknown",
  version: "unknown",
} as const;

/**
 * The distinct sessions of the window (0020_daily_sessions.sql), exactly, without a distinct count over
 * the window's session rows. For the days d0 … today of the window:
 *
 *   sessions = Σ_d n(d) − Σ_{d > d0} #{s of d : s seen on a day in [d0, d)}
 *
 * n(d) being the day's sessions: every session is counted on the first day of the window it has events
 * on. For a closed day the subtrahend is read from its stored row: `earlier` holds, for each of its
 * sessions seen on one of the 89 days before, the latest such day, and the sessions already counted are
 * those whose latest earlier day is >= d0 (a session across midnight has yesterday there; one that paused
 * for days has the day it was last seen). Stored rows carry the event total of the 90 days they looked at
 * and the project's data_version, read before they are computed (so a row never claims rows its count
 * did not see); a row whose stamps both still match counts exactly the rows there are now. Stale or
 * missing days are recomputed in one statement and stored. Today is live: its sessions and, of those,
 * the ones seen on an earlier day of the window (a join of today's session hashes with the window's
 * rows: the one read that still follows the window's sessions, 8 bytes a row; see docs/analytics.md
 * "What each read grows with" for why an exact count reads them).
 */
export async function windowSessions(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  dataVersion: number,
): Promise<number> {
  // The window's days from its start: a studio's retention horizon may move it past the first date.
  const start = dateOf(w.fromMs);
  const days = w.dates.filter((d) => d >= start);
  const first = days[0] ?? w.today;
  const lookback = addDays(first, -SESSION_LOOKBACK_DAYS);
  const closed = { projectId, from: first, today: w.today };
  const [totals, stored, live] = await Promise.all([
    // The stamps: a row per part and day of the `totals` projection, for the window and the 89 days before.
    selectRows(
      ch,
      `SELECT toString(day) AS date, sum(events) AS total FROM ${CH_DAILY_SESSIONS}
      WHERE project_id = {projectId:UUID} AND day >= {lookback:Date} AND day < {today:Date}
      GROUP BY day`,
      { ...closed, lookback },
      // `date`, not `day`: an alias would shadow the column in WHERE.
      { date: "string", total: "unknown" },
    ),
    selectRows(
      ch,
      `SELECT toString(day) AS date, argMax(sessions, computed_at) AS sessions,
        arrayMap(d -> toString(d), argMax(earlier, computed_at)) AS earlier,
        argMax(events, computed_at) AS events, argMax(data_version, computed_at) AS version
      FROM ${CH_DAILY_SESSION_COUNTS}
      WHERE project_id = {projectId:UUID} AND day >= {from:Date} AND day < {today:Date}
      GROUP BY day`,
      closed,
      STORED,
    ),
    // Today: its sessions, and those of them already seen on an earlier day of the window, in one read
    // of each: today's distinct hashes are the join's hash table, the window's earlier rows stream past
    // it, and a session of today no earlier row matched gets 0 (or NULL under join_use_nulls: not counted
    // either way; a real hash of 0 has odds of 2^-64).
    selectRows(
      ch,
      `SELECT uniqExact(t.session) AS today, uniqExactIf(t.session, e.session != 0) AS seen
      FROM (
        SELECT session FROM ${CH_DAILY_SESSIONS}
        WHERE project_id = {projectId:UUID} AND day >= {from:Date} AND day < {today:Date}
      ) AS e
      RIGHT JOIN (
        SELECT DISTINCT session FROM ${CH_DAILY_SESSIONS}
        WHERE project_id = {projectId:UUID} AND day = {today:Date}
      ) AS t ON e.session = t.session`,
      closed,
      { today: "unknown", seen: "unknown" },
    ),
  ]);
  const total = new Map(totals.map((r) => [r.date, num(r.total)]));
  // The stamp of a closed day: the event total of the 90 days ending on it.
  const stampOf = (day: string) => {
    let sum = 0;
    for (let i = 0; i <= SESSION_LOOKBACK_DAYS; i++) {
      sum += total.get(addDays(day, -i)) ?? 0;
    }
    return sum;
  };
  const byDay = new Map(stored.map((r) => [r.date, r]));
  let sessions = num(live[0]?.today) - num(live[0]?.seen);
  const stale: Array<{ day: string; stamp: number }> = [];
  for (const day of days.slice(0, -1)) {
    if (!total.get(day)) {
      continue; // no events that day: no sessions
    }
    const stamp = stampOf(day);
    const row = byDay.get(day);
    if (row && num(row.events) === stamp && num(row.version) === dataVersion) {
      sessions += num(row.sessions) - alreadyCounted(row.earlier as string[], day, first);
    } else {
      stale.push({ day, stamp });
    }
  }
  const counted = await inChunks(stale, STALE_DAYS_PER_STATEMENT, (days) =>
    countDays(ch, projectId, days, dataVersion),
  );
  for (const c of counted) {
    sessions += c.sessions - alreadyCounted(c.earlier, c.day, first);
  }
  return sessions;
}

/** The day's sessions counted on an earlier day of a window starting on `first` (none on its first day). */
function alreadyCounted(earlier: string[], day: string, first: string): number {
  return day === first ? 0 : earlier.filter((d) => d >= first).length;
}

type Counted = { day: string; sessions: number; earlier: string[] };

/**
 * Counts the sessions of a few closed days (STALE_DAYS_PER_STATEMENT) and, for each, the latest of the 89 days before on which it was
 * seen, from daily_sessions; stores each day with the stamp read before (see windowSessions). A store
 * that fails leaves the day to be recomputed by the next read; the counts already computed stand.
 */
async function countDays(
  ch: ClickHouseClient,
  projectId: string,
  stale: Array<{ day: string; stamp: number }>,
  dataVersion: number,
): Promise<Counted[]> {
  const days = stale.map((s) => s.day);
  const rows = await selectRows(
    ch,
    `
    SELECT toString(d) AS date, count() AS sessions,
      arrayMap(x -> toString(x), groupArrayIf(p, p != toDate(0))) AS earlier
    FROM (
      -- p: the session's latest day before d when within the lookback, else 1970-01-01 (none).
      SELECT d, if(i > 1 AND seen[i - 1] >= d - ${SESSION_LOOKBACK_DAYS}, seen[i - 1], toDate(0)) AS p
      FROM (
        SELECT session, arraySort(groupUniqArray(day)) AS seen
        FROM ${CH_DAILY_SESSIONS}
        WHERE project_id = {projectId:UUID} AND day >= {lo:Date} AND day <= {hi:Date}
          AND session IN (SELECT session FROM ${CH_DAILY_SESSIONS}
            WHERE project_id = {projectId:UUID} AND day IN {days:Array(Date)})
        GROUP BY session
      )
      ARRAY JOIN seen AS d, arrayEnumerate(seen) AS i
      WHERE d IN {days:Array(Date)}
    )
    GROUP BY d`,
    {
      projectId,
      days,
      lo: addDays(days[0] as string, -SESSION_LOOKBACK_DAYS),
      hi: days[days.length - 1],
    },
    { date: "string", sessions: "unknown", earlier: "unknown" },
  );
  const counted = rows.map((r) => ({
    day: r.date,
    sessions: num(r.sessions),
    earlier: r.earlier as string[],
  }));
  const stamps = new Map(stale.map((s) => [s.day, s.stamp]));
  const computedAt = chTime(Date.now()).slice(0, 23);
  await ch
    .insert({
      table: CH_DAILY_SESSION_COUNTS,
      values: counted.map((c) => ({
        project_id: projectId,
        day: c.day,
        sessions: c.sessions,
        earlier: c.earlier,
        events: stamps.get(c.day) ?? 0,
        data_version: dataVersion,
        computed_at: computedAt,
      })),
      format: "JSONEachRow",
    })
    .catch(() => {});
  return counted;
}
