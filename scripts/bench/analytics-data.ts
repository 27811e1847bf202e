// Benchmark data that looks like a game, generated inside ClickHouse with INSERT … SELECT FROM numbers():
// nothing crosses HTTP but the statement, and every value is a hash of the numbers that name it (the
// stream's salt, the player, the day, the session, the event), so a load is the same wherever it runs.
//
// SHAPE (the `game` and `studio` profiles share it; docs/benchmarks.md, "bench:analytics"):
// - Players are numbered in first-seen order: N new players a day over the span (the last `spanDays`
//   days, ending on the anchor day, "today"), and N a day over the HISTORY_DAYS before it, whose returns
//   land in the span (a month's data starts with the players a live game already has).
// - Returns over days: a player is active on its first day and on day k after it with probability
//   min(1, r(k)), independently per day, where r depends on the player's kind: 8 % are core players,
//   r(k) = 0.8·e^(−k/120); the others casual, r(k) = 0.36·k^−0.6·e^(−k/30). Over the population:
//   D1 ≈ 38 %, D7 ≈ 14 %, D30 ≈ 6.6 %, and monthly players ≈ 6.6 × daily players, the studio month's
//   2M / 300k (RETURNS; expected() computes them).
// - Sessions per active player-day: 1 + a geometric draw, at most 4 (mean 1.5: 13.5M sessions a month
//   of 300k players a day). A day's sessions start between 06:00 and 22:00 (skewed to the evening) and
//   1.5 h apart, so the evening's can run past midnight (not past the anchor day: dropped).
// - Devices: each player owns one device (70 %) or two (30 %) for life; a session runs on one of them,
//   so platform, gpu, resolution, device model, os, cpu, memory and engine are the session's. The build
//   is the one released last (one every three days, "1.<n>"), or for a fifth of sessions the one before.
// - Events per session: Pareto from SESSION_EVENTS.min (30) with its mean (37: a studio month's 500M
//   events over 13.5M sessions), capped at SESSION_EVENTS.max (300). Event i is at start + 5 s·i (odd
//   ones jittered within their 5 s): `session_start`, a menu (ui_click, heartbeats) of 1–3 events,
//   then 1–3 maps visited in order (map_load, match_start, …, match_end on each; the maps follow each
//   other in a fixed ring), `perf_heartbeat` on every even event (10 s apart, mem.vram and io.* metrics,
//   no position) and gameplay on the odd ones (player_move, enemy_killed, item_pickup with an item,
//   level_up, ui_click, purchase with a sku) at a position walking a smooth Lissajous path over the
//   map's 1 km × 1 km, the camera's yaw along the path. Every event carries the SDK's per-frame sample:
//   fps from the device (GPU, resolution), the session, the map, a slow spot around the middle of
//   desert_outpost and ±10 % noise; frame_time_ms = 1000/fps; gpu_time_ms (not collected on android),
//   game and render thread times, memory (not collected on switch). Build 1.25 on android is 10 % slower
//   (a regression to find). 0.2 % of players send no player id (their sessions are their players).
// - Density: a load keeps every session's `session_start` and each of its other events when the
//   event's hash falls in [densityFrom, densityTo) (`density`): the profile's sessions at fewer events
//   (a studio month's players and sessions at a fifth of its events keeps a fifth of every session's
//   events past the first), and a later load of [d1, d2) grows the same sessions (nested: no event twice).
//
// PROFILES (BENCH_PROFILE):
// - `game` (default): players follow from the events asked: N = events ÷ the events one new player a
//   day brings at full density; every session keeps all its 30–300 events. At 500M events over 30 days
//   that is the studio month (≈2M monthly players, ≈300k a day, ≈13.5M sessions); any smaller load is
//   that month's ratios scaled. BENCH_PLAYERS=<monthly players> fixes the players instead (the events
//   then set the density; above full density the sessions grow longer).
// - `studio`: 2M monthly players (≈296k a day, ≈13.3M sessions over 30 days), whatever the events. A
//   studio month is 500M events (37 a session); at 100M (its cardinality at a fifth of its events) each
//   session keeps session_start and a fifth of the rest at random: 7.5 events on average (1 to ~60).
//   No load under ~400M events can hold both that cardinality and sessions of 30 or more events
//   (13.3M sessions × 30); this profile keeps the cardinality, `game` the sessions.
// Knobs: BENCH_PROFILE, BENCH_PLAYERS (monthly players: distinct players of the span's last 30 days;
// formerly the players of 90 days), BENCH_SPAN_DAYS (30; formerly a fixed 90), BENCH_CHUNK (events per
// INSERT, about: a statement is a range of players). A bigger size loaded after a smaller one
// (`extraMain`, BENCH_COMPARE_EVENTS) adds events to the same players' sessions. `expected()` gives a
// plan's expected players, player-days, sessions and events (bench:analytics prints them beside the
// loaded ones, for a model's fit); scripts/bench/analytics-shape.ts measures the shape with SQL.
// Cost on this machine (2 cores, load 5–6): generating 1M events alone takes ~5 s at full density and
// ~7 s at the studio profile's fifth (5× the rows made, most dropped); loading through every view ~60 s.
import { clickhouseQuery } from "../local/clickhouse-http.js";
import type { ClickHouseTarget } from "../migrate.js";

