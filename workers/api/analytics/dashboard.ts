import type { ClickHouseClient } from "@clickhouse/client-web";
import {
  CH_DAILY_ACTORS,
  CH_DAILY_EVENTS,
  CH_DAILY_PLAYER_COUNTS,
  CH_DAILY_PLAYERS,
  CH_EVENTS,
  CH_HOURLY_PLAYERS,
  CH_PLAYER_LAST_SEEN,
} from "../../shared/clickhouse.js";
import { chTime, DAY_MS, type Window } from "../window.js";
import {
  byText,
  distinct,
  inChunks,
  num,
  type RowOf,
  STALE_DAYS_PER_STATEMENT,
  selectRows,
} from "./select.js";
import { windowSessions } from "./sessions.js";

// `metric`, not `kind`: an alias would shadow daily_actors.kind in WHERE.
const COLUMNS = { metric: "string", key: "string", value: "unknown" } as const;
type Row = RowOf<typeof COLUMNS>;

const metricValue = (rows: Row[], kind: string) => num(rows.find((r) => r.metric === kind)?.value);

const HOUR_MS = 3_600_000;

/**
 * The ids of the players with an event in [fromMs, toMs] (both ends included), from the cheapest exact
 * sources: whole UTC days from daily_actors, whole hours from hourly_players (which keeps 32 days), and
 * the partial hours at both ends from the events. Parameters are named after `p` so that two ranges can
 * share a statement. A rolling 24 hours or 30 days thus reads at most two hours of events, not two days.
 * `only`, a condition on an id column, narrows every part to some players (the primary keys end in the
 * id, so a short list reads a few granules per day or hour).
 */
export function playersBetween(
  p: string,
  fromMs: number,
  toMs: number,
  only: (column: string) => string = () => "1",
) {
  const t = (name: string) => `{${p}${name}:DateTime64(6, 'UTC')}`;
  const firstHour = Math.ceil(fromMs / HOUR_MS) * HOUR_MS;
  const lastHour = Math.floor(toMs / HOUR_MS) * HOUR_MS;
  // [r0, r1) and [r2, r3] from the events; [h0, h1) and [h2, h3) from the hours; [d0, d1) from the days.
  let b = { r0: fromMs, r1: fromMs, r2: fromMs, r3: toMs, h0: 0, h1: 0, h2: 0, h3: 0, d0: 0, d1: 0 };
  if (firstHour < lastHour) {
    const firstDay = Math.ceil(firstHour / DAY_MS) * DAY_MS;
    const lastDay = Math.floor(lastHour / DAY_MS) * DAY_MS;
    b = { ...b, r1: firstHour, r2: lastHour, h0: firstHour, h1: lastHour };
    if (firstDay < lastDay) {
      b = { ...b, h1: firstDay, h2: lastDay, h3: lastHour, d0: firstDay, d1: lastDay };
    }
  }
  const params = Object.fromEntries(Object.entries(b).map(([k, v]) => [`${p}${k}`, chTime(v)]));
  const sql = `
      SELECT id FROM ${CH_DAILY_ACTORS}
      WHERE project_id = {projectId:UUID} AND kind = 'player' AND day >= toDate(${t("d0")}) AND day < toDate(${t("d1")})
        AND ${only("id")}
      UNION ALL
      SELECT id FROM ${CH_HOURLY_PLAYERS}
      WHERE project_id = {projectId:UUID}
        AND ((hour >= ${t("h0")} AND hour < ${t("h1")}) OR (hour >= ${t("h2")} AND hour < ${t("h3")}))
        AND ${only("id")}
      UNION ALL
      SELECT player AS id FROM ${CH_EVENTS}
      WHERE project_id = {projectId:UUID}
        AND ((timestamp >= ${t("r0")} AND timestamp < ${t("r1")}) OR (timestamp >= ${t("r2")} AND timestamp <= ${t("r3")}))
        AND ${only("player")}`;
  return { sql, params };
}

