-- compare_rollup's session and player sets become bitmaps of the dense numbers (0023_actor_numbers.sql)
-- instead of exact sets of 64-bit hashes. builds/compare merges a build's sets over the window's days: at
-- the studio profile (about 1.5M sessions and players per build in 30 days) merging the hash sets took
-- most of its 750-930 ms, and the view hashed two strings per event and level at every insert; a bitmap
-- of dense UInt32 numbers merges in a few ms and costs the insert less (docs/benchmarks.md). The counts
-- stay exact: a session or player is one number, and number 0 (a row stored before numbering) is left
-- out, as in every bitmap rollup; the number backfill rebuilds this table's days with the others
-- (workers/api/erasure/rollups.ts, BITMAP_ROLLUPS).
--
-- The columns keep their names and place, with the new type; the table is emptied and refilled from
-- the events in this file (the same read as 0024's bitmaps), so no row holds the old states. Like
-- 0028, apply it with the events queue's delivery paused (docs/operations.md): an insert committed
-- between the views' drop and the refill would miss the table, or be counted twice.
--
-- Could a shared table answer compare's counts? actor_buckets and player_dims hold players and sessions
-- per day or per event name and dimension, not per build over the events carrying a compared metric,
-- which is what compare counts (0028); this changes a column type of the table compare already reads
-- and adds no table and no view.
DROP VIEW IF EXISTS telemetry.compare_rollup_mv;
DROP VIEW IF EXISTS telemetry.compare_rollup_replay_mv;
DROP VIEW IF EXISTS telemetry.compare_rollup_src;

TRUNCATE TABLE IF EXISTS telemetry.compare_rollup;

ALTER TABLE telemetry.compare_rollup DROP COLUMN IF EXISTS sessions;
ALTER TABLE telemetry.compare_rollup DROP COLUMN IF EXISTS players;
ALTER TABLE telemetry.compare_rollup ADD COLUMN IF NOT EXISTS sessions AggregateFunction(groupBitmap, UInt32) AFTER last_seen;
ALTER TABLE telemetry.compare_rollup ADD COLUMN IF NOT EXISTS players AggregateFunction(groupBitmap, UInt32) AFTER sessions;

-- The view's SELECT, parameterized for the erasure's rebuild and the number backfill (0028's, with the
-- bitmaps).
CREATE VIEW IF NOT EXISTS telemetry.compare_rollup_src AS
SELECT project_id, build_id, l.1 AS level, day, l.2 AS map_id, l.3 AS platform, toUInt64(count()) AS events,
    min(timestamp) AS first_seen, max(timestamp) AS last_seen,
    groupBitmapStateIf(session_idx, session_idx != 0) AS sessions, groupBitmapStateIf(player_idx, player_idx != 0) AS players,
    toUInt64(count(v0)) AS n0,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v0)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v0)) AS q0,
    toUInt64(count(v1)) AS n1,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v1)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v1)) AS q1,
    toUInt64(count(v2)) AS n2,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v2)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v2)) AS q2,
    toUInt64(count(v3)) AS n3,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v3)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v3)) AS q3,
    toUInt64(count(v4)) AS n4,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v4)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v4)) AS q4,
    toUInt64(count(v5)) AS n5,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v5)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v5)) AS q5,
    toUInt64(count(v6)) AS n6,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v6)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v6)) AS q6,
    toUInt64(count(v7)) AS n7,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v7)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v7)) AS q7
FROM (
    SELECT project_id, build_id, toDate(timestamp) AS day, timestamp, session_id, session_idx, player_idx,
        if(empty(player_id), session_id, player_id) AS player,
        [('build', '', ''), ('map_platform', toString(map_id), toString(platform))] AS ls,
        toNullable(toFloat64(frame_time_ms)) AS v0,
        memory_used_bytes / 1048576 AS v1,
        toNullable(toFloat64(gpu_time_ms)) AS v2,
        if(mapContains(metrics, 'io.read_bytes'), metrics['io.read_bytes'], NULL) AS v3,
        if(mapContains(metrics, 'io.read_time_ms'), metrics['io.read_time_ms'], NULL) AS v4,
        if(mapContains(metrics, 'io.read_ops'), metrics['io.read_ops'], NULL) AS v5,
        if(mapContains(metrics, 'load_time_ms'), metrics['load_time_ms'], NULL) AS v6,
        if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL) AS v7
    FROM telemetry.events
    WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
        AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
            OR (player_id = '' AND session_id IN {identified:Array(String)}))))
    AND (isNotNull(v0) OR isNotNull(v1) OR isNotNull(v2) OR isNotNull(v3) OR isNotNull(v4) OR isNotNull(v5) OR isNotNull(v6) OR isNotNull(v7))
)
ARRAY JOIN ls AS l
GROUP BY project_id, build_id, level, day, map_id, platform;;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.compare_rollup_mv TO telemetry.compare_rollup AS
SELECT project_id, build_id, l.1 AS level, day, l.2 AS map_id, l.3 AS platform, toUInt64(count()) AS events,
    min(timestamp) AS first_seen, max(timestamp) AS last_seen,
    groupBitmapStateIf(session_idx, session_idx != 0) AS sessions, groupBitmapStateIf(player_idx, player_idx != 0) AS players,
    toUInt64(count(v0)) AS n0,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v0)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v0)) AS q0,
    toUInt64(count(v1)) AS n1,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v1)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v1)) AS q1,
    toUInt64(count(v2)) AS n2,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v2)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v2)) AS q2,
    toUInt64(count(v3)) AS n3,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v3)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v3)) AS q3,
    toUInt64(count(v4)) AS n4,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v4)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v4)) AS q4,
    toUInt64(count(v5)) AS n5,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v5)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v5)) AS q5,
    toUInt64(count(v6)) AS n6,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v6)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v6)) AS q6,
    toUInt64(count(v7)) AS n7,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v7)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v7)) AS q7