// BENCH_CHUNK: about that many events per INSERT (chunks are ranges of players). On a busy machine a
// smaller chunk keeps each statement well inside the HTTP client's 5-minute header timeout.
const CHUNK = Number(process.env.BENCH_CHUNK ?? 1_000_000);

export type ProfileName = "game" | "studio";
export const PROFILE: ProfileName = process.env.BENCH_PROFILE === "studio" ? "studio" : "game";
export const SPAN_DAYS = Number(process.env.BENCH_SPAN_DAYS ?? 30);
/** BENCH_PLAYERS: the monthly players to generate (otherwise the profile's). */
export const PLAYERS = process.env.BENCH_PLAYERS ? Number(process.env.BENCH_PLAYERS) : undefined;

/** The studio month: 2M monthly players; its daily players and sessions follow (≈300k, ≈13.5M). */
export const STUDIO_MONTHLY_PLAYERS = 2_000_000;
/** Days of players before the span whose returns land in it. */
export const HISTORY_DAYS = 180;
/** Return probabilities by kind (see the header). */
export const RETURNS = {
  coreShare: 0.08,
  coreA: 0.8,
  coreTau: 120,
  casualD1: 0.36,
  casualB: 0.6,
  casualTau: 30,
};
/** Sessions per active player-day: 1 + geometric, capped. */
export const SESSIONS_PER_DAY = { mean: 1.5, max: 4 };
/** Events of a session at full density. */
export const SESSION_EVENTS = { min: 30, max: 300, mean: 37 };
const ANON_SHARE = 0.002;
const MAPS = ["maps/desert_outpost", "maps/frozen_harbor", "maps/old_town"];

/** One day's return probability for a player of that kind, k days after its first (k ≥ 1). */
function returnRate(core: boolean, k: number): number {
  const r = RETURNS;
  return Math.min(
    1,
    core ? r.coreA * Math.exp(-k / r.coreTau) : r.casualD1 * k ** -r.casualB * Math.exp(-k / r.casualTau),
  );
}

/** q of the capped geometric draw whose mean is SESSIONS_PER_DAY.mean, and that mean. */
function sessionsDraw(): { q: number; mean: number } {
  const meanOf = (q: number) => {
    let m = 0;
    for (let j = 0; j < SESSIONS_PER_DAY.max; j++) {
      m += q ** j;
    }
    return m;
  };
  let lo = 0;
  let hi = 0.99;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (meanOf(mid) < SESSIONS_PER_DAY.mean) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return { q: lo, mean: meanOf(lo) };
}

/** E[min(max, floor(min / u^(1/alpha)))] for u uniform on (0, 1]. */
function paretoMean(min: number, max: number, alpha: number): number {
  // Sum over lengths: P(L ≥ l) = (min / l)^alpha for min ≤ l ≤ max.
  let m = min;
  for (let l = min + 1; l <= max; l++) {
    m += (min / l) ** alpha;
  }
  return m;
}

/** The Pareto exponent giving SESSION_EVENTS.mean (scaled by `factor`: longer sessions). */
function sessionAlpha(factor: number): { alpha: number; mean: number; min: number; max: number } {
  const min = Math.round(SESSION_EVENTS.min * factor);
  const max = Math.round(SESSION_EVENTS.max * factor);
  const target = SESSION_EVENTS.mean * factor;
  let lo = 1.01;
  let hi = 50;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (paretoMean(min, max, mid) > target) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return { alpha: lo, mean: paretoMean(min, max, lo), min, max };
}

/** Expected player-days in span day d (0 … span−1) of one player first seen on day f, by kind. */
function activeProbability(core: boolean, f: number, d: number): number {
  return d < f ? 0 : d === f ? 1 : returnRate(core, d - f);
}