/** The rolling counts read from player_last_seen: how far back each looks from now. */
const ROLLING = { mau: 30 * DAY_MS, dau: DAY_MS } as const;
type Rolling = keyof typeof ROLLING;

/** The start of a rolling count's range: its length before now, or the retention horizon if later. */
const rangeFrom = (r: Rolling, nowMs: number, horizonMs: number) => Math.max(nowMs - ROLLING[r], horizonMs);

/**
 * Whether a row of player_last_seen proves an event of its player in [{r}from, now]: last_seen in range
 * (each is the time of one of their events), last_past at or after the start (an event that was not
 * ahead of the clock when inserted, so not after now), or first_ahead or last_ahead in range (events
 * that were ahead when inserted). An event in range was either not ahead (then its row's last_past is
 * in range) or ahead (then it lies in its row's [first_ahead, last_ahead]: one end is in range, or the
 * row straddles the range). The only players still in doubt are those with such a row and no proof
 * (`doubtOf`: an event sent ahead of the clock before the range started, and one still ahead of now):
 * usually none; doubtInRange looks them up. (0022_player_last_seen_ahead.sql)
 */
function seenIn(r: Rolling) {
  const from = `{${r}from:DateTime64(6, 'UTC')}`;
  const now = "{rnow:DateTime64(6, 'UTC')}";
  return `((last_seen >= ${from} AND last_seen <= ${now}) OR last_past >= ${from}
          OR (first_ahead >= ${from} AND first_ahead <= ${now})
          OR (last_ahead >= ${from} AND last_ahead <= ${now}))`;
}

const doubtOf = (r: Rolling) =>
  `(first_ahead < {${r}from:DateTime64(6, 'UTC')} AND last_ahead > {rnow:DateTime64(6, 'UTC')})`;

/**
 * mau (the players of the 30 days ending now) and dau (of the 24 hours ending now), both from one pass
 * over player_last_seen (a row per player of the last 31 days, more where parts are not merged yet):
 * each player's rows prove an event in a range or not (seenIn), and the players in doubt for each
 * range are listed (up to DOUBT_LISTED + 1) as rows `<range> doubt`. One pass over the month's players
 * costs less than dau's own sources (the 24 hours' player-hours and partial hours of events), which a
 * busy day makes several times the month's players.
 */
export function rollingPlayers(nowMs: number, horizonMs = Number.NEGATIVE_INFINITY) {
  const listed = (r: Rolling) =>
    `arrayMap(p -> ('${r} doubt', p, toUInt64(0)), groupUniqArrayIf(${DOUBT_LISTED + 1})(player, ${doubtOf(r)}))`;
  const sql = `
      SELECT tupleElement(r, 1) AS metric, tupleElement(r, 2) AS key, tupleElement(r, 3) AS value
      FROM (
        SELECT arrayConcat(
          [('mau', '', uniqExactIf(cityHash64(player), ${seenIn("mau")})),
           ('dau', '', uniqExactIf(cityHash64(player), ${seenIn("dau")}))],
          ${listed("mau")}, ${listed("dau")}) AS rows
        FROM ${CH_PLAYER_LAST_SEEN} WHERE project_id = {projectId:UUID}
      )
      ARRAY JOIN rows AS r`;
  const params = {
    maufrom: chTime(rangeFrom("mau", nowMs, horizonMs)),
    daufrom: chTime(rangeFrom("dau", nowMs, horizonMs)),
    rnow: chTime(nowMs),
  };
  return { sql, params };
}

/** Up to this many players in doubt are looked up as a literal list; more, through their subquery. */
const DOUBT_LISTED = 500;

/**
 * How many of the players in doubt for a rolling count that rollingPlayers did not count had an event
 * in its range: their ids looked up in the range's days, hours and partial hours (playersBetween). A
 * literal list lets each primary key, which ends in the id, narrow the read to the granules that may
 * hold them; a longer list than a URL carries well is given as the subquery that finds them.
 */
