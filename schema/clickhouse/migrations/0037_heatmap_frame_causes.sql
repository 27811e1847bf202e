-- The heatmap's "bound by" mode (docs/analytics.md, "Why a cell is slow", "On the map"): per base cell
-- of 25 units and day, the heartbeats with a frame length, those longer than one refresh of their
-- display (1000 / metrics['display.hz'], 60 Hz where not sent: the session verdicts' slow heartbeat),
-- and those slow heartbeats by bound (frame-causes.ts BOUNDS, the drill-down's rule).
--
-- Could a shared table answer the read? heatmap_cells is that table: the heatmap of every map already
-- reads it (a row per project, map, day and base cell). It gains three columns and its views (the ingest
-- view and the erasure's replay view, 0032) write them; no table or view is added. The memory bound is
-- decided by the heartbeat's own device memory total (the device context); a slow heartbeat whose
-- session names its total only in a `device_info` event is `unknown` on the map, and the cell's panel
-- (which reads the session's device_info) gives its full split.
--
-- Rows written before carry zeros; the INSERT at the end adds, per existing key, a row with only the new
-- columns (zero sums, empty states), so the mode sees every stored heartbeat. Run once, with the events
-- queue's delivery paused (docs/operations.md).
ALTER TABLE telemetry.heatmap_cells
    ADD COLUMN IF NOT EXISTS beats_n SimpleAggregateFunction(sum, UInt64),
    ADD COLUMN IF NOT EXISTS slow_n SimpleAggregateFunction(sum, UInt64),
    ADD COLUMN IF NOT EXISTS slow_bounds SimpleAggregateFunction(sumMap, Map(UInt8, UInt64));

DROP VIEW IF EXISTS telemetry.heatmap_cells_mv;

DROP VIEW IF EXISTS telemetry.heatmap_cells_replay_mv;

DROP VIEW IF EXISTS telemetry.heatmap_cells_src;

-- The rollup built afresh from the events (0004's parameters): what a test compares the table with.
CREATE VIEW telemetry.heatmap_cells_src AS
SELECT project_id, map_id, day, x, y, z,
    toUInt64(count()) AS events,
    sum(ifNull(fps, 0)) AS fps_sum, toUInt64(count(fps)) AS fps_n,
    sum(ifNull(frame, 0)) AS frame_sum, toUInt64(count(frame)) AS frame_n,
    sum(ifNull(mem, 0)) AS mem_sum, toUInt64(count(mem)) AS mem_n,
    max(ifNull(mem, -inf)) AS mem_max,
    sum(ifNull(gpu, 0)) AS gpu_sum, toUInt64(count(gpu)) AS gpu_n,
    sum(ifNull(vram, 0)) AS vram_sum, toUInt64(count(vram)) AS vram_n,
    quantileExactWeightedStateIf(0.05)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(fps)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(fps)) AS fps_q,
    quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(frame)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(frame)) AS frame_q,
    quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(gpu)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(gpu)) AS gpu_q,
    quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(vram)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(vram)) AS vram_q,
    toUInt64(count(frame_ms)) AS beats_n,
    toUInt64(countIf(slow)) AS slow_n,
    sumMapIf(map(toUInt8(bound), toUInt64(1)), slow) AS slow_bounds
FROM (
    SELECT *,
        multiIf(
            isNull(frame_ms), 5,
            greatest(gpu_ms, game_ms, render_ms) > 0 AND greatest(gpu_ms, game_ms, render_ms) >= 0.8 * frame_ms,
                multiIf(gpu_ms >= greatest(game_ms, render_ms), 0, game_ms >= render_ms, 1, 2),
            ifNull(io_ms, 0) > 0 AND io_ms >= frame_ms, 3,
            memory_total_mb > 0 AND ifNull(memory_used_bytes, 0) >= 0.9 * memory_total_mb * 1048576, 4,
            5) AS bound,
        ifNull(frame_ms > 1000 / hz, 0) AS slow
    FROM (
        SELECT project_id, map_id, toDate(timestamp) AS day,
            floor(position_x / 25) * 25 AS x,
            floor(position_y / 25) * 25 AS y,
            ifNull(floor(position_z / 25) * 25, nan) AS z,
            toNullable(toFloat64(fps)) AS fps, toNullable(toFloat64(frame_time_ms)) AS frame,
            memory_used_bytes / 1048576 AS mem, toNullable(toFloat64(gpu_time_ms)) AS gpu,
            if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL) AS vram,
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
            AND isNotNull(position_x) AND isNotNull(position_y) AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
                OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
    )
)
GROUP BY project_id, map_id, day, x, y, z;