/** A cohort's expected active days in the span, per player (both kinds). */
function cohortActiveDays(f: number, span: number): number {
  let sum = 0;
  for (let d = Math.max(0, f); d < span; d++) {
    sum +=
      RETURNS.coreShare * activeProbability(true, f, d) +
      (1 - RETURNS.coreShare) * activeProbability(false, f, d);
  }
  return sum;
}

/** Per new player a day: expected distinct players of the span's last min(30, span) days. */
function monthlyPerNewPlayer(span: number): number {
  const from = Math.max(0, span - 30);
  let sum = 0;
  for (let f = -HISTORY_DAYS; f < span; f++) {
    for (const core of [true, false]) {
      let none = 1;
      for (let d = Math.max(from, f); d < span; d++) {
        none *= 1 - activeProbability(core, f, d);
      }
      sum += (core ? RETURNS.coreShare : 1 - RETURNS.coreShare) * (1 - none);
    }
  }
  return sum;
}

/** First day of player p (relative to the span's first day), as the SQL computes it. */
function firstDay(p: number, perDay: number, span: number): number {
  const inSpan = perDay * span;
  return p < inSpan ? Math.floor(p / perDay) : -1 - Math.floor((p - inSpan) / perDay);
}

export type LoadPlan = {
  mainProject: string;
  mainEvents: number;
  otherProjects: string[];
  otherEvents: number;
  /**
   * Monthly players of the main project (distinct players of the span's last 30 days); by default the
   * profile's (`studio`: 2M; `game`: what `scaleEvents` events bring at full density).
   */
  players?: number;
  /** Events the main project's players are sized for (`game`); by default mainEvents. */
  scaleEvents?: number;
  profile?: ProfileName;
  /** Days of data, ending on the anchor day (30). */
  spanDays?: number;
  /**
   * The day the data ends on ("today" of the load), YYYY-MM-DD: the day of the load by default. A load
   * kept for later runs across midnight names the day it will be measured on.
   */
  anchor?: string;
};

/** One generated population: its players go to `projects` round robin. */
type Stream = {
  salt: number;
  projects: string[];
  /** New players a day. */
  perDay: number;
  span: number;
  /** Events kept of each session past its first: [from, to). */
  densityFrom: number;
  densityTo: number;
  /** Session length factor (> 1 only where the events asked exceed full density). */
  lengthFactor: number;
};

/** Full-density events one new player a day brings over the span (all cohorts, both kinds). */
function eventsPerNewPlayer(span: number, lengthFactor = 1): number {
  let days = 0;
  for (let f = -HISTORY_DAYS; f < span; f++) {
    days += cohortActiveDays(f, span);
  }
  return days * sessionsDraw().mean * sessionAlpha(lengthFactor).mean;
}

/** The events kept per session at a density, of sessions whose mean full length is `mean`. */
const keptPerSession = (mean: number, density: number) => 1 + (mean - 1) * density;

/**
 * A population sized for `players` monthly players (or for `scaleEvents` at full density), loaded at
 * the density that gives `events` events (from `fromEvents`: a growth of the same sessions).
 */
function streamOf(
  salt: number,
  projects: string[],
  span: number,
  events: number,
  opts: { players?: number; scaleEvents: number; fromEvents?: number },
): Stream {
  const monthly = monthlyPerNewPlayer(span);
  const full = eventsPerNewPlayer(span);
  const exact = opts.players !== undefined ? opts.players / monthly : opts.scaleEvents / full;
  const perDay = Math.max(1, Math.round(exact));
  const length = sessionAlpha(1).mean;
  // Sized by events: the density is the events' share of `scaleEvents` (1: every session whole), not
  // of what the rounded players bring; sized by players: of what they bring.
  const sessions = (full / length) * (opts.players !== undefined ? perDay : exact);
  const densityAt = (n: number) => Math.max(0, (n / sessions - 1) / (length - 1));
  const to = densityAt(events);
  if (to <= 1) {
    return {
      salt,
      projects,
      perDay,
      span,
      densityFrom: opts.fromEvents ? densityAt(opts.fromEvents) : 0,
      densityTo: to,
      lengthFactor: 1,
    };
  }
  if (opts.fromEvents) {
    throw new Error(`${events} events exceed the full density of ${Math.round(sessions * length)}`);
  }
  // More events than these players' sessions hold: longer sessions, all events kept.
  return {
    salt,
    projects,
    perDay,
    span,
    densityFrom: 0,
    densityTo: 1,
    lengthFactor: events / sessions / length,
  };
}

