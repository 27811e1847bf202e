-- Stored histograms of session medians for closed days (docs/analytics.md, "Build regressions",
-- "Stored days"; workers/api/analytics/session-medians.ts). builds/compare's verdicts judge histograms of
-- session medians (regressions.ts sessionValueRanks); at a studio month most sessions begin and end on
-- one UTC day, and once that day is closed their medians no longer change, so a job stores, per closed
-- day, how many of those sessions have each quantized median, and the read adds the days' histograms
-- instead of merging the sessions' sample arrays again.
--
-- session_values gains each session's dense number (0023_actor_numbers.sql): the sessions a stored day
-- counted are a bitmap of these numbers, compared at read time with the window's other days' session
-- bitmaps (actor_days). Its views are replaced to carry it. Rows stored before carry 0: the job rebuilds
-- a closed day's rows from the events before storing it (their events are numbered by then, or the number
-- backfill rebuilds their days), and a read that meets a live row without a number uses no stored day.
ALTER TABLE telemetry.session_values ADD COLUMN IF NOT EXISTS session_idx SimpleAggregateFunction(max, UInt32);

DROP VIEW IF EXISTS telemetry.session_values_mv;

DROP VIEW IF EXISTS telemetry.session_values_src;

CREATE VIEW telemetry.session_values_src AS
SELECT project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(frame_v)), 0xFFFFF00000000000))), isNotNull(frame_v)) AS frame_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(fps_v)), 0xFFFFF00000000000))), isNotNull(fps_v)) AS fps_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(gpu_v)), 0xFFFFF00000000000))), isNotNull(gpu_v)) AS gpu_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(mem_v)), 0xFFFFF00000000000))), isNotNull(mem_v)) AS mem_q,
    max(session_idx) AS session_idx
FROM (
    SELECT project_id, build_id, toDate(timestamp) AS day, map_id, cityHash64(session_id) AS session,
        platform, gpu, device_model, resolution, os_version, session_idx,
        toNullable(toFloat64(frame_time_ms)) AS frame_v, toNullable(toFloat64(fps)) AS fps_v,
        toNullable(toFloat64(gpu_time_ms)) AS gpu_v, memory_used_bytes / 1048576 AS mem_v
    FROM telemetry.events
    WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
        AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
            OR (player_id = '' AND session_id IN {identified:Array(String)}))))
        AND build_id != '' AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
)
GROUP BY project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version;

CREATE MATERIALIZED VIEW telemetry.session_values_mv TO telemetry.session_values AS
SELECT project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(frame_v)), 0xFFFFF00000000000))), isNotNull(frame_v)) AS frame_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(fps_v)), 0xFFFFF00000000000))), isNotNull(fps_v)) AS fps_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(gpu_v)), 0xFFFFF00000000000))), isNotNull(gpu_v)) AS gpu_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(mem_v)), 0xFFFFF00000000000))), isNotNull(mem_v)) AS mem_q,
    max(session_idx) AS session_idx
FROM (
    SELECT project_id, build_id, toDate(timestamp) AS day, map_id, cityHash64(session_id) AS session,
        platform, gpu, device_model, resolution, os_version, session_idx,
        toNullable(toFloat64(frame_time_ms)) AS frame_v, toNullable(toFloat64(fps)) AS fps_v,
        toNullable(toFloat64(gpu_time_ms)) AS gpu_v, memory_used_bytes / 1048576 AS mem_v
    FROM telemetry.events
    WHERE build_id != '' AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
)
GROUP BY project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version;

-- The stored days: one row per write, the latest version of a (project, day) being its state.
-- stored = 0: the day's stamp as first seen (seen_at), or a computation under way (hist_version, counted
-- set); stored = 1: session_median_hist and session_median_carry hold the day at hist_version. The
-- stamp (events, batches) is the day's telemetry.batch_totals: the sum of its events and the XOR of
-- cityHash64(batch, events) over its batches; a late batch or an erasure's rebuild changes it, and a
-- stored day whose stamp differs from the current one is never read. counted: the session numbers whose
-- medians the histogram holds (the day's sessions seen on no other day near it).
CREATE TABLE IF NOT EXISTS telemetry.session_median_days
(
    project_id UUID,
    day Date,
    version UInt64,
    stored UInt8,
    hist_version UInt64,
    events UInt64,
    batches UInt64,
    seen_at UInt64,
    counted AggregateFunction(groupBitmap, UInt32)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, version)
TTL day + INTERVAL 800 DAY
SETTINGS ttl_only_drop_parts = 1;

-- Per build, day, grouping and metric (1 frame time, 2 fps, 3 GPU time, 4 memory: session_values' state
-- columns in order), how many of the day's counted sessions have each quantized median. The groupings
-- are the ones compare and regressions by platform read: by_map 0 (all maps, map_id '') or 1 (that
-- map), by_platform 0 (all platforms, platform '') or 1 (that platform, '' for not sent). Ordered by the
-- grouping before the day: a read takes one grouping of two builds over the window's stored days.
CREATE TABLE IF NOT EXISTS telemetry.session_median_hist
(
    project_id UUID,
    build_id LowCardinality(String),
    day Date,
    version UInt64,
    by_map UInt8,
    map_id LowCardinality(String),
    by_platform UInt8,
    platform LowCardinality(String),
    metric UInt8,
    value Float32,
    sessions UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, build_id, by_map, map_id, by_platform, day, version, platform, metric, value)
TTL day + INTERVAL 800 DAY
SETTINGS ttl_only_drop_parts = 1;

-- The day's other sessions (seen on another day too): their session_values rows of the day, merged per
-- build, map, session and platform, so a read that uses the stored day merges them with the sessions'
-- rows of its other days without reading the day's session_values rows.
CREATE TABLE IF NOT EXISTS telemetry.session_median_carry
(
    project_id UUID,
    build_id LowCardinality(String),
    day Date,
    version UInt64,
    map_id LowCardinality(String),
    session UInt64,
    platform LowCardinality(String),
    frame_q AggregateFunction(quantileExactLow(0.5), Float32),
    fps_q AggregateFunction(quantileExactLow(0.5), Float32),
    gpu_q AggregateFunction(quantileExactLow(0.5), Float32),
    mem_q AggregateFunction(quantileExactLow(0.5), Float32)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, build_id, day, version, map_id, session, platform)
TTL day + INTERVAL 800 DAY
SETTINGS ttl_only_drop_parts = 1
