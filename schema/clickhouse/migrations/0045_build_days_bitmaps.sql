-- The builds list's session_count and player_count exact: build_days' session and player sketches
-- (uniqCombined64 of the id strings, 0009_builds_rollups.sql, within 1 % of the exact count) become
-- bitmaps of the dense numbers (0023_actor_numbers.sql), as compare_rollup's did in 0034. A build's
-- sessions and players over the window are the union of its days' bitmaps: exact, since a session or a
-- player is one number. Number 0 (a row stored before numbering) is left out, as in every bitmap rollup;
-- the number backfill rebuilds this table's days with the others (workers/api/erasure/rollups.ts,
-- BITMAP_ROLLUPS). The verdicts' choice of builds with enough sessions (VERDICT_MIN_SESSIONS) counts them
-- exactly too.
--
-- Cost at ingest: the view put two strings per event through a 64-bit hash and a sketch; it now adds two
-- UInt32 to a bitmap. The erasure's rebuild of a build's days (its staged keys) reads those two numbers
-- instead of the two id strings of every event of the build's days.
--
-- Could a shared table answer? compare_rollup's `build` level holds a build's day's sessions and players as
-- bitmaps, but over the events carrying a compared metric (frame time, memory, GPU time, I/O, load time,
-- VRAM, null or not), while a build here is counted over its performance-bearing events (fps, frame time,
-- memory or GPU time above 0, docs/analytics.md): the two differ on an event with fps alone or with zeros,
-- and event_count is a contract field. This changes two column types of the table the builds pages
-- already read and adds no table and no view.
--
-- The columns keep their names and place, with the new type; the table is emptied and refilled from the
-- events in this file. Like 0034, apply it with the events queue's delivery paused (docs/operations.md):
-- an insert committed between the views' drop and the refill would miss the table, or be counted twice.
DROP VIEW IF EXISTS telemetry.build_days_mv;

DROP VIEW IF EXISTS telemetry.build_days_replay_mv;

DROP VIEW IF EXISTS telemetry.build_days_src;

TRUNCATE TABLE IF EXISTS telemetry.build_days;

ALTER TABLE telemetry.build_days DROP COLUMN IF EXISTS sessions;

ALTER TABLE telemetry.build_days DROP COLUMN IF EXISTS players;

ALTER TABLE telemetry.build_days ADD COLUMN IF NOT EXISTS sessions AggregateFunction(groupBitmap, UInt32) AFTER last_seen;

ALTER TABLE telemetry.build_days ADD COLUMN IF NOT EXISTS players AggregateFunction(groupBitmap, UInt32) AFTER sessions;

-- The view's SELECT, parameterized for the erasure's whole-days rebuild and the tests' fresh builds.
CREATE VIEW IF NOT EXISTS telemetry.build_days_src AS
SELECT project_id, toDate(timestamp) AS day, build_id, toUInt64(count()) AS events,
    min(timestamp) AS first_seen, max(timestamp) AS last_seen,
    groupBitmapStateIf(session_idx, session_idx != 0) AS sessions,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players
FROM telemetry.events
WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
        AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
            OR (player_id = '' AND session_id IN {identified:Array(String)}))))
    AND build_id != '' AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
GROUP BY project_id, day, build_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.build_days_mv TO telemetry.build_days AS
SELECT project_id, toDate(timestamp) AS day, build_id, toUInt64(count()) AS events,
    min(timestamp) AS first_seen, max(timestamp) AS last_seen,
    groupBitmapStateIf(session_idx, session_idx != 0) AS sessions,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players
FROM telemetry.events
WHERE build_id != '' AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
GROUP BY project_id, day, build_id;

-- The replay counterpart (0032_rollup_replay.sql).
CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.build_days_replay_mv TO telemetry.build_days AS
SELECT project_id, toDate(timestamp) AS day, build_id, toUInt64(count()) AS events,
    min(timestamp) AS first_seen, max(timestamp) AS last_seen,
    groupBitmapStateIf(session_idx, session_idx != 0) AS sessions,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players
FROM (SELECT * FROM telemetry.events_replay WHERE has(replay_targets, 'build_days'))
WHERE build_id != '' AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
GROUP BY project_id, day, build_id;

-- Every stored performance-bearing event with a build, again (the table was emptied above).
INSERT INTO telemetry.build_days
SELECT * FROM telemetry.build_days_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);