/** The streams a plan loads (the main project's, the others'), or its growth by `extraMain` events. */
function streamsOf(plan: LoadPlan, extraMain: number, skipPlan: boolean): Stream[] {
  const span = plan.spanDays ?? SPAN_DAYS;
  const profile = plan.profile ?? PROFILE;
  const players = plan.players ?? (profile === "studio" ? STUDIO_MONTHLY_PLAYERS : undefined);
  const scaleEvents = plan.scaleEvents ?? plan.mainEvents;
  const main = [plan.mainProject];
  const streams: Stream[] = [];
  if (!skipPlan) {
    if (plan.mainEvents > 0) {
      streams.push(streamOf(1, main, span, plan.mainEvents, { players, scaleEvents }));
    }
    if (plan.otherEvents > 0 && plan.otherProjects.length > 0) {
      // Sized by their events; by `players` only where they are the whole load (bench:alerts).
      const others = streamOf(2, plan.otherProjects, span, plan.otherEvents, {
        players: plan.mainEvents === 0 ? players : undefined,
        scaleEvents: plan.otherEvents,
      });
      streams.push(others);
    }
  }
  if (extraMain > 0) {
    // The main project's sessions grow: the same players and sessions, more of each session's events.
    streams.push(
      streamOf(1, main, span, plan.mainEvents + extraMain, {
        players,
        scaleEvents,
        fromEvents: plan.mainEvents,
      }),
    );
  }
  return streams;
}

/** Chunks of a stream: player ranges of about CHUNK expected events each. */
function chunksOf(s: Stream, chunk: number): Array<{ from: number; count: number }> {
  const alpha = sessionAlpha(s.lengthFactor);
  const perSessionFrom = s.densityFrom === 0 ? 0 : keptPerSession(alpha.mean, s.densityFrom);
  const perSession = keptPerSession(alpha.mean, s.densityTo) - perSessionFrom;
  const perActiveDay = sessionsDraw().mean * perSession;
  const total = s.perDay * (s.span + HISTORY_DAYS);
  const out: Array<{ from: number; count: number }> = [];
  let from = 0;
  let events = 0;
  // Cohort by cohort (players of a first day share an expectation); at most 2M players a statement.
  const maxPlayers = 2_000_000;
  for (let p = 0; p < total; ) {
    const f = firstDay(p, s.perDay, s.span);
    const cohortEnd = f >= 0 ? (f + 1) * s.perDay : s.perDay * s.span + -f * s.perDay;
    const perPlayer = Math.max(1e-9, cohortActiveDays(f, s.span) * perActiveDay);
    const room = Math.max(1, Math.ceil((chunk - events) / perPlayer));
    const take = Math.min(cohortEnd - p, room, maxPlayers - (p - from));
    p += take;
    events += take * perPlayer;
    if (events >= chunk || p - from >= maxPlayers || p === total) {
      out.push({ from, count: p - from });
      from = p;
      events = 0;
    }
  }
  return out;
}

/** A plan's main project, expected: players count those without an id once per session. */
export type Expected = {
  profile: ProfileName;
  spanDays: number;
  newPlayersPerDay: number;
  monthlyPlayers: number;
  dailyPlayers: number;
  playerDays: number;
  sessions: number;
  events: number;
  eventsPerSession: number;
  sessionEvents: { min: number; max: number };
  density: number;
  d1: number;
  d7: number;
  d30: number;
};

