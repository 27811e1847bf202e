-- telemetry.events in the shape of the SDKs' wire layout (proto/telemetry/v1/telemetry.proto): one
-- column per scalar of the wire contract. Our own old layout is gone and nothing in production used
-- it, so the table is dropped and recreated rather than altered, and the rollups derived from it are
-- emptied and refilled from the (new, empty) table. The views go first: a view must never read a
-- table in the middle of being replaced.
DROP VIEW IF EXISTS telemetry.player_first_seen_mv;
DROP VIEW IF EXISTS telemetry.daily_actors_mv;
DROP TABLE IF EXISTS telemetry.events;
TRUNCATE TABLE IF EXISTS telemetry.player_first_seen;
TRUNCATE TABLE IF EXISTS telemetry.daily_actors;

-- Partitioned by month and ordered by project first, so a query of one project and window reads only
-- that project's granules of those months. ReplacingMergeTree keyed on (batch_id, event_index) is the
-- backstop for at-least-once delivery: the consumer already skips rows that are present, and a merge
-- removes any copy that a race let in. batch_id is derived from the project and the decoded batch, so
-- an SDK retry compressed differently (or sent raw) carries the same key.
CREATE TABLE IF NOT EXISTS telemetry.events
(
    project_id UUID,
    event_name LowCardinality(String),
    timestamp DateTime64(6, 'UTC'),
    session_id String,
    player_id String,
    -- NULL when the SDK sent no position (the SDKs omit a position of 0,0,0).
    position_x Nullable(Float32),
    position_y Nullable(Float32),
    position_z Nullable(Float32),
    map_id LowCardinality(String),
    -- Performance fields: the wire's 0 means "not collected" and is stored as NULL, so averages and
    -- percentiles only see real samples.
    fps Nullable(Float32),
    frame_time_ms Nullable(Float32),
    memory_used_bytes Nullable(UInt64),
    -- Thresholds (profiles, alert rules) and analytics speak megabytes.
    memory_mb Nullable(Float64) ALIAS memory_used_bytes / 1048576,
    gpu_time_ms Nullable(Float32),
    game_thread_ms Nullable(Float32),
    render_thread_ms Nullable(Float32),
    attributes Map(String, String),
    metrics Map(String, Float64),
    source Enum8('unspecified' = 0, 'player' = 1, 'automated' = 2),
    build_id LowCardinality(String),
    platform LowCardinality(String),
    engine_version LowCardinality(String),
    -- Degrees; a pair, both NULL when the SDK sent no camera.
    camera_yaw Nullable(Float32),
    camera_pitch Nullable(Float32),
    -- Device context: the event's own, field by field over the batch's ('' / 0: not sent).
    resolution LowCardinality(String),
    build_config LowCardinality(String),
    gpu LowCardinality(String),
    storage LowCardinality(String),
    cpu LowCardinality(String),
    os_version LowCardinality(String),
    device_model LowCardinality(String),
    memory_total_mb UInt32,
    -- From the X-SDK-Version header: `name/version`, or a bare version (sdk_name then '').
    sdk_name LowCardinality(String),
    sdk_version LowCardinality(String),
    batch_id String,
    event_index UInt32,
    received_at DateTime64(3, 'UTC'),
    -- The player of an event is its player_id, or its session_id when player_id is empty.
    player String MATERIALIZED if(empty(player_id), session_id, player_id),
    -- Performance-bearing: at least one of fps, frame_time_ms, memory_used_bytes, gpu_time_ms above zero.
    has_perf Bool MATERIALIZED ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
        OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0,
    INDEX idx_batch batch_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, toDate(timestamp), event_name, batch_id, event_index);

-- The rollups of 0002_player_rollups.sql, fed again from the new table (same definitions).
CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.player_first_seen_mv TO telemetry.player_first_seen AS
SELECT project_id, if(empty(player_id), session_id, player_id) AS player, min(timestamp) AS first_seen
FROM telemetry.events
GROUP BY project_id, player;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.daily_actors_mv TO telemetry.daily_actors AS
SELECT DISTINCT project_id, toDate(timestamp) AS day, kind, id
FROM telemetry.events
ARRAY JOIN
    ['player', 'session'] AS kind,
    [if(empty(player_id), session_id, player_id), session_id] AS id;