async function doubtInRange(
  ch: ClickHouseClient,
  projectId: string,
  r: Rolling,
  nowMs: number,
  doubt: string[],
  horizonMs: number,
) {
  const listed = doubt.length <= DOUBT_LISTED;
  const set = listed
    ? "{doubt:Array(String)}"
    : `(SELECT DISTINCT player FROM ${CH_PLAYER_LAST_SEEN}
      WHERE project_id = {projectId:UUID} AND ${doubtOf(r)})`;
  const between = playersBetween(
    "b",
    rangeFrom(r, nowMs, horizonMs),
    nowMs,
    (column) => `${column} IN ${set}`,
  );
  const rows = await selectRows(
    ch,
    `SELECT ${distinct("id")} AS value FROM (${between.sql})
    WHERE id NOT IN (SELECT player FROM ${CH_PLAYER_LAST_SEEN}
      WHERE project_id = {projectId:UUID} AND player IN ${set} AND ${seenIn(r)})`,
    {
      projectId,
      ...(listed ? { doubt } : {}),
      ...rollingPlayers(nowMs, horizonMs).params,
      ...between.params,
    },
    { value: "unknown" },
  );
  return num(rows[0]?.value);
}

export type DashboardDistincts = {
  dau: number;
  mau: number;
  sessions: number;
  dailyActiveUsers: Array<{ date: string; count: number }>;
};

const STAMP_COLUMNS = {
  day: "string",
  total: "unknown",
  players: "unknown",
  events: "unknown",
  version: "unknown",
} as const;

/**
 * Players per day, sessions of the window and mau. A closed UTC day's player count is stored
 * (daily_player_counts) with the stamps it was computed at: the day's event total in daily_players and
 * the project's data_version. A late batch strictly raises the total; an erasure deletes the player's
 * rows and then bumps the version: a stored count whose stamps both match counts exactly the rows there
 * are now. Stale or missing days are recomputed in one statement and stored; today is always counted
 * from its own rows. The sessions of the window: windowSessions, from per-day counts stored the same
 * way. dau and mau: rollingPlayers.
 */
export async function dashboardDistincts(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  nowMs: number,
  // Required: a stored closed day is trusted only under the version it was counted at, so a caller that
  // defaulted it would keep trusting counts an erasure has made stale.
  dataVersion: number,
): Promise<DashboardDistincts> {
  const rolling = rollingPlayers(nowMs, w.horizonMs);
  const closed = { projectId, from: w.from, today: `${w.today} 00:00:00.000000` };
  const [stamps, live, sessions] = await Promise.all([
    // A row per part and day of daily_players' `totals` projection, and the stored counts: a few rows a day.
    selectRows(
      ch,
      `
      SELECT toString(t.day) AS day, t.total AS total, s.players AS players, s.events AS events, s.version AS version
      FROM (
        SELECT day, sum(events) AS total FROM ${CH_DAILY_PLAYERS}
        WHERE project_id = {projectId:UUID}
          AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({today:DateTime64(6, 'UTC')})
        GROUP BY day
      ) AS t
      LEFT JOIN (
        SELECT day, argMax(players, computed_at) AS players, argMax(events, computed_at) AS events,
          argMax(data_version, computed_at) AS version
        FROM ${CH_DAILY_PLAYER_COUNTS}
        WHERE project_id = {projectId:UUID}
          AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({today:DateTime64(6, 'UTC')})
        GROUP BY day
      ) AS s USING (day)`,
      closed,
      STAMP_COLUMNS,
    ),
    selectRows(
      ch,
      `
      SELECT 'today' AS metric, '' AS key, uniqExact(player) AS value
      FROM ${CH_DAILY_PLAYERS}
      WHERE project_id = {projectId:UUID} AND day = toDate({today:DateTime64(6, 'UTC')})
      UNION ALL
      ${rolling.sql}`,
      { ...closed, ...rolling.params },
      COLUMNS,
    ),
    windowSessions(ch, projectId, w, dataVersion),
  ]);
  const perDay = new Map<string, number>();
  const stale: string[] = [];
  for (const r of stamps) {
    const total = num(r.total);
    if (total > 0 && num(r.events) === total && num(r.version) === dataVersion) {
      perDay.set(r.day, num(r.players));
    } else if (total > 0) {
      stale.push(r.day);
    }
  }
  const doubted = (r: Rolling) => {
    const doubt = live.filter((row) => row.metric === `${r} doubt`).map((row) => row.key);
    return doubt.length ? doubtInRange(ch, projectId, r, nowMs, doubt, w.horizonMs) : 0;
  };
  const [counted, doubtMau, doubtDau] = await Promise.all([
    inChunks(stale, STALE_DAYS_PER_STATEMENT, (days) => countDays(ch, projectId, days, dataVersion)),
    doubted("mau"),
    doubted("dau"),
  ]);
  for (const [day, players] of counted) {
    perDay.set(day, players);
  }
  perDay.set(w.today, metricValue(live, "today"));
  return {
    dau: metricValue(live, "dau") + doubtDau,
    mau: metricValue(live, "mau") + doubtMau,
    sessions,
    dailyActiveUsers: w.dates.map((date) => ({ date, count: perDay.get(date) ?? 0 })),
  };
}

