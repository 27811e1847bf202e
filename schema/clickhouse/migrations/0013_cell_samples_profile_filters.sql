-- The alert evaluation's failing shares (workers/api/alerts/cells.ts, judgeScopeGroup) read the worst
-- cells' samples here instead of the events: the table's key (map, base cell of 50) keeps such a read to
-- the worst cells' base cells, where the events' key (project, day, event name) reads every event of the
-- project's window. A threshold profile filters on platform, resolution, build_config, gpu and storage;
-- 0005 kept no build_config nor storage, so the table is made again with them (everything else as in
-- 0005_cell_samples.sql) and refilled from the events, like 0009's rebuilt rollups, before traffic with
-- the rest of the migrations. The cell drill-down (workers/api/analytics/cell.ts) reads the same columns
-- as before.
DROP VIEW IF EXISTS telemetry.cell_samples_mv;

DROP TABLE IF EXISTS telemetry.cell_samples;

CREATE TABLE IF NOT EXISTS telemetry.cell_samples
(
    project_id UUID,
    map_id LowCardinality(String),
    bx Int32,
    by Int32,
    timestamp DateTime64(6, 'UTC'),
    session_id String,
    player_id String,
    player String,
    build_id LowCardinality(String),
    platform LowCardinality(String),
    engine_version LowCardinality(String),
    gpu LowCardinality(String),
    device_model LowCardinality(String),
    resolution LowCardinality(String),
    os_version LowCardinality(String),
    build_config LowCardinality(String),
    storage LowCardinality(String),
    -- Never NULL here; Nullable as in the events, so the view copies them under their own names (an
    -- alias position_x = assumeNotNull(position_x) would also replace the column in the view's WHERE).
    position_x Nullable(Float32),
    position_y Nullable(Float32),
    position_z Nullable(Float32),
    camera_yaw Nullable(Float32),
    camera_pitch Nullable(Float32),
    fps Nullable(Float32),
    frame_time_ms Nullable(Float32),
    memory_used_bytes Nullable(UInt64),
    memory_mb Nullable(Float64) ALIAS memory_used_bytes / 1048576,
    gpu_time_ms Nullable(Float32),
    batch_id String,
    event_index UInt32
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, map_id, bx, by, toDate(timestamp), batch_id, event_index);

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.cell_samples_mv TO telemetry.cell_samples AS
SELECT project_id, map_id,
    toInt32(floor(assumeNotNull(position_x) / 50)) AS bx, toInt32(floor(assumeNotNull(position_y) / 50)) AS by,
    timestamp, session_id, player_id, if(empty(player_id), session_id, player_id) AS player,
    build_id, platform, engine_version, gpu, device_model, resolution, os_version, build_config, storage,
    position_x, position_y, position_z,
    camera_yaw, camera_pitch, fps, frame_time_ms, memory_used_bytes, gpu_time_ms, batch_id, event_index
FROM telemetry.events
WHERE isNotNull(position_x) AND isNotNull(position_y) AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
    OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0);

-- The events that existed before the view.
INSERT INTO telemetry.cell_samples
SELECT project_id, map_id,
    toInt32(floor(assumeNotNull(position_x) / 50)) AS bx, toInt32(floor(assumeNotNull(position_y) / 50)) AS by,
    timestamp, session_id, player_id, if(empty(player_id), session_id, player_id) AS player,
    build_id, platform, engine_version, gpu, device_model, resolution, os_version, build_config, storage,
    position_x, position_y, position_z,
    camera_yaw, camera_pitch, fps, frame_time_ms, memory_used_bytes, gpu_time_ms, batch_id, event_index
FROM telemetry.events
WHERE isNotNull(position_x) AND isNotNull(position_y) AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
    OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0);
