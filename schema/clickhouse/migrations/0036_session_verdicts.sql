-- A verdict for every session, and what bounds the slow frames of a build and hardware group
-- (workers/api/analytics/session-verdicts.ts; docs/analytics.md, "Session verdicts"). A session's verdict
-- needs its heartbeats' frame lengths (its median frame, its hitches over twice that median, its frozen
-- frames) and how many of them were over their display's frame budget; builds/regressions counts, per
-- build and group, the bound of those slow frames and the hitches per minute played.
--
-- Could a shared table answer the read? session_values is that table: a row per project, build, day, map,
-- session and hardware key, the read regressions and compare already make per build and group. It gains
-- six columns and its views write them; no table and no view is added, so ingest pays for no new view:
-- - frames: each heartbeat's frame length (frame time, else 1000 / fps) as the bits of its Float32
--   (ascending with the value) and how many heartbeats had it: the session's frames, exactly;
-- - over_budget: the heartbeats longer than one refresh of their display (1000 / metrics['display.hz'],
--   60 Hz where not sent);
-- - slow_bounds: those heartbeats' bound codes (frame-causes.ts BOUNDS: 0 GPU, 1 game thread, 2 render
--   thread, 3 IO, 4 memory, 5 unknown), where the heartbeat's own memory total decides memory;
-- - slow_memory: the other over-budget heartbeats (no stage nor IO bound, no memory total of their own),
--   by memory used in bytes: a read decides memory against the session's device_info total, as the cell
--   drill-down does (device.ts);
-- - first_heartbeat, last_heartbeat: the minutes played (NULL on rows written before this migration until
--   the backfill below lands).
-- Rows written before carry empty maps; the INSERT at the end adds, per existing key, a row with only
-- the new columns (empty median states, which merge as nothing), so reads see every session's frames.
-- Run once: a second run would count the frames twice (docs/operations.md).
ALTER TABLE telemetry.session_values
    ADD COLUMN IF NOT EXISTS frames SimpleAggregateFunction(sumMap, Map(UInt32, UInt64)),
    ADD COLUMN IF NOT EXISTS over_budget SimpleAggregateFunction(sum, UInt64),
    ADD COLUMN IF NOT EXISTS slow_bounds SimpleAggregateFunction(sumMap, Map(UInt8, UInt64)),
    ADD COLUMN IF NOT EXISTS slow_memory SimpleAggregateFunction(sumMap, Map(UInt64, UInt64)),
    ADD COLUMN IF NOT EXISTS first_heartbeat SimpleAggregateFunction(min, Nullable(DateTime64(6, 'UTC'))),
    ADD COLUMN IF NOT EXISTS last_heartbeat SimpleAggregateFunction(max, Nullable(DateTime64(6, 'UTC')));

DROP VIEW IF EXISTS telemetry.session_values_mv;

DROP VIEW IF EXISTS telemetry.session_values_src;

CREATE VIEW telemetry.session_values_src AS
SELECT project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(frame_v)), 0xFFFFF00000000000))), isNotNull(frame_v)) AS frame_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(fps_v)), 0xFFFFF00000000000))), isNotNull(fps_v)) AS fps_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(gpu_v)), 0xFFFFF00000000000))), isNotNull(gpu_v)) AS gpu_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(mem_v)), 0xFFFFF00000000000))), isNotNull(mem_v)) AS mem_q,
    max(session_idx) AS session_idx,
    sumMapIf(map(reinterpretAsUInt32(toFloat32(ifNull(frame_ms, 0))), toUInt64(1)), isNotNull(frame_ms)) AS frames,
    toUInt64(countIf(slow)) AS over_budget,
    sumMapIf(map(toUInt8(bound), toUInt64(1)), slow AND bound != 255) AS slow_bounds,
    sumMapIf(map(ifNull(memory_used_bytes, 0), toUInt64(1)), slow AND bound = 255) AS slow_memory,
    toNullable(min(timestamp)) AS first_heartbeat,
    toNullable(max(timestamp)) AS last_heartbeat
FROM (
    SELECT *,
        -- The bound rule of frame-causes.ts (boundCodeSql), with 255 for "memory, if the session's
        -- device_info total says so" where the heartbeat carries no total of its own.
        multiIf(
            isNull(frame_ms), 5,
            greatest(gpu_ms, game_ms, render_ms) > 0 AND greatest(gpu_ms, game_ms, render_ms) >= 0.8 * frame_ms,
                multiIf(gpu_ms >= greatest(game_ms, render_ms), 0, game_ms >= render_ms, 1, 2),
            ifNull(io_ms, 0) > 0 AND io_ms >= frame_ms, 3,
            memory_total_mb = 0, 255,
            ifNull(memory_used_bytes, 0) >= 0.9 * memory_total_mb * 1048576, 4,
            5) AS bound,
        ifNull(frame_ms > 1000 / hz, 0) AS slow
    FROM (
        SELECT project_id, build_id, toDate(timestamp) AS day, map_id, cityHash64(session_id) AS session,
            platform, gpu, device_model, resolution, os_version, session_idx, timestamp,
            toNullable(toFloat64(frame_time_ms)) AS frame_v, toNullable(toFloat64(fps)) AS fps_v,
            toNullable(toFloat64(gpu_time_ms)) AS gpu_v, memory_used_bytes / 1048576 AS mem_v,
            if(isNotNull(frame_time_ms), toFloat64(frame_time_ms), if(ifNull(fps, 0) > 0, 1000 / toFloat64(fps), NULL)) AS frame_ms,
            ifNull(toFloat64(gpu_time_ms), 0) AS gpu_ms, ifNull(toFloat64(game_thread_ms), 0) AS game_ms,
            ifNull(toFloat64(render_thread_ms), 0) AS render_ms,
            if(mapContains(metrics, 'io.read_time_ms'), metrics['io.read_time_ms'], NULL) AS io_ms,
            memory_used_bytes, memory_total_mb,
            if(mapContains(metrics, 'display.hz') AND metrics['display.hz'] > 0, metrics['display.hz'], 60) AS hz
        FROM telemetry.events
        WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
            AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
                OR (player_id = '' AND session_id IN {identified:Array(String)}))))
            AND build_id != '' AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
                OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
    )
)
GROUP BY project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version;

