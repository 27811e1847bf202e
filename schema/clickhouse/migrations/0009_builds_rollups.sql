-- The Build's session_count and player_count ("Approximate" in the spec) as uniqCombined64 sketches
-- (default precision 17: up to 2^17 HyperLogLog registers, an exact small set and hash table below
-- that) instead of uniq states. Measured over 40 disjoint sets of String ids each: uniq's largest error
-- was 1.06 % at 100,000 distinct (its adaptive sample drops to 1 in 2 hashes there) and 0.98 % at
-- 1,000,000; uniqCombined64's 0.49 % and 0.75 % (mean 0.19 % and 0.25 %), for a state no larger than
-- uniq's at those counts and a merge as fast. 64-bit hashes, so the error does not grow with billions of
-- sessions as 32-bit ones would. Everything else in the table is as in 0004_rollups.sql; the states
-- cannot be converted, so the table is rebuilt from the events (the same backfill as 0004's, run
-- before traffic with the rest of the migrations).
DROP VIEW IF EXISTS telemetry.build_days_mv;

DROP VIEW IF EXISTS telemetry.build_days_src;

DROP TABLE IF EXISTS telemetry.build_days;

CREATE TABLE IF NOT EXISTS telemetry.build_days
(
    project_id UUID,
    day Date,
    build_id LowCardinality(String),
    events SimpleAggregateFunction(sum, UInt64),
    first_seen SimpleAggregateFunction(min, DateTime64(6, 'UTC')),
    last_seen SimpleAggregateFunction(max, DateTime64(6, 'UTC')),
    sessions AggregateFunction(uniqCombined64, String),
    players AggregateFunction(uniqCombined64, String)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, build_id)
SETTINGS index_granularity = 64;

CREATE VIEW IF NOT EXISTS telemetry.build_days_src AS
SELECT project_id, toDate(timestamp) AS day, build_id, toUInt64(count()) AS events,
    min(timestamp) AS first_seen, max(timestamp) AS last_seen,
    uniqCombined64State(session_id) AS sessions,
    uniqCombined64State(if(empty(player_id), session_id, player_id)) AS players
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
    uniqCombined64State(session_id) AS sessions,
    uniqCombined64State(if(empty(player_id), session_id, player_id)) AS players
FROM telemetry.events
WHERE build_id != '' AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
GROUP BY project_id, day, build_id;

INSERT INTO telemetry.build_days
SELECT * FROM telemetry.build_days_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);


-- Granules of 64 rows in the three rollups of the builds pages. These tables hold a few rows per
-- project and day, so with the default 8,192 one granule held every project's rows of several months,
-- and a read of one project's window deserialized the sketches, sets and percentile states of all of
-- them (EXPLAIN indexes = 1: Granules 4/4): the read grew with every project's volume, not with the
-- rows it answers from. With 64 the primary key narrows it to the project's and window's rows (a few
-- granules). The setting cannot be altered, so compare_days and compare_builds are copied into tables
-- made with it (their states as they are: no rescan of the events) and exchanged; their views are made
-- again as in 0004_rollups.sql (the `_src` views read only the events and stay).

DROP VIEW IF EXISTS telemetry.compare_days_mv;

DROP TABLE IF EXISTS telemetry.compare_days_next;

CREATE TABLE IF NOT EXISTS telemetry.compare_days_next
(
    project_id UUID,
    build_id LowCardinality(String),
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
ORDER BY (project_id, build_id, day, map_id, platform)
SETTINGS index_granularity = 64;

INSERT INTO telemetry.compare_days_next SELECT * FROM telemetry.compare_days;

EXCHANGE TABLES telemetry.compare_days_next AND telemetry.compare_days;

DROP TABLE telemetry.compare_days_next;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.compare_days_mv TO telemetry.compare_days AS
SELECT project_id, build_id, day, map_id, platform, toUInt64(count()) AS events,
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
    SELECT project_id, build_id, toDate(timestamp) AS day, map_id, platform, timestamp, session_id,
        if(empty(player_id), session_id, player_id) AS player,
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
GROUP BY project_id, build_id, day, map_id, platform;

DROP VIEW IF EXISTS telemetry.compare_builds_mv;

DROP TABLE IF EXISTS telemetry.compare_builds_next;

CREATE TABLE IF NOT EXISTS telemetry.compare_builds_next
(
    project_id UUID,
    build_id LowCardinality(String),
    day Date,
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
ORDER BY (project_id, build_id, day)
SETTINGS index_granularity = 64;

INSERT INTO telemetry.compare_builds_next SELECT * FROM telemetry.compare_builds;

EXCHANGE TABLES telemetry.compare_builds_next AND telemetry.compare_builds;

DROP TABLE telemetry.compare_builds_next;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.compare_builds_mv TO telemetry.compare_builds AS
SELECT project_id, build_id, day, toUInt64(count()) AS events,
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
GROUP BY project_id, build_id, day;