CREATE MATERIALIZED VIEW telemetry.heatmap_cells_mv TO telemetry.heatmap_cells AS
SELECT project_id, map_id, day, x, y, z,
    toUInt64(count()) AS events,
    sum(ifNull(fps, 0)) AS fps_sum, toUInt64(count(fps)) AS fps_n,
    sum(ifNull(frame, 0)) AS frame_sum, toUInt64(count(frame)) AS frame_n,
    sum(ifNull(mem, 0)) AS mem_sum, toUInt64(count(mem)) AS mem_n,
    max(ifNull(mem, -inf)) AS mem_max,
    sum(ifNull(gpu, 0)) AS gpu_sum, toUInt64(count(gpu)) AS gpu_n,
    sum(ifNull(vram, 0)) AS vram_sum, toUInt64(count(vram)) AS vram_n,
    quantileExactWeightedStateIf(0.05)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(fps)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(fps)) AS fps_q,
    quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(frame)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(frame)) AS frame_q,
    quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(gpu)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(gpu)) AS gpu_q,
    quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(vram)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(vram)) AS vram_q,
    toUInt64(count(frame_ms)) AS beats_n,
    toUInt64(countIf(slow)) AS slow_n,
    sumMapIf(map(toUInt8(bound), toUInt64(1)), slow) AS slow_bounds
FROM (
    SELECT *,
        multiIf(
            isNull(frame_ms), 5,
            greatest(gpu_ms, game_ms, render_ms) > 0 AND greatest(gpu_ms, game_ms, render_ms) >= 0.8 * frame_ms,
                multiIf(gpu_ms >= greatest(game_ms, render_ms), 0, game_ms >= render_ms, 1, 2),
            ifNull(io_ms, 0) > 0 AND io_ms >= frame_ms, 3,
            memory_total_mb > 0 AND ifNull(memory_used_bytes, 0) >= 0.9 * memory_total_mb * 1048576, 4,
            5) AS bound,
        ifNull(frame_ms > 1000 / hz, 0) AS slow
    FROM (
        SELECT project_id, map_id, toDate(timestamp) AS day,
            floor(position_x / 25) * 25 AS x,
            floor(position_y / 25) * 25 AS y,
            ifNull(floor(position_z / 25) * 25, nan) AS z,
            toNullable(toFloat64(fps)) AS fps, toNullable(toFloat64(frame_time_ms)) AS frame,
            memory_used_bytes / 1048576 AS mem, toNullable(toFloat64(gpu_time_ms)) AS gpu,
            if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL) AS vram,
            if(isNotNull(frame_time_ms), toFloat64(frame_time_ms), if(ifNull(fps, 0) > 0, 1000 / toFloat64(fps), NULL)) AS frame_ms,
            ifNull(toFloat64(gpu_time_ms), 0) AS gpu_ms, ifNull(toFloat64(game_thread_ms), 0) AS game_ms,
            ifNull(toFloat64(render_thread_ms), 0) AS render_ms,
            if(mapContains(metrics, 'io.read_time_ms'), metrics['io.read_time_ms'], NULL) AS io_ms,
            memory_used_bytes, memory_total_mb,
            if(mapContains(metrics, 'display.hz') AND metrics['display.hz'] > 0, metrics['display.hz'], 60) AS hz
        FROM telemetry.events
        WHERE isNotNull(position_x) AND isNotNull(position_y) AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
                OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
    )
)
GROUP BY project_id, map_id, day, x, y, z;