FROM (
    SELECT project_id, build_id, toDate(timestamp) AS day, timestamp, session_id, session_idx, player_idx,
        if(empty(player_id), session_id, player_id) AS player,
        [('build', '', ''), ('map_platform', toString(map_id), toString(platform))] AS ls,
        toNullable(toFloat64(frame_time_ms)) AS v0,
        memory_used_bytes / 1048576 AS v1,
        toNullable(toFloat64(gpu_time_ms)) AS v2,
        if(mapContains(metrics, 'io.read_bytes'), metrics['io.read_bytes'], NULL) AS v3,
        if(mapContains(metrics, 'io.read_time_ms'), metrics['io.read_time_ms'], NULL) AS v4,
        if(mapContains(metrics, 'io.read_ops'), metrics['io.read_ops'], NULL) AS v5,
        if(mapContains(metrics, 'load_time_ms'), metrics['load_time_ms'], NULL) AS v6,
        if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL) AS v7
    FROM telemetry.events
    WHERE (isNotNull(v0) OR isNotNull(v1) OR isNotNull(v2) OR isNotNull(v3) OR isNotNull(v4) OR isNotNull(v5) OR isNotNull(v6) OR isNotNull(v7))
)
ARRAY JOIN ls AS l
GROUP BY project_id, build_id, level, day, map_id, platform;;

-- The replay counterpart (0032_rollup_replay.sql).
CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.compare_rollup_replay_mv TO telemetry.compare_rollup AS
SELECT project_id, build_id, l.1 AS level, day, l.2 AS map_id, l.3 AS platform, toUInt64(count()) AS events,
    min(timestamp) AS first_seen, max(timestamp) AS last_seen,
    groupBitmapStateIf(session_idx, session_idx != 0) AS sessions, groupBitmapStateIf(player_idx, player_idx != 0) AS players,
    toUInt64(count(v0)) AS n0,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v0)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v0)) AS q0,
    toUInt64(count(v1)) AS n1,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v1)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v1)) AS q1,
    toUInt64(count(v2)) AS n2,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v2)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v2)) AS q2,
    toUInt64(count(v3)) AS n3,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v3)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v3)) AS q3,
    toUInt64(count(v4)) AS n4,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v4)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v4)) AS q4,
    toUInt64(count(v5)) AS n5,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v5)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v5)) AS q5,
    toUInt64(count(v6)) AS n6,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v6)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v6)) AS q6,
    toUInt64(count(v7)) AS n7,
    quantilesExactWeightedStateIf(0.5, 0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(v7)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(v7)) AS q7
FROM (
    SELECT project_id, build_id, toDate(timestamp) AS day, timestamp, session_id, session_idx, player_idx,
        if(empty(player_id), session_id, player_id) AS player,
        [('build', '', ''), ('map_platform', toString(map_id), toString(platform))] AS ls,
        toNullable(toFloat64(frame_time_ms)) AS v0,
        memory_used_bytes / 1048576 AS v1,
        toNullable(toFloat64(gpu_time_ms)) AS v2,
        if(mapContains(metrics, 'io.read_bytes'), metrics['io.read_bytes'], NULL) AS v3,
        if(mapContains(metrics, 'io.read_time_ms'), metrics['io.read_time_ms'], NULL) AS v4,
        if(mapContains(metrics, 'io.read_ops'), metrics['io.read_ops'], NULL) AS v5,
        if(mapContains(metrics, 'load_time_ms'), metrics['load_time_ms'], NULL) AS v6,
        if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL) AS v7
    FROM (SELECT * FROM telemetry.events_replay WHERE has(replay_targets, 'compare_rollup'))
    WHERE (isNotNull(v0) OR isNotNull(v1) OR isNotNull(v2) OR isNotNull(v3) OR isNotNull(v4) OR isNotNull(v5) OR isNotNull(v6) OR isNotNull(v7))
)
ARRAY JOIN ls AS l
GROUP BY project_id, build_id, level, day, map_id, platform;;

-- Every stored event carrying a compared metric, again (the table was emptied above).
INSERT INTO telemetry.compare_rollup SELECT * FROM telemetry.compare_rollup_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);
