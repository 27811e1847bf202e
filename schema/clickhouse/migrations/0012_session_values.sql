-- Session values for build regressions (workers/api/analytics/regressions.ts, docs/analytics.md "Build
-- regressions"). The statistics' unit is the session: a session's samples are correlated, so each
-- session contributes one value per metric, the median of its samples. A median does not merge from
-- partial medians, so each row keeps a mergeable state of the session's samples: a quantileExactLow
-- state of the quantized samples q(v) (0004_rollups.sql, workers/api/analytics/percentiles.ts: v with all
-- but the 8 leading mantissa bits cleared, 0 ≤ v − q(v) < 0.39 % of v), each kept as a Float32, which
-- holds such a value exactly. Merged over the window, quantileExactLow(0.5) gives the lower median, the
-- ⌈n/2⌉-th smallest: the session's nearest-rank median of q(v), which is q of the raw samples' own
-- nearest-rank median, and as q is monotone the order of sessions is the raw one. The state is the
-- samples themselves (4 bytes each), not a bucket → count map: merging arrays measured 2.5–4× faster
-- than merging quantileExactWeighted's hash maps over the benchmark's sessions (identical medians), and a
-- read costs what the two builds' sessions and samples cost, never the other builds' or the events.
-- Sessions are keyed by cityHash64(session_id): no identifier is stored, and two sessions of one build
-- would have to collide in 64 bits to be merged (about 1 in 10^10 at 10^5 sessions of one build).
-- Both tables come in the four parts of 0004_rollups.sql (table, `_src` for the erasure's rebuild,
-- `_mv`, backfill); workers/api/erasure/rollups.ts lists them in REBUILT_ROLLUPS.

-- One row per project, build, day, map, session and hardware key (the device columns as the events
-- carry them, '' where not sent), performance-bearing events of a non-empty build only. Ordered by build
-- right after the project: a comparison of two builds reads only their rows of the window.
CREATE TABLE IF NOT EXISTS telemetry.session_values
(
    project_id UUID,
    build_id LowCardinality(String),
    day Date,
    map_id LowCardinality(String),
    session UInt64,
    platform LowCardinality(String),
    gpu LowCardinality(String),
    device_model LowCardinality(String),
    resolution LowCardinality(String),
    os_version LowCardinality(String),
    frame_q AggregateFunction(quantileExactLow(0.5), Float32),
    fps_q AggregateFunction(quantileExactLow(0.5), Float32),
    gpu_q AggregateFunction(quantileExactLow(0.5), Float32),
    mem_q AggregateFunction(quantileExactLow(0.5), Float32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version);

CREATE VIEW IF NOT EXISTS telemetry.session_values_src AS
SELECT project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(frame_v)), 0xFFFFF00000000000))), isNotNull(frame_v)) AS frame_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(fps_v)), 0xFFFFF00000000000))), isNotNull(fps_v)) AS fps_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(gpu_v)), 0xFFFFF00000000000))), isNotNull(gpu_v)) AS gpu_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(mem_v)), 0xFFFFF00000000000))), isNotNull(mem_v)) AS mem_q
FROM (
    SELECT project_id, build_id, toDate(timestamp) AS day, map_id, cityHash64(session_id) AS session,
        platform, gpu, device_model, resolution, os_version,
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

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.session_values_mv TO telemetry.session_values AS
SELECT project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(frame_v)), 0xFFFFF00000000000))), isNotNull(frame_v)) AS frame_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(fps_v)), 0xFFFFF00000000000))), isNotNull(fps_v)) AS fps_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(gpu_v)), 0xFFFFF00000000000))), isNotNull(gpu_v)) AS gpu_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(mem_v)), 0xFFFFF00000000000))), isNotNull(mem_v)) AS mem_q
FROM (
    SELECT project_id, build_id, toDate(timestamp) AS day, map_id, cityHash64(session_id) AS session,
        platform, gpu, device_model, resolution, os_version,
        toNullable(toFloat64(frame_time_ms)) AS frame_v, toNullable(toFloat64(fps)) AS fps_v,
        toNullable(toFloat64(gpu_time_ms)) AS gpu_v, memory_used_bytes / 1048576 AS mem_v
    FROM telemetry.events
    WHERE build_id != '' AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
)
GROUP BY project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version;