/** What the main project of a plan holds, expected (players with an id; the span's days). */
export function expected(plan: LoadPlan): Expected {
  const [s] = streamsOf(plan, 0, false);
  if (!s || s.projects[0] !== plan.mainProject) {
    throw new Error("the plan loads no main-project events");
  }
  const span = s.span;
  const alpha = sessionAlpha(s.lengthFactor);
  let playerDays = 0;
  for (let f = -HISTORY_DAYS; f < span; f++) {
    playerDays += cohortActiveDays(f, span) * s.perDay;
  }
  const sessions = playerDays * sessionsDraw().mean;
  const perSession = keptPerSession(alpha.mean, s.densityTo);
  // Players as the events count them: a player without an id is one per session.
  const withAnonymous = (players: number, sessionsOf: number) =>
    Math.round(players * (1 - ANON_SHARE) + sessionsOf * ANON_SHARE);
  const monthly = monthlyPerNewPlayer(span) * s.perDay;
  const population = (k: number) =>
    RETURNS.coreShare * returnRate(true, k) + (1 - RETURNS.coreShare) * returnRate(false, k);
  return {
    profile: plan.profile ?? PROFILE,
    spanDays: span,
    newPlayersPerDay: s.perDay,
    monthlyPlayers: withAnonymous(monthly, (sessions * Math.min(30, span)) / span),
    dailyPlayers: withAnonymous(playerDays / span, sessions / span),
    playerDays: Math.round(playerDays),
    sessions: Math.round(sessions),
    events: Math.round(sessions * perSession),
    eventsPerSession: Math.round(perSession * 10) / 10,
    // Bounds: below full density a session keeps session_start and a binomial share of the rest.
    sessionEvents: { min: s.densityTo < 1 ? 1 : alpha.min, max: alpha.max },
    density: Math.round(s.densityTo * 1000) / 1000,
    d1: Math.round(population(1) * 1000) / 1000,
    d7: Math.round(population(7) * 1000) / 1000,
    d30: Math.round(population(30) * 1000) / 1000,
  };
}

/** A uniform [0, 1) of a hash: `u(…)` in the statement. */
const U = (args: string) => `(cityHash64({salt:UInt64}, ${args}) / 18446744073709551616.0)`;

const COLUMNS = `project_id, timestamp, event_name, session_id, player_id, build_id, map_id, platform,
   resolution, gpu, cpu, os_version, device_model, memory_total_mb, build_config, storage, engine_version,
   source, position_x, position_y, position_z, camera_yaw, camera_pitch, fps, frame_time_ms,
   memory_used_bytes, gpu_time_ms, game_thread_ms, render_thread_ms, attributes, metrics, batch_id,
   event_index, received_at`;

