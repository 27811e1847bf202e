-- What bounds a frame, and its hitches, in the cell drill-down (workers/api/analytics/frame-causes.ts,
-- docs/analytics.md "Why a cell is slow"). The rule reads the heartbeat's game-thread and render-thread
-- times, its window's disk read time (metrics['io.read_time_ms']), the device's memory total and the
-- display's refresh rate (metrics['display.hz']: the frame budget) beside the fields cell_samples already
-- kept (frame time, fps, GPU time, memory used). cell_samples kept none of the five, so it is made again
-- with them and refilled from the events, as 0013 and 0018 did: the
-- drill-down of a cell reads one base cell's granules of the window, and must not go back to the events.
--
-- Could a shared table answer the read? No: the drill-down's one statement reads cell_samples (ordered
-- by map and base cell), and the rule needs the five fields per heartbeat; no other table keeps a
-- heartbeat's timings. No table or view is added: the same table carries five more columns (a few
-- bytes per row, most of them NULL where an SDK does not collect them), and the same view writes them.
--
-- The view is dropped first and made again last: pause the events queue's delivery while this runs
-- (docs/operations.md, "Applying migrations that replace a view"). The table keeps its key, partitions,
-- granules of 1,024 rows (0018), TTL and setting (0021) and bloom filters (0031).
DROP VIEW IF EXISTS telemetry.cell_samples_mv;

DROP TABLE IF EXISTS telemetry.cell_samples_next;

CREATE TABLE telemetry.cell_samples_next
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
    -- Never NULL here; Nullable as in the events, so the view copies them under their own names.
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
    -- NULL where the SDK did not collect them (the wire's 0), as in the events.
    game_thread_ms Nullable(Float32),
    render_thread_ms Nullable(Float32),
    -- The disk read time of the heartbeat's window (the SDKs sum it since the previous heartbeat); NULL
    -- where the event carries no io.read_time_ms (a 0 is a reading: no reads in the window).
    io_read_time_ms Nullable(Float64),
    -- The event's own device memory total (MB, 0: not sent); reads fall back to its session's device_info.
    memory_total_mb UInt32,
    -- The display's refresh rate (metrics['display.hz'], the web SDK's measure); NULL where not sent.
    display_hz Nullable(Float64),
    batch_id String,
    event_index UInt32,
    INDEX idx_player player TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_session session_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, map_id, bx, by, toDate(timestamp), batch_id, event_index)
TTL toDate(timestamp) + INTERVAL 800 DAY
SETTINGS index_granularity = 1024, ttl_only_drop_parts = 1;

INSERT INTO telemetry.cell_samples_next
SELECT project_id, map_id,
    toInt32(floor(assumeNotNull(position_x) / 50)) AS bx, toInt32(floor(assumeNotNull(position_y) / 50)) AS by,
    timestamp, session_id, player_id, if(empty(player_id), session_id, player_id) AS player,
    build_id, platform, engine_version, gpu, device_model, resolution, os_version, build_config, storage,
    position_x, position_y, position_z,
    camera_yaw, camera_pitch, fps, frame_time_ms, memory_used_bytes, gpu_time_ms,
    game_thread_ms, render_thread_ms,
    if(mapContains(metrics, 'io.read_time_ms'), metrics['io.read_time_ms'], NULL) AS io_read_time_ms,
    memory_total_mb,
    if(mapContains(metrics, 'display.hz') AND metrics['display.hz'] > 0, metrics['display.hz'], NULL) AS display_hz,
    batch_id, event_index
FROM telemetry.events
WHERE isNotNull(position_x) AND isNotNull(position_y) AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
    OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0);

EXCHANGE TABLES telemetry.cell_samples_next AND telemetry.cell_samples;

DROP TABLE telemetry.cell_samples_next;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.cell_samples_mv TO telemetry.cell_samples AS
SELECT project_id, map_id,
    toInt32(floor(assumeNotNull(position_x) / 50)) AS bx, toInt32(floor(assumeNotNull(position_y) / 50)) AS by,
    timestamp, session_id, player_id, if(empty(player_id), session_id, player_id) AS player,
    build_id, platform, engine_version, gpu, device_model, resolution, os_version, build_config, storage,
    position_x, position_y, position_z,
    camera_yaw, camera_pitch, fps, frame_time_ms, memory_used_bytes, gpu_time_ms,
    game_thread_ms, render_thread_ms,
    if(mapContains(metrics, 'io.read_time_ms'), metrics['io.read_time_ms'], NULL) AS io_read_time_ms,
    memory_total_mb,
    if(mapContains(metrics, 'display.hz') AND metrics['display.hz'] > 0, metrics['display.hz'], NULL) AS display_hz,
    batch_id, event_index
FROM telemetry.events
WHERE isNotNull(position_x) AND isNotNull(position_y) AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
    OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0);
