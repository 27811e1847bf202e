// Exact distinct counts from bitmaps of dense numbers (schema/clickhouse/migrations/0027_actor_buckets.sql,
// docs/analytics.md "Distinct counts from bitmaps"). Every player and session of a project has a UInt32
// number (workers/shared/actors.ts); the players (and sessions) of any set of buckets are the OR of the
// buckets' bitmaps, and their count that OR's cardinality. The SQL here builds those unions: whole UTC days,
// whole hours and whole minutes from actor_buckets' rows of that grain, and the partial minutes (or, past
// the minutes' two days, the partial hour) at both ends from the events themselves.
import { CH_ACTOR_BUCKETS, CH_EVENTS } from "../../shared/clickhouse.js";
import { chTime, DAY_MS } from "../window.js";

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/**
 * How far back actor_buckets' minutes are read: they live 2 days (TTL), so a range boundary older than this
 * reads its partial hour from the events instead (a rolling 30 days' start: one hour of events, 30 days
 * ago).
 */
export const MINUTES_KEPT_MS = 36 * HOUR_MS;

/** Half-open [from, to) spans of each source; `raw` ends are inclusive at the range's end. */
type Spans = {
  days: Array<[number, number]>;
  hours: Array<[number, number]>;
  minutes: Array<[number, number]>;
  /** [from, to) spans, and `last`: the closed span at the range's end ([from, to], to included). */
  raw: Array<[number, number]>;
  last: [number, number] | null;
};

const ceilTo = (ms: number, unit: number) => Math.ceil(ms / unit) * unit;
const floorTo = (ms: number, unit: number) => Math.floor(ms / unit) * unit;

/**
 * Splits [fromMs, toMs] (both ends included) into whole days, whole hours, whole minutes and the rest,
 * coarsest first: a rolling 24 hours is at most 22 whole hours, 118 whole minutes and two partial minutes
 * of events; a rolling 30 days 29 days, 46 hours and the partial ones.
 */
export function spansOf(fromMs: number, toMs: number, nowMs: number): Spans {
  const s: Spans = { days: [], hours: [], minutes: [], raw: [], last: null };
  if (toMs < fromMs) {
    return s;
  }
  const minutesFrom = nowMs - MINUTES_KEPT_MS;
  // Inner bounds at each grain, narrowing outwards: days ⊂ hours ⊂ minutes ⊂ [from, to].
  const m0 = ceilTo(fromMs, MINUTE_MS);
  const m1 = floorTo(toMs, MINUTE_MS);
  if (m0 >= m1) {
    s.last = [fromMs, toMs];
    return s;
  }
  const h0 = ceilTo(m0, HOUR_MS);
  const h1 = floorTo(m1, HOUR_MS);
  if (h0 >= h1) {
    pushMinutesOrRaw(s, m0, m1, minutesFrom);
  } else {
    const d0 = ceilTo(h0, DAY_MS);
    const d1 = floorTo(h1, DAY_MS);
    if (d0 >= d1) {
      s.hours.push([h0, h1]);
    } else {
      s.days.push([d0, d1]);
      s.hours.push([h0, d0], [d1, h1]);
    }
    pushMinutesOrRaw(s, m0, h0, minutesFrom);
    pushMinutesOrRaw(s, h1, m1, minutesFrom);
  }
  s.raw.push([fromMs, m0]);
  s.last = [m1, toMs];
  s.days = s.days.filter(([a, b]) => a < b);
  s.hours = s.hours.filter(([a, b]) => a < b);
  s.minutes = s.minutes.filter(([a, b]) => a < b);
  s.raw = s.raw.filter(([a, b]) => a < b);
  return s;
}

/** Whole minutes [a, b) from actor_buckets while it still holds them, else from the events. */
function pushMinutesOrRaw(s: Spans, a: number, b: number, minutesFrom: number) {
  if (a >= b) {
    return;
  }
  if (a >= minutesFrom) {
    s.minutes.push([a, b]);
  } else {
    s.raw.push([a, b]);
  }
}

/**
 * A subquery of one column `bm` (groupBitmap states) whose OR is the players with an event in
 * [fromMs, toMs]. Parameters are named after `p`, so that several ranges share one statement; the
 * project is {projectId:UUID}.
 * Cost: a row per whole day, hour and minute (at most ~30 + 46 + 236), and the events of the partial
 * minutes (the partial hour at a boundary older than the minutes' two days), read by the events' primary
 * key (project, day).
 */
export function playersBetween(p: string, fromMs: number, toMs: number, nowMs: number) {
  const s = spansOf(fromMs, toMs, nowMs);
  const params: Record<string, string> = {};
  const t = (name: string, ms: number) => {
    params[`${p}${name}`] = chTime(ms);
    return `{${p}${name}:DateTime64(6, 'UTC')}`;
  };
  const parts: string[] = [];
  const any = (conds: string[]) => (conds.length ? conds.join(" OR ") : "0");
  // One read of actor_buckets for every whole day, hour and minute: each condition names its grain, which
  // leads the table's key after the project, then `day` (the monthly partitions and the key prune on it
  // before the bucket's own bounds).
  const grained = (grain: "hour" | "minute", key: string, spans: Array<[number, number]>) =>
    spans.map(([a, b], i) => {
      const lo = t(`${key}${i}a`, a);
      const hi = t(`${key}${i}b`, b);
      return `(grain = '${grain}' AND day >= toDate(${lo}) AND day <= toDate(${hi}) AND bucket >= ${lo} AND bucket < ${hi})`;
    });
  const buckets = [
    ...s.days.map(
      ([a, b], i) =>
        `(grain = 'day' AND day >= toDate(${t(`d${i}a`, a)}) AND day < toDate(${t(`d${i}b`, b)}))`,
    ),
    ...grained("hour", "h", s.hours),
    ...grained("minute", "m", s.minutes),
  ];
  if (buckets.length) {
    parts.push(
      `SELECT players AS bm FROM ${CH_ACTOR_BUCKETS} WHERE project_id = {projectId:UUID} AND (${any(buckets)})`,
    );
  }
  const raw = s.raw.map(([a, b], i) => {
    const lo = t(`r${i}a`, a);
    const hi = t(`r${i}b`, b);
    return `(toDate(timestamp) >= toDate(${lo}) AND toDate(timestamp) <= toDate(${hi}) AND timestamp >= ${lo} AND timestamp < ${hi})`;
  });
  if (s.last) {
    const lo = t("la", s.last[0]);
    const hi = t("lb", s.last[1]);
    raw.push(
      `(toDate(timestamp) >= toDate(${lo}) AND toDate(timestamp) <= toDate(${hi}) AND timestamp >= ${lo} AND timestamp <= ${hi})`,
    );
  }
  if (raw.length) {
    parts.push(`SELECT groupBitmapStateIf(player_idx, player_idx != 0) AS bm FROM ${CH_EVENTS}
      WHERE project_id = {projectId:UUID} AND (${any(raw)})`);
  }
  if (!parts.length) {
    parts.push("SELECT groupBitmapState(toUInt32(0)) AS bm FROM system.one WHERE 0");
  }
  return { sql: parts.join("\n      UNION ALL\n      "), params };
}
