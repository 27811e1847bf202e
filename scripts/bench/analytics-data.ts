// Benchmark data generated inside ClickHouse with INSERT … SELECT FROM numbers(): nothing crosses
// HTTP but the statement. Distributions: players skewed (a few play a lot), each player starting on
// some day of the last 90 and mostly returning within a month, sessions per player and day, event
// names weighted as a game sends them, builds released every three days, maps with positions,
// platforms, engines, cameras, and performance samples on about half the events (NULL where an SDK
// would have sent its "not collected" zero), in the columns of the SDK wire layout (numbers at
// DEFAULT_PLAYERS below).
import { clickhouseQuery } from "../local/clickhouse-http.js";
import type { ClickHouseTarget } from "../migrate.js";

// BENCH_CHUNK: rows per INSERT. On a busy machine a smaller chunk keeps each statement well inside the
// HTTP client's 5-minute header timeout.
const CHUNK = Number(process.env.BENCH_CHUNK ?? 1_000_000);
// 10M events over 90 days from 50,000 players: a few hundred events per player, one or two sessions
// per player and day, positions on a 1 km × 1 km map. BENCH_PLAYERS (analytics.ts) sets another count:
// the distinct-count designs cost what the players and player-days cost, not what the events cost.
export const DEFAULT_PLAYERS = 50_000;

const INSERT = `
INSERT INTO telemetry.events
  (project_id, timestamp, event_name, session_id, player_id, build_id, map_id, platform, resolution, gpu,
   engine_version, source, position_x, position_y, position_z, camera_yaw, camera_pitch, fps, frame_time_ms,
   memory_used_bytes, gpu_time_ms, game_thread_ms, render_thread_ms, attributes, metrics,
   batch_id, event_index, received_at)
SELECT
  project_id, ts, event_name,
  concat('s-', toString(pl), '-', toString(days_ago), '-', toString(h3 % 2)) AS session_id,
  if(pl % 10 = 0, '', concat('player-', toString(pl))) AS player_id,
  concat('1.', toString(intDiv(90 - days_ago, 3))) AS build_id,
  ['maps/desert_outpost', 'maps/frozen_harbor', 'maps/old_town', ''][1 + h2 % 4] AS map_id,
  ['windows', 'windows', 'ps5', 'xbox', 'switch', 'android'][1 + h3 % 6] AS platform,
  ['1920x1080', '2560x1440', '3840x2160'][1 + h1 % 3] AS resolution,
  ['RTX 3060', 'RTX 4070', 'RX 6700', 'Adreno 740'][1 + pl % 4] AS gpu,
  ['6000.0.23f1', '5.4.4', '4.3.stable'][1 + pl % 3] AS engine_version,
  if(event_name IN ('frame_sample', 'session_start'), 'automated', 'player') AS source,
  if(map_id = '', NULL, toFloat32((h2 % 100000) / 100.0 - 500)) AS position_x,
  if(map_id = '', NULL, toFloat32((h3 % 100000) / 100.0 - 500)) AS position_y,
  if(map_id = '', NULL, toFloat32((h1 % 5000) / 100.0)) AS position_z,
  if(map_id = '', NULL, toFloat32((h1 % 3600) / 10.0)) AS camera_yaw,
  if(map_id = '', NULL, toFloat32((h2 % 1800) / 10.0 - 90)) AS camera_pitch,
  if(perf, toFloat32(20 + (h1 % 1200) / 10.0), NULL) AS fps,
  if(perf, toFloat32(1000 / (20 + (h1 % 1200) / 10.0)), NULL) AS frame_time_ms,
  if(perf AND h2 % 3 > 0, toUInt64((1500 + h3 % 6000) * 1048576 + h1 % 1048576), NULL) AS memory_used_bytes,
  if(perf AND h3 % 4 > 0, toFloat32((h2 % 300) / 10.0), NULL) AS gpu_time_ms,
  if(perf, toFloat32(1 + (h3 % 200) / 10.0), NULL) AS game_thread_ms,
  if(perf, toFloat32(1 + (h1 % 150) / 10.0), NULL) AS render_thread_ms,
  if(event_name = 'item_pickup', map('item', concat('item-', toString(h3 % 40))), map()) AS attributes,
  if(event_name = 'frame_sample', map('mem.vram', toFloat64(h2 % 4096) * 1048576), map()) AS metrics,
  concat('bench-', toString(intDiv(number, 1000))) AS batch_id,
  toUInt32(number % 1000) AS event_index,
  ts AS received_at
FROM (
  SELECT number,
    cityHash64(number, 1) AS h1, cityHash64(number, 2) AS h2, cityHash64(number, 3) AS h3,
    {main:UUID} AS main_project,
    -- Numbers past the first mainEvents + otherEvents belong to the main project again: a second load
    -- grows it (BENCH_COMPARE_EVENTS in analytics.ts) with the same distributions.
    if(number < {mainEvents:UInt64} OR number >= {mainEvents:UInt64} + {otherEvents:UInt64}, main_project,
       toUUID({others:Array(String)}[1 + number % length({others:Array(String)})])) AS project_id,
    toUInt64(pow((h1 % 1000003) / 1000003, 2) * {players:UInt64}) AS pl,
    cityHash64(pl) % 90 AS first_ago,
    toUInt64(if(h2 % 100 < 55, first_ago, greatest(0, toInt64(first_ago) - toInt64(h2 % 31)))) AS days_ago,
    toDateTime64(toStartOfDay({anchor:DateTime('UTC')}) - toIntervalDay(days_ago), 6, 'UTC')
      + toIntervalSecond(h3 % 86400) + toIntervalMicrosecond(h1 % 1000000) AS ts,
    ['player_move', 'player_move', 'frame_sample', 'frame_sample', 'frame_sample', 'match_start',
     'level_up', 'match_end', 'item_pickup', 'enemy_killed', 'ui_click', 'purchase'][1 + h2 % 12] AS event_name,
    event_name IN ('frame_sample', 'player_move', 'enemy_killed') AS perf
  FROM numbers({offset:UInt64}, {count:UInt64})
)`;