-- The replay view: the same, reading the events an erasure replays (0032_rollup_replay.sql).
CREATE MATERIALIZED VIEW telemetry.heatmap_cells_replay_mv TO telemetry.heatmap_cells AS
SELECT project_id, map_id, day, x, y, z,
    toUInt64(count()) AS events,
    sum(ifNull(fps, 0)) AS fps_sum, toUInt64(count(fps)) AS fps_n,
    sum(ifNull(frame, 0)) AS frame_sum, toUInt64(count(frame)) AS frame_n,
    sum(ifNull(mem, 0)) AS mem_sum, toUInt64(count(mem)) AS mem_n,
    max(ifNull(mem, -inf)) AS mem_max,
    sum(ifNull(gpu, 0)) AS gpu_sum, toUInt64(count(gpu)) AS gpu_n,
    sum(ifNull(vram, 0)) AS vram_sum, toUInt64(count(vram)) AS vram_n,
    quantileExactWeightedStateIf(0.05)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(fps)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(fps)) AS fps_q,
    quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(frame)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(frame)) AS frame_q,
    quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(gpu)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(gpu)) AS gpu_q,
    quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(vram)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(vram)) AS vram_q,
    toUInt64(count(frame_ms)) AS beats_n,
    toUInt64(countIf(slow)) AS slow_n,
    sumMapIf(map(toUInt8(bound), toUInt64(1)), slow) AS slow_bounds
FROM (
    SELECT *,
        multiIf(
            isNull(frame_ms), 5,
            greatest(gpu_ms, game_ms, render_ms) > 0 AND greatest(gpu_ms, game_ms, render_ms) >= 0.8 * frame_ms,
                multiIf(gpu_ms >= greatest(game_ms, render_ms), 0, game_ms >= render_ms, 1, 2),
            ifNull(io_ms, 0) > 0 AND io_ms >= frame_ms, 3,
            memory_total_mb > 0 AND ifNull(memory_used_bytes, 0) >= 0.9 * memory_total_mb * 1048576, 4,
            5) AS bound,
        ifNull(frame_ms > 1000 / hz, 0) AS slow
    FROM (
        SELECT project_id, map_id, toDate(timestamp) AS day,
            floor(position_x / 25) * 25 AS x,
            floor(position_y / 25) * 25 AS y,
            ifNull(floor(position_z / 25) * 25, nan) AS z,
            toNullable(toFloat64(fps)) AS fps, toNullable(toFloat64(frame_time_ms)) AS frame,
            memory_used_bytes / 1048576 AS mem, toNullable(toFloat64(gpu_time_ms)) AS gpu,
            if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL) AS vram,
            if(isNotNull(frame_time_ms), toFloat64(frame_time_ms), if(ifNull(fps, 0) > 0, 1000 / toFloat64(fps), NULL)) AS frame_ms,
            ifNull(toFloat64(gpu_time_ms), 0) AS gpu_ms, ifNull(toFloat64(game_thread_ms), 0) AS game_ms,
            ifNull(toFloat64(render_thread_ms), 0) AS render_ms,
            if(mapContains(metrics, 'io.read_time_ms'), metrics['io.read_time_ms'], NULL) AS io_ms,
            memory_used_bytes, memory_total_mb,
            if(mapContains(metrics, 'display.hz') AND metrics['display.hz'] > 0, metrics['display.hz'], 60) AS hz
        FROM (SELECT * FROM telemetry.events_replay WHERE has(replay_targets, 'heatmap_cells'))
        WHERE isNotNull(position_x) AND isNotNull(position_y) AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
                OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
    )
)
GROUP BY project_id, map_id, day, x, y, z;

