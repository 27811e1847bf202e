-- One wide table of telemetry events. Partitioned by month and ordered by project first, so a query
-- of one project and window reads only that project's granules of those months.
-- ReplacingMergeTree keyed on (batch_id, event_index) is the backstop for at-least-once delivery:
-- the consumer already skips rows that are present, and a merge removes any copy that a race let in.
CREATE TABLE IF NOT EXISTS telemetry.events
(
    project_id UUID,
    timestamp DateTime64(6, 'UTC'),
    event_name LowCardinality(String),
    session_id String,
    player_id String,
    build_id LowCardinality(String),
    map_id LowCardinality(String),
    platform LowCardinality(String),
    resolution LowCardinality(String),
    build_config LowCardinality(String),
    gpu LowCardinality(String),
    storage LowCardinality(String),
    cpu LowCardinality(String),
    os_version LowCardinality(String),
    device_model LowCardinality(String),
    memory_total_mb UInt32,
    sdk_name LowCardinality(String),
    sdk_version LowCardinality(String),
    position_x Nullable(Float32),
    position_y Nullable(Float32),
    position_z Nullable(Float32),
    camera_position_x Nullable(Float32),
    camera_position_y Nullable(Float32),
    camera_position_z Nullable(Float32),
    camera_rotation_x Nullable(Float32),
    camera_rotation_y Nullable(Float32),
    camera_rotation_z Nullable(Float32),
    fps Nullable(Float32),
    frame_time_ms Nullable(Float32),
    memory_mb Nullable(Float32),
    gpu_time_ms Nullable(Float32),
    cpu_time_ms Nullable(Float32),
    properties Map(String, String),
    metrics Map(String, Float64),
    batch_id String,
    event_index UInt32,
    received_at DateTime64(3, 'UTC'),
    -- The player of an event is its player_id, or its session_id when player_id is empty.
    player String MATERIALIZED if(empty(player_id), session_id, player_id),
    has_perf Bool MATERIALIZED isNotNull(fps) OR isNotNull(frame_time_ms) OR isNotNull(memory_mb)
        OR isNotNull(gpu_time_ms) OR isNotNull(cpu_time_ms),
    INDEX idx_batch batch_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, toDate(timestamp), event_name, batch_id, event_index);