export type LoadPlan = {
  mainProject: string;
  mainEvents: number;
  otherProjects: string[];
  otherEvents: number;
  /** Players of every project (ids are shared between projects, as the numbers() rows are). */
  players: number;
  /**
   * The day the data ends on ("today" of the load), YYYY-MM-DD: the day of the load by default. A load
   * kept for later runs across midnight names the day it will be measured on.
   */
  anchor?: string;
};

/**
 * Loads the plan in chunks of a million rows; returns the seconds it took. `extraMain` more events of
 * the main project are loaded after the plan's; `skipPlan` loads only those (the plan is already in).
 * `resumeAt` starts at that row of the plan instead (a load into a kept dir that stopped midway: the
 * rows are numbered, so the rows already in are the first ones).
 */
export async function loadBenchData(
  target: ClickHouseTarget,
  plan: LoadPlan,
  log: (s: string) => void,
  extra: { extraMain: number; skipPlan: boolean; resumeAt?: number } = { extraMain: 0, skipPlan: false },
) {
  const started = Date.now();
  const planned = plan.mainEvents + plan.otherEvents;
  const total = planned + extra.extraMain;
  for (let offset = extra.resumeAt ?? (extra.skipPlan ? planned : 0); offset < total; offset += CHUNK) {
    await clickhouseQuery(target.url, { user: target.user, password: target.password }, INSERT, {
      main: plan.mainProject,
      mainEvents: String(plan.mainEvents),
      otherEvents: String(plan.otherEvents),
      others: `[${plan.otherProjects.map((p) => `'${p}'`).join(",")}]`,
      players: String(plan.players),
      anchor: `${plan.anchor ?? new Date().toISOString().slice(0, 10)} 00:00:00`,
      offset: String(offset),
      count: String(Math.min(CHUNK, total - offset)),
    });
    log(`loaded ${Math.min(total, offset + CHUNK).toLocaleString("en")} / ${total.toLocaleString("en")}`);
  }
  return (Date.now() - started) / 1000;
}
