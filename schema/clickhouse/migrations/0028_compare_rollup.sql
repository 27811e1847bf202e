-- One table for builds/compare's samples (workers/api/analytics/compare.ts), filled by one view: it replaces
-- compare_days (per build, day, map and platform) and compare_builds (the same per build and day: the
-- read without a map or platform filter), whose two views each computed the same samples from every insert
-- and each wrote a part of its own (docs/analytics.md, "Rollups"). A view costs an insert mostly per insert,
-- not per row (`npm run bench:views`): one view writing both levels writes one part, and computes the
-- metric samples of each event once.
--
-- compare_rollup: `level` 'map_platform' (a row per build, day, map and platform, as compare_days) or
-- 'build' (a row per build and day, `map_id` and `platform` ''; as compare_builds: a session seen on
-- several maps or platforms is one entry of one set rather than one per row to union at read time). The
-- columns are compare_days' (0004_rollups.sql, 0009_builds_rollups.sql): events carrying a compared
-- metric, their first and last timestamps, exact sets of session and player hashes, and per metric
-- (COMPARE_METRICS order) a sample count and a p50/p95 state of the quantized samples. Granules of 64 rows
-- as 0009 gave both tables (a few rows per project and day with heavy states), and the plan maximum as the
-- retention's backstop TTL (0015_retention_ttl.sql). The key puts `level` before `day`, so either read is
-- one range per build.
CREATE TABLE IF NOT EXISTS telemetry.compare_rollup
(
    project_id UUID,
    build_id LowCardinality(String),
    level Enum8('build' = 1, 'map_platform' = 2),
    day Date,
    map_id LowCardinality(String),
    platform LowCardinality(String),
    events SimpleAggregateFunction(sum, UInt64),
    first_seen SimpleAggregateFunction(min, DateTime64(6, 'UTC')),
    last_seen SimpleAggregateFunction(max, DateTime64(6, 'UTC')),
    sessions AggregateFunction(uniqExact, UInt64),
    players AggregateFunction(uniqExact, UInt64),
    n0 SimpleAggregateFunction(sum, UInt64),
    q0 AggregateFunction(quantilesExactWeighted(0.5, 0.95), Float64, UInt8),
    n1 SimpleAggregateFunction(sum, UInt64),
    q1 AggregateFunction(quantilesExactWeighted(0.5, 0.95), Float64, UInt8),
    n2 SimpleAggregateFunction(sum, UInt64),
    q2 AggregateFunction(quantilesExactWeighted(0.5, 0.95), Float64, UInt8),
    n3 SimpleAggregateFunction(sum, UInt64),
    q3 AggregateFunction(quantilesExactWeighted(0.5, 0.95), Float64, UInt8),
    n4 SimpleAggregateFunction(sum, UInt64),
    q4 AggregateFunction(quantilesExactWeighted(0.5, 0.95), Float64, UInt8),
    n5 SimpleAggregateFunction(sum, UInt64),
    q5 AggregateFunction(quantilesExactWeighted(0.5, 0.95), Float64, UInt8),
    n6 SimpleAggregateFunction(sum, UInt64),
    q6 AggregateFunction(quantilesExactWeighted(0.5, 0.95), Float64, UInt8),
    n7 SimpleAggregateFunction(sum, UInt64),
    q7 AggregateFunction(quantilesExactWeighted(0.5, 0.95), Float64, UInt8)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, build_id, level, day, map_id, platform)
TTL day + INTERVAL 800 DAY
SETTINGS index_granularity = 64, ttl_only_drop_parts = 1;

-- The view's SELECT, parameterized for the erasure's rebuild of a player's days (workers/api/erasure/rollups.ts):
-- every event carrying a compared metric counts in both levels (ARRAY JOIN), in one aggregation.
CREATE VIEW IF NOT EXISTS telemetry.compare_rollup_src AS
SELECT project_id, build_id, l.1 AS level, day, l.2 AS map_id, l.3 AS platform, toUInt64(count()) AS events,
    min(timestamp) AS first_seen, max(timestamp) AS last_seen,
    uniqExactState(cityHash64(session_id)) AS sessions, uniqExactState(cityHash64(player)) AS players,
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
    SELECT project_id, build_id, toDate(timestamp) AS day, timestamp, session_id,
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
GROUP BY project_id, build_id, level, day, map_id, platform;

-- The copy below is of sums, so (unlike 0027's bitmaps) a row must not reach both an old table and this
-- one: the old views go first and this one right after them, two statements apart. An insert that
-- commits between those statements is in neither (one inserted after is only in the new table); a
-- deploy with the consumer paused leaves no such gap.
DROP VIEW IF EXISTS telemetry.compare_days_mv;
DROP VIEW IF EXISTS telemetry.compare_builds_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.compare_rollup_mv TO telemetry.compare_rollup AS
SELECT project_id, build_id, l.1 AS level, day, l.2 AS map_id, l.3 AS platform, toUInt64(count()) AS events,
    min(timestamp) AS first_seen, max(timestamp) AS last_seen,
    uniqExactState(cityHash64(session_id)) AS sessions, uniqExactState(cityHash64(player)) AS players,
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
    SELECT project_id, build_id, toDate(timestamp) AS day, timestamp, session_id,
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
GROUP BY project_id, build_id, level, day, map_id, platform;

-- The rows the old tables hold, copied (their states as they are: no rescan of the events).
INSERT INTO telemetry.compare_rollup
SELECT project_id, build_id, 'map_platform', day, map_id, platform, events, first_seen, last_seen, sessions, players, n0, q0, n1, q1, n2, q2, n3, q3, n4, q4, n5, q5, n6, q6, n7, q7
FROM telemetry.compare_days;
INSERT INTO telemetry.compare_rollup
SELECT project_id, build_id, 'build', day, '', '', events, first_seen, last_seen, sessions, players, n0, q0, n1, q1, n2, q2, n3, q3, n4, q4, n5, q5, n6, q6, n7, q7
FROM telemetry.compare_builds;

DROP VIEW IF EXISTS telemetry.compare_days_src;
DROP VIEW IF EXISTS telemetry.compare_builds_src;
DROP TABLE IF EXISTS telemetry.compare_days;
DROP TABLE IF EXISTS telemetry.compare_builds