const SELECT = `
SELECT
  toUUID({projects:Array(String)}[1 + p % length({projects:Array(String)})]) AS project_id,
  ts AS timestamp, event_name, session_id,
  if(${U("p, 3")} < ${ANON_SHARE}, '', concat('player-', toString(p))) AS player_id,
  build_id, map_id, platform, resolution, gpu, cpu, os_version, device_model, memory_total_mb,
  'release' AS build_config, storage, engine_version,
  if(event_name IN ('session_start', 'perf_heartbeat'), 'automated', 'player') AS source,
  if(positioned, toFloat32(px), NULL) AS position_x,
  if(positioned, toFloat32(py), NULL) AS position_y,
  if(positioned, toFloat32(20 + 8 * sin(px / 90) * cos(py / 70)), NULL) AS position_z,
  if(positioned, toFloat32(round(yaw, 2) % 360), NULL) AS camera_yaw,
  if(positioned, toFloat32(round(-10 + 20 * ${U("sh, i, 20")}, 2)), NULL) AS camera_pitch,
  toFloat32(fps_v) AS fps,
  toFloat32(1000 / fps_v) AS frame_time_ms,
  if(platform = 'switch', NULL, toUInt64((mem_mb + i * 0.5 + 64 * ${U("sh, i, 21")}) * 1048576)) AS memory_used_bytes,
  if(platform = 'android', NULL, toFloat32(1000 / fps_v * (0.6 + 0.3 * ${U("sh, i, 22")}))) AS gpu_time_ms,
  toFloat32(1000 / fps_v * (0.4 + 0.4 * ${U("sh, i, 23")})) AS game_thread_ms,
  toFloat32(1000 / fps_v * (0.5 + 0.3 * ${U("sh, i, 24")})) AS render_thread_ms,
  multiIf(
    event_name = 'item_pickup', map('item', concat('item-', toString(cityHash64(sh, i, 25) % 40))),
    event_name = 'purchase', map('sku', concat('sku-', toString(cityHash64(sh, i, 26) % 12))),
    event_name = 'map_load', map('map_name', map_id),
    map()) AS attributes,
  multiIf(
    event_name = 'perf_heartbeat', map('mem.vram', toFloat64(vram_mb + 32 * ${U("sh, i, 27")}) * 1048576,
      'io.read_bytes', toFloat64(cityHash64(sh, i, 28) % 2000000), 'io.read_time_ms',
      round(${U("sh, i, 29")} * 40, 2), 'io.read_ops', toFloat64(cityHash64(sh, i, 30) % 40)),
    event_name = 'map_load', map('load_time_ms', toFloat64(800 + cityHash64(sh, i, 31) % 6000)),
    map()) AS metrics,
  concat('bench-', toString(sh), '-', toString(intDiv(i, 100))) AS batch_id,
  toUInt32(i % 100) AS event_index,
  ts AS received_at
FROM (
  SELECT *,
    m0 + intDiv(seg * (len - m0) + n_maps - 1, n_maps) AS seg_start,
    m0 + intDiv((seg + 1) * (len - m0) + n_maps - 1, n_maps) - 1 AS seg_end,
    i - seg_start AS pos,
    multiIf(
      i = 0, 'session_start',
      i < m0, if(i % 2 = 0, 'perf_heartbeat', 'ui_click'),
      pos = 0, 'map_load',
      pos = 1, 'match_start',
      i = seg_end, 'match_end',
      i % 2 = 0, 'perf_heartbeat',
      ['player_move', 'player_move', 'player_move', 'player_move', 'player_move', 'player_move', 'player_move',
       'player_move', 'player_move', 'enemy_killed', 'enemy_killed', 'enemy_killed', 'enemy_killed',
       'item_pickup', 'item_pickup', 'item_pickup', 'level_up', 'level_up', 'ui_click', 'purchase'][
        1 + cityHash64(sh, i, 12) % 20]) AS event_name,
    if(i < m0, '', {maps:Array(String)}[1 + (first_map + seg) % 3]) AS map_id,
    i >= m0 AND event_name NOT IN ('map_load', 'perf_heartbeat') AS positioned,
    -- The walk: a Lissajous path of the session's segment over the 1 km map, the camera along it.
    pos * 0.04 AS tau,
    480 * sin(ax * tau + phx) AS px,
    480 * sin(ay * tau + phy) AS py,
    (degrees(atan2(480 * ay * cos(ay * tau + phy), 480 * ax * cos(ax * tau + phx))) + 360) AS yaw,
    fps_session
      * [1.0, 0.85, 0.92][1 + (first_map + seg) % 3]
      * if(map_id = 'maps/desert_outpost' AND px * px + py * py < 3600, 0.7, 1.0)
      * (0.9 + 0.2 * ${U("sh, i, 13")}) AS fps_v
  FROM (
    SELECT *, arrayJoin(range(toUInt64(len))) AS i,
      toDateTime64(day_start, 6, 'UTC') + toIntervalMicrosecond(start_us + i * 5000000
        + if(i % 2 = 1, cityHash64(sh, i, 14) % 5000000, 0)) AS ts,
      if(i < m0, 0, intDiv((i - m0) * n_maps, len - m0)) AS seg,
      ${U("sh, i, 15")} AS keep_u
    FROM (
      SELECT *,
        cityHash64({salt:UInt64}, p, d, j) AS sh,
        toDate({anchor:DateTime('UTC')}) - toIntervalDay({span:UInt32} - 1 - d) AS day,
        toDateTime(day, 'UTC') AS day_start,
        toUInt64((6 * 3600 + floor(sqrt(${U("sh, 1")}) * 16 * 3600) + j * 5400) * 1000000
          + cityHash64(sh, 2) % 1000000) AS start_us,
        toUInt32(least({lmax:Float64}, floor({lmin:Float64} / pow(1 - ${U("sh, 3")}, 1 / {alpha:Float64})))) AS len,
        1 + cityHash64(sh, 4) % 3 AS m0,
        multiIf(${U("sh, 5")} < 0.5, 1, ${U("sh, 5")} < 0.85, 2, 3) AS n_maps,
        cityHash64(sh, 6) % 3 AS first_map,
        0.5 + ${U("sh, 7")} AS ax, 0.5 + ${U("sh, 8")} AS ay,
        6.2832 * ${U("sh, 9")} AS phx, 6.2832 * ${U("sh, 10")} AS phy,
        -- The session's device: one of the player's one or two.
        cityHash64({salt:UInt64}, p, if(${U("p, 4")} < 0.3, cityHash64(sh, 11) % 2, 0), 5) AS dh,
        ['windows', 'windows', 'windows', 'windows', 'windows', 'windows', 'windows', 'windows', 'windows',
         'windows', 'ps5', 'ps5', 'ps5', 'xbox', 'xbox', 'switch', 'switch', 'android', 'android',
         'android'][1 + dh % 20] AS platform,
        intDiv(dh, 20) % 12 AS dv,
        multiIf(platform = 'windows', ['RTX 3060', 'RTX 4070', 'RX 6700', 'GTX 1660'][1 + dv % 4],
          platform = 'ps5', 'AMD Oberon', platform = 'xbox', 'AMD Scarlett',
          platform = 'switch', 'NVIDIA Tegra X1', ['Adreno 740', 'Mali-G710'][1 + dv % 2]) AS gpu,
        multiIf(platform = 'windows', ['1920x1080', '2560x1440', '3840x2160'][1 + intDiv(dv, 4) % 3],
          platform = 'switch', '1280x720', platform = 'android', '2400x1080', '3840x2160') AS resolution,
        multiIf(platform = 'windows', ['Desktop', 'Laptop'][1 + dv % 2], platform = 'ps5', 'PS5',
          platform = 'xbox', 'Xbox Series X', platform = 'switch', 'Switch',
          ['Pixel 8', 'Galaxy S23', 'OnePlus 11'][1 + dv % 3]) AS device_model,
        multiIf(platform = 'windows', ['Windows 11', 'Windows 10'][1 + intDiv(dv, 2) % 2],
          platform = 'ps5', 'PS5 9.00', platform = 'xbox', 'Xbox OS 10.0', platform = 'switch', 'Switch 17.0',
          ['Android 14', 'Android 13'][1 + intDiv(dv, 3) % 2]) AS os_version,
        multiIf(platform = 'windows', ['Ryzen 7 5800X', 'Core i7-12700K', 'Core i5-12400'][1 + intDiv(dv, 3) % 3],
          platform IN ('ps5', 'xbox'), 'AMD Zen 2', platform = 'switch', 'ARM Cortex-A57',
          'Snapdragon 8 Gen 2') AS cpu,
        toUInt32(multiIf(platform = 'windows', [16384, 32768][1 + intDiv(dv, 6) % 2],
          platform IN ('ps5', 'xbox'), 16384, platform = 'switch', 4096, [8192, 12288][1 + dv % 2])) AS memory_total_mb,
        if(platform IN ('windows', 'ps5', 'xbox'), 'nvme', 'flash') AS storage,
        ['6000.0.23f1', '5.4.4', '4.3.stable'][1 + intDiv(dh, 240) % 3] AS engine_version,
        1500 + intDiv(dh, 720) % 3000 AS mem_mb,
        1024 + intDiv(dh, 720) % 6000 AS vram_mb,
        intDiv(90 - toInt64({span:UInt32} - 1 - d), 3) - if(${U("sh, 16")} < 0.2, 1, 0) AS build_n,
        concat('1.', toString(build_n)) AS build_id,
        -- fps of the session: the GPU, the resolution, the build (1.25 on android regressed), ±15 %.
        multiIf(gpu = 'RTX 4070', 150, gpu = 'RTX 3060', 100, gpu = 'RX 6700', 105, gpu = 'GTX 1660', 70,
          platform IN ('ps5', 'xbox'), 60, platform = 'switch', 32, 55)
          * multiIf(resolution = '2560x1440', 0.75, resolution = '3840x2160' AND platform = 'windows', 0.5, 1.0)
          * if(platform = 'android' AND build_id = '1.25', 0.9, 1.0)
          * (0.85 + 0.3 * ${U("sh, 17")}) AS fps_session,
        -- The session id an SDK mints: a UUIDv7 (its start's milliseconds first).
        leftPad(lower(hex(intDiv(toUInt64(toUnixTimestamp(day_start)) * 1000000 + start_us, 1000))), 12, '0') AS t_hex,
        leftPad(lower(hex(sh)), 16, '0') AS r_hex,
        leftPad(lower(hex(cityHash64(sh, 18))), 16, '0') AS r2_hex,
        concat(substring(t_hex, 1, 8), '-', substring(t_hex, 9, 4), '-7', substring(r_hex, 1, 3), '-',
          ['8', '9', 'a', 'b'][1 + sh % 4], substring(r_hex, 4, 3), '-', substring(r2_hex, 1, 12)) AS session_id
      FROM (
        SELECT p, d, arrayJoin(range(toUInt64(1 + least(toFloat64({maxSessions:UInt32} - 1),
          floor(log(1 - ${U("p, d, 6")}) / log({q:Float64})))))) AS j
        FROM (
          SELECT number AS p,
            toInt64(if(p < {inSpan:UInt64}, intDiv(p, {perDay:UInt64}), -1 - intDiv(p - {inSpan:UInt64}, {perDay:UInt64}))) AS f,
            ${U("p, 1")} < {coreShare:Float64} AS core,
            arrayJoin(arrayFilter(dd -> toInt64(dd) >= f AND (toInt64(dd) = f OR ${U("p, dd, 2")} < if(core,
              {coreA:Float64} * exp(-(toInt64(dd) - f) / {coreTau:Float64}),
              {casualD1:Float64} * pow(toInt64(dd) - f, -{casualB:Float64}) * exp(-(toInt64(dd) - f) / {casualTau:Float64}))),
              range({span:UInt32}))) AS d
          FROM numbers({from:UInt64}, {count:UInt64})
        )
      )
    )
  )
  WHERE (i = 0 AND {densityFrom:Float64} = 0)
    OR (i > 0 AND keep_u >= {densityFrom:Float64} AND keep_u < {densityTo:Float64})
)
WHERE ts < toDateTime64(toDate({anchor:DateTime('UTC')}) + 1, 6, 'UTC')`;