INSERT INTO telemetry.session_values
SELECT * FROM telemetry.session_values_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);

-- Where on a map: one row per project, map, build, day, base cell of 25 world units (the heatmap's
-- default cell size; x and y origins floor(v / 25) · 25, 2-D) and session, over the positioned
-- performance-bearing events of a non-empty build and map. A session's value in a cell is the median of
-- its samples there.
CREATE TABLE IF NOT EXISTS telemetry.session_cells
(
    project_id UUID,
    map_id LowCardinality(String),
    build_id LowCardinality(String),
    day Date,
    x Float64,
    y Float64,
    session UInt64,
    frame_q AggregateFunction(quantileExactLow(0.5), Float32),
    fps_q AggregateFunction(quantileExactLow(0.5), Float32),
    gpu_q AggregateFunction(quantileExactLow(0.5), Float32),
    mem_q AggregateFunction(quantileExactLow(0.5), Float32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, map_id, build_id, day, x, y, session);

CREATE VIEW IF NOT EXISTS telemetry.session_cells_src AS
SELECT project_id, map_id, build_id, day, x, y, session,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(frame_v)), 0xFFFFF00000000000))), isNotNull(frame_v)) AS frame_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(fps_v)), 0xFFFFF00000000000))), isNotNull(fps_v)) AS fps_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(gpu_v)), 0xFFFFF00000000000))), isNotNull(gpu_v)) AS gpu_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(mem_v)), 0xFFFFF00000000000))), isNotNull(mem_v)) AS mem_q
FROM (
    SELECT project_id, map_id, build_id, toDate(timestamp) AS day,
        floor(position_x / 25) * 25 AS x, floor(position_y / 25) * 25 AS y, cityHash64(session_id) AS session,
        toNullable(toFloat64(frame_time_ms)) AS frame_v, toNullable(toFloat64(fps)) AS fps_v,
        toNullable(toFloat64(gpu_time_ms)) AS gpu_v, memory_used_bytes / 1048576 AS mem_v
    FROM telemetry.events
    WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
        AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
            OR (player_id = '' AND session_id IN {identified:Array(String)}))))
        AND build_id != '' AND map_id != '' AND isNotNull(position_x) AND isNotNull(position_y)
        AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
)
GROUP BY project_id, map_id, build_id, day, x, y, session;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.session_cells_mv TO telemetry.session_cells AS
SELECT project_id, map_id, build_id, day, x, y, session,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(frame_v)), 0xFFFFF00000000000))), isNotNull(frame_v)) AS frame_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(fps_v)), 0xFFFFF00000000000))), isNotNull(fps_v)) AS fps_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(gpu_v)), 0xFFFFF00000000000))), isNotNull(gpu_v)) AS gpu_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(mem_v)), 0xFFFFF00000000000))), isNotNull(mem_v)) AS mem_q
FROM (
    SELECT project_id, map_id, build_id, toDate(timestamp) AS day,
        floor(position_x / 25) * 25 AS x, floor(position_y / 25) * 25 AS y, cityHash64(session_id) AS session,
        toNullable(toFloat64(frame_time_ms)) AS frame_v, toNullable(toFloat64(fps)) AS fps_v,
        toNullable(toFloat64(gpu_time_ms)) AS gpu_v, memory_used_bytes / 1048576 AS mem_v
    FROM telemetry.events
    WHERE build_id != '' AND map_id != '' AND isNotNull(position_x) AND isNotNull(position_y)
        AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
)
GROUP BY project_id, map_id, build_id, day, x, y, session;

INSERT INTO telemetry.session_cells
SELECT * FROM telemetry.session_cells_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);