/**
 * Counts the players of a few closed days (STALE_DAYS_PER_STATEMENT) from daily_players and stores each count with the event total the
 * same SELECT read (one snapshot of the parts, so the stamp describes exactly the rows counted). A store
 * that fails leaves the day to be recomputed by the next read; the counts already computed stand.
 */
async function countDays(
  ch: ClickHouseClient,
  projectId: string,
  days: string[],
  dataVersion: number,
): Promise<Array<[string, number]>> {
  const rows = await selectRows(
    ch,
    `
    SELECT toString(day) AS date, uniqExact(player) AS players, sum(events) AS events
    FROM ${CH_DAILY_PLAYERS}
    WHERE project_id = {projectId:UUID} AND day IN {days:Array(Date)}
    GROUP BY day`,
    { projectId, days },
    // `date`, not `day`: an alias would shadow the column in WHERE.
    { date: "string", players: "unknown", events: "unknown" },
  );
  const computedAt = chTime(Date.now()).slice(0, 23);
  await ch
    .insert({
      table: CH_DAILY_PLAYER_COUNTS,
      values: rows.map((r) => ({
        project_id: projectId,
        day: r.date,
        players: num(r.players),
        events: num(r.events),
        data_version: dataVersion,
        computed_at: computedAt,
      })),
      format: "JSONEachRow",
    })
    .catch(() => {});
  return rows.map((r): [string, number] => [r.date, num(r.players)]);
}

export type DashboardTotals = {
  events: number;
  topEvents: Array<{ event_name: string; count: number }>;
};

/**
 * The window's event count and its 10 most frequent names (ties by name) from telemetry.daily_events, a row per day, name, map,
 * platform and build.
 */
export async function dashboardTotals(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
): Promise<DashboardTotals> {
  const scope = `project_id = {projectId:UUID}
      AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})`;
  const rows = await selectRows(
    ch,
    `
    SELECT 'events' AS metric, '' AS key, sum(events) AS value
    FROM ${CH_DAILY_EVENTS} WHERE ${scope}
    UNION ALL
    (SELECT 'event' AS metric, toString(event_name) AS key, sum(events) AS value
    FROM ${CH_DAILY_EVENTS} WHERE ${scope}
    GROUP BY key
    ORDER BY value DESC, key ASC
    LIMIT 10)`,
    { projectId, from: w.from, to: w.to },
    COLUMNS,
  );
  return {
    events: metricValue(rows, "events"),
    topEvents: rows
      .filter((r) => r.metric === "event")
      .map((r) => ({ event_name: r.key, count: num(r.value) }))
      .sort((a, b) => b.count - a.count || byText(a.event_name, b.event_name)),
  };
}