-- The backfill: the new columns of every stored heartbeat, beside the rows under the same key.
INSERT INTO telemetry.heatmap_cells
SELECT project_id, map_id, day, x, y, z,
    toUInt64(0) AS events, 0 AS fps_sum, toUInt64(0) AS fps_n, 0 AS frame_sum, toUInt64(0) AS frame_n,
    0 AS mem_sum, toUInt64(0) AS mem_n, -inf AS mem_max, 0 AS gpu_sum, toUInt64(0) AS gpu_n,
    0 AS vram_sum, toUInt64(0) AS vram_n,
    arrayReduce('quantileExactWeightedState(0.05)', emptyArrayFloat64(), emptyArrayUInt8()) AS fps_q,
    arrayReduce('quantileExactWeightedState(0.95)', emptyArrayFloat64(), emptyArrayUInt8()) AS frame_q,
    arrayReduce('quantileExactWeightedState(0.95)', emptyArrayFloat64(), emptyArrayUInt8()) AS gpu_q,
    arrayReduce('quantileExactWeightedState(0.95)', emptyArrayFloat64(), emptyArrayUInt8()) AS vram_q,
    beats_n, slow_n, slow_bounds
FROM (
    SELECT project_id, map_id, day, x, y, z,
        toUInt64(count()) AS events,
        sum(ifNull(fps, 0)) AS fps_sum, toUInt64(count(fps)) AS fps_n,
        sum(ifNull(frame, 0)) AS frame_sum, toUInt64(count(frame)) AS frame_n,
        sum(ifNull(mem, 0)) AS mem_sum, toUInt64(count(mem)) AS mem_n,
        max(ifNull(mem, -inf)) AS mem_max,
        sum(ifNull(gpu, 0)) AS gpu_sum, toUInt64(count(gpu)) AS gpu_n,
        sum(ifNull(vram, 0)) AS vram_sum, toUInt64(count(vram)) AS vram_n,
        quantileExactWeightedStateIf(0.05)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(fps)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(fps)) AS fps_q,
        quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(frame)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(frame)) AS frame_q,
        quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(gpu)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(gpu)) AS gpu_q,
        quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(vram)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(vram)) AS vram_q,
        toUInt64(count(frame_ms)) AS beats_n,
        toUInt64(countIf(slow)) AS slow_n,
        sumMapIf(map(toUInt8(bound), toUInt64(1)), slow) AS slow_bounds
    FROM (
        SELECT *,
            multiIf(
                isNull(frame_ms), 5,
                greatest(gpu_ms, game_ms, render_ms) > 0 AND greatest(gpu_ms, game_ms, render_ms) >= 0.8 * frame_ms,
                    multiIf(gpu_ms >= greatest(game_ms, render_ms), 0, game_ms >= render_ms, 1, 2),
                ifNull(io_ms, 0) > 0 AND io_ms >= frame_ms, 3,
                memory_total_mb > 0 AND ifNull(memory_used_bytes, 0) >= 0.9 * memory_total_mb * 1048576, 4,
                5) AS bound,
            ifNull(frame_ms > 1000 / hz, 0) AS slow
        FROM (
            SELECT project_id, map_id, toDate(timestamp) AS day,
                floor(position_x / 25) * 25 AS x,
                floor(position_y / 25) * 25 AS y,
                ifNull(floor(position_z / 25) * 25, nan) AS z,
                toNullable(toFloat64(fps)) AS fps, toNullable(toFloat64(frame_time_ms)) AS frame,
                memory_used_bytes / 1048576 AS mem, toNullable(toFloat64(gpu_time_ms)) AS gpu,
                if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL) AS vram,
                if(isNotNull(frame_time_ms), toFloat64(frame_time_ms), if(ifNull(fps, 0) > 0, 1000 / toFloat64(fps), NULL)) AS frame_ms,
                ifNull(toFloat64(gpu_time_ms), 0) AS gpu_ms, ifNull(toFloat64(game_thread_ms), 0) AS game_ms,
                ifNull(toFloat64(render_thread_ms), 0) AS render_ms,
                if(mapContains(metrics, 'io.read_time_ms'), metrics['io.read_time_ms'], NULL) AS io_ms,
                memory_used_bytes, memory_total_mb,
                if(mapContains(metrics, 'display.hz') AND metrics['display.hz'] > 0, metrics['display.hz'], 60) AS hz
            FROM telemetry.events
            WHERE isNotNull(position_x) AND isNotNull(position_y) AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
                    OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
        )
    )
    GROUP BY project_id, map_id, day, x, y, z
);
