// UTC windows of the metric definitions: a window of N days is the N UTC calendar days ending today,
// today included. Bounds go to ClickHouse as bound DateTime64 parameters, so the primary key
// (project_id, toDate(timestamp), …) and the monthly partitions prune to the window.

export const DAY_MS = 86_400_000;

export type Window = {
  /** The first instant read: the first day's start, or the studio's retention horizon if later. */
  fromMs: number;
  toMs: number;
  /** First day of the window, 00:00:00 UTC, as a ClickHouse DateTime64 literal. */
  from: string;
  /** Exclusive end: 00:00:00 UTC of the day after today. */
  to: string;
  /**
   * Every date of the window, oldest first, YYYY-MM-DD; the days before the horizon included (their
   * counts read as zero: nothing before `from` is read).
   */
  dates: string[];
  today: string;
  /**
   * The studio's retention horizon (ms; -Infinity when none was given): reads that do not stop at
   * `from` (rolling 24 hours and 30 days, a player's first day ever) stop here.
   */
  horizonMs: number;
  /** The horizon as a DateTime64 literal (1970 when none). */
  retainedFrom: string;
};

export function dateOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function dayStartMs(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** `2026-11-21 13:04:05.123000`: what a DateTime64(6, 'UTC') parameter expects. */
export function chTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23).replace("T", " ")}000`;
}

export function addDays(date: string, n: number): string {
  return dateOf(Date.parse(`${date}T00:00:00Z`) + n * DAY_MS);
}

/**
 * The window of `days` ending today. `horizonMs`: the studio's retention horizon (retention/horizon.ts,
 * a day's start); the window then reads nothing before it, so no answer holds an expired row even
 * before the purge deleted it. Readers bound their reads by `from`, never by `dates`.
 */
export function windowOf(days: number, nowMs: number, horizonMs = Number.NEGATIVE_INFINITY): Window {
  const todayStart = dayStartMs(nowMs);
  const firstMs = todayStart - (days - 1) * DAY_MS;
  const dates = Array.from({ length: days }, (_, i) => dateOf(firstMs + i * DAY_MS));
  const fromMs = Math.max(firstMs, horizonMs);
  const toMs = todayStart + DAY_MS;
  return {
    fromMs,
    toMs,
    from: chTime(fromMs),
    to: chTime(toMs),
    dates,
    today: dateOf(todayStart),
    horizonMs,
    retainedFrom: chTime(Math.max(horizonMs, 0)),
  };
}

/** Monday of the ISO week holding `date`. */
/** The UTC days of a window whose days a stored-days read lists: from its first day, before its end's. */
export function windowDays(w: Pick<Window, "from" | "to">): string[] {
  const days: string[] = [];
  for (let d = w.from.slice(0, 10); d < w.to.slice(0, 10); d = addDays(d, 1)) {
    days.push(d);
  }
  return days;
}

export function mondayOf(date: string): string {
  const weekday = (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7;
  return addDays(date, -weekday);
}

export function monthOf(date: string): string {
  return `${date.slice(0, 7)}-01`;
}