const INSERT = `INSERT INTO telemetry.events (${COLUMNS}) ${SELECT}`;
/** The same rows generated and hashed, not inserted: what generation alone costs. */
const DRY = `SELECT count(), groupBitXor(cityHash64(${COLUMNS})) FROM (${SELECT}) FORMAT TSV`;

/** The statement's parameters for one chunk of a stream. */
function chunkParams(s: Stream, anchor: string, from: number, count: number): Record<string, string> {
  const alpha = sessionAlpha(s.lengthFactor);
  const r = RETURNS;
  return {
    salt: String(s.salt),
    projects: `[${s.projects.map((p) => `'${p}'`).join(",")}]`,
    maps: `[${MAPS.map((m) => `'${m}'`).join(",")}]`,
    anchor: `${anchor} 00:00:00`,
    span: String(s.span),
    perDay: String(s.perDay),
    inSpan: String(s.perDay * s.span),
    coreShare: String(r.coreShare),
    coreA: String(r.coreA),
    coreTau: String(r.coreTau),
    casualD1: String(r.casualD1),
    casualB: String(r.casualB),
    casualTau: String(r.casualTau),
    maxSessions: String(SESSIONS_PER_DAY.max),
    q: String(sessionsDraw().q),
    lmin: String(alpha.min),
    lmax: String(alpha.max),
    alpha: String(alpha.alpha),
    densityFrom: String(s.densityFrom),
    densityTo: String(s.densityTo),
    from: String(from),
    count: String(count),
  };
}