CREATE MATERIALIZED VIEW telemetry.session_values_mv TO telemetry.session_values AS
SELECT project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(frame_v)), 0xFFFFF00000000000))), isNotNull(frame_v)) AS frame_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(fps_v)), 0xFFFFF00000000000))), isNotNull(fps_v)) AS fps_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(gpu_v)), 0xFFFFF00000000000))), isNotNull(gpu_v)) AS gpu_q,
    quantileExactLowStateIf(0.5)(toFloat32(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(mem_v)), 0xFFFFF00000000000))), isNotNull(mem_v)) AS mem_q,
    max(session_idx) AS session_idx,
    sumMapIf(map(reinterpretAsUInt32(toFloat32(ifNull(frame_ms, 0))), toUInt64(1)), isNotNull(frame_ms)) AS frames,
    toUInt64(countIf(slow)) AS over_budget,
    sumMapIf(map(toUInt8(bound), toUInt64(1)), slow AND bound != 255) AS slow_bounds,
    sumMapIf(map(ifNull(memory_used_bytes, 0), toUInt64(1)), slow AND bound = 255) AS slow_memory,
    toNullable(min(timestamp)) AS first_heartbeat,
    toNullable(max(timestamp)) AS last_heartbeat
FROM (
    SELECT *,
        multiIf(
            isNull(frame_ms), 5,
            greatest(gpu_ms, game_ms, render_ms) > 0 AND greatest(gpu_ms, game_ms, render_ms) >= 0.8 * frame_ms,
                multiIf(gpu_ms >= greatest(game_ms, render_ms), 0, game_ms >= render_ms, 1, 2),
            ifNull(io_ms, 0) > 0 AND io_ms >= frame_ms, 3,
            memory_total_mb = 0, 255,
            ifNull(memory_used_bytes, 0) >= 0.9 * memory_total_mb * 1048576, 4,
            5) AS bound,
        ifNull(frame_ms > 1000 / hz, 0) AS slow
    FROM (
        SELECT project_id, build_id, toDate(timestamp) AS day, map_id, cityHash64(session_id) AS session,
            platform, gpu, device_model, resolution, os_version, session_idx, timestamp,
            toNullable(toFloat64(frame_time_ms)) AS frame_v, toNullable(toFloat64(fps)) AS fps_v,
            toNullable(toFloat64(gpu_time_ms)) AS gpu_v, memory_used_bytes / 1048576 AS mem_v,
            if(isNotNull(frame_time_ms), toFloat64(frame_time_ms), if(ifNull(fps, 0) > 0, 1000 / toFloat64(fps), NULL)) AS frame_ms,
            ifNull(toFloat64(gpu_time_ms), 0) AS gpu_ms, ifNull(toFloat64(game_thread_ms), 0) AS game_ms,
            ifNull(toFloat64(render_thread_ms), 0) AS render_ms,
            if(mapContains(metrics, 'io.read_time_ms'), metrics['io.read_time_ms'], NULL) AS io_ms,
            memory_used_bytes, memory_total_mb,
            if(mapContains(metrics, 'display.hz') AND metrics['display.hz'] > 0, metrics['display.hz'], 60) AS hz
        FROM telemetry.events
        WHERE build_id != '' AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
                OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
    )
)
GROUP BY project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version;

-- The backfill: the new columns of every row written before, beside them under the same key (the median
-- states empty, the session number the rows already carry).
INSERT INTO telemetry.session_values
SELECT project_id, build_id, day, map_id, session, platform, gpu, device_model, resolution, os_version,
    arrayReduce('quantileExactLowState(0.5)', emptyArrayFloat32()) AS frame_q,
    arrayReduce('quantileExactLowState(0.5)', emptyArrayFloat32()) AS fps_q,
    arrayReduce('quantileExactLowState(0.5)', emptyArrayFloat32()) AS gpu_q,
    arrayReduce('quantileExactLowState(0.5)', emptyArrayFloat32()) AS mem_q,
    session_idx, frames, over_budget, slow_bounds, slow_memory, first_heartbeat, last_heartbeat
FROM telemetry.session_values_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);