/** How many statements a load of the plan takes (what `resumeChunk` counts). */
export function chunkCount(plan: LoadPlan, extraMain = 0, skipPlan = false): number {
  return streamsOf(plan, extraMain, skipPlan).reduce((n, s) => n + chunksOf(s, CHUNK).length, 0);
}

/**
 * Loads the plan statement by statement (chunks of players of about BENCH_CHUNK events); returns the
 * seconds it took. `extraMain` more events of the main project are loaded after the plan's: the same
 * sessions grown denser (nested: a 20M load grown by 80M is the 100M load); `skipPlan` loads only those
 * (the plan is already in). `resumeChunk` starts at that statement (a load into a kept dir that stopped
 * midway: `onChunk` reports each one done). `beforeChunk` runs before each statement. `dry` generates
 * the rows without inserting them.
 */
export async function loadBenchData(
  target: ClickHouseTarget,
  plan: LoadPlan,
  log: (s: string) => void,
  extra: {
    extraMain: number;
    skipPlan: boolean;
    resumeChunk?: number;
    onChunk?: (done: number) => Promise<void> | void;
    beforeChunk?: (index: number) => Promise<void> | void;
    /** Generate and hash the rows without inserting them (the generator's own cost). */
    dry?: boolean;
    /** Stop before that statement. */
    untilChunk?: number;
  } = { extraMain: 0, skipPlan: false },
) {
  const started = Date.now();
  const anchor = plan.anchor ?? new Date().toISOString().slice(0, 10);
  const chunks = streamsOf(plan, extra.extraMain, extra.skipPlan).flatMap((s) =>
    chunksOf(s, CHUNK).map((c) => ({ s, ...c })),
  );
  const until = Math.min(chunks.length, extra.untilChunk ?? chunks.length);
  for (let n = extra.resumeChunk ?? 0; n < until; n++) {
    const c = chunks[n] as (typeof chunks)[number];
    await extra.beforeChunk?.(n);
    await clickhouseQuery(
      target.url,
      { user: target.user, password: target.password },
      extra.dry ? DRY : INSERT,
      chunkParams(c.s, anchor, c.from, c.count),
    );
    await extra.onChunk?.(n + 1);
    log(`loaded statement ${n + 1} / ${chunks.length} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  return (Date.now() - started) / 1000;
}
