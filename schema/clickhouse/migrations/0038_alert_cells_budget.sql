-- Alert rules that judge a threshold profile's frame-budget shares (docs/analytics.md, "Budgets that
-- follow the display"; workers/api/alerts/cells.ts): per project, map, day, device and base cell of 25,
-- the heartbeats with a frame length and those longer than one refresh of their display (1000 /
-- metrics['display.hz'], 60 Hz where not sent): the same two counts, by the same rule, as heatmap_cells'
-- beats_n and slow_n (0037), which the heatmap's "Frame budget" mode reads.
--
-- Could a shared table answer the read? heatmap_cells holds the two counts, but per map, day and cell
-- only: a profile filters by platform, resolution, build configuration, GPU and storage, and only
-- alert_cells keeps those. alert_cells is the table alert evaluation already reads at cell sizes 25 and
-- 50; it gains two columns and its views (the ingest view, the erasure's replay view of 0032 and the
-- `_src` view the tests compare it with) write them; no table or view is added.
--
-- Rows written before carry zeros; the INSERT at the end adds, per existing key, a row with only the new
-- counts (zero sums), which the SummingMergeTree folds into the key's row, so the rules see every stored
-- heartbeat. Run once, with the events queue's delivery paused (docs/operations.md).
ALTER TABLE telemetry.alert_cells
    ADD COLUMN IF NOT EXISTS beats_n UInt64,
    ADD COLUMN IF NOT EXISTS slow_n UInt64;

DROP VIEW IF EXISTS telemetry.alert_cells_mv;

DROP VIEW IF EXISTS telemetry.alert_cells_replay_mv;

DROP VIEW IF EXISTS telemetry.alert_cells_src;

-- The rollup built afresh from the events (0004's parameters): what a test compares the table with.
CREATE VIEW telemetry.alert_cells_src AS
SELECT project_id, map_id, toDate(timestamp) AS day,
    platform, resolution, build_config, gpu, storage,
    floor(position_x / 25) * 25 AS x,
    floor(position_y / 25) * 25 AS y,
    sum(ifNull(toFloat64(fps), 0)) AS fps_sum, toUInt64(count(fps)) AS fps_n,
    sum(ifNull(toFloat64(frame_time_ms), 0)) AS frame_sum, toUInt64(count(frame_time_ms)) AS frame_n,
    sum(ifNull(memory_used_bytes / 1048576, 0)) AS mem_sum, toUInt64(count(memory_used_bytes)) AS mem_n,
    sum(ifNull(toFloat64(gpu_time_ms), 0)) AS gpu_sum, toUInt64(count(gpu_time_ms)) AS gpu_n,
    toUInt64(count(frame_ms)) AS beats_n,
    toUInt64(countIf(ifNull(frame_ms > 1000 / hz, 0))) AS slow_n
FROM (
    SELECT *,
        if(isNotNull(frame_time_ms), toFloat64(frame_time_ms), if(ifNull(fps, 0) > 0, 1000 / toFloat64(fps), NULL)) AS frame_ms,
        if(mapContains(metrics, 'display.hz') AND metrics['display.hz'] > 0, metrics['display.hz'], 60) AS hz
    FROM telemetry.events
    WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
            AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
                OR (player_id = '' AND session_id IN {identified:Array(String)}))))
        AND isNotNull(position_x) AND isNotNull(position_y)
        AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
                OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
)
GROUP BY project_id, map_id, day, platform, resolution, build_config, gpu, storage, x, y;

CREATE MATERIALIZED VIEW telemetry.alert_cells_mv TO telemetry.alert_cells AS
SELECT project_id, map_id, toDate(timestamp) AS day,
    platform, resolution, build_config, gpu, storage,
    floor(position_x / 25) * 25 AS x,
    floor(position_y / 25) * 25 AS y,
    sum(ifNull(toFloat64(fps), 0)) AS fps_sum, toUInt64(count(fps)) AS fps_n,
    sum(ifNull(toFloat64(frame_time_ms), 0)) AS frame_sum, toUInt64(count(frame_time_ms)) AS frame_n,
    sum(ifNull(memory_used_bytes / 1048576, 0)) AS mem_sum, toUInt64(count(memory_used_bytes)) AS mem_n,
    sum(ifNull(toFloat64(gpu_time_ms), 0)) AS gpu_sum, toUInt64(count(gpu_time_ms)) AS gpu_n,
    toUInt64(count(frame_ms)) AS beats_n,
    toUInt64(countIf(ifNull(frame_ms > 1000 / hz, 0))) AS slow_n
FROM (
    SELECT *,
        if(isNotNull(frame_time_ms), toFloat64(frame_time_ms), if(ifNull(fps, 0) > 0, 1000 / toFloat64(fps), NULL)) AS frame_ms,
        if(mapContains(metrics, 'display.hz') AND metrics['display.hz'] > 0, metrics['display.hz'], 60) AS hz
    FROM telemetry.events
    WHERE isNotNull(position_x) AND isNotNull(position_y)
        AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
                OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
)
GROUP BY project_id, map_id, day, platform, resolution, build_config, gpu, storage, x, y;

-- The replay view: the same, reading the events an erasure replays (0032_rollup_replay.sql).
CREATE MATERIALIZED VIEW telemetry.alert_cells_replay_mv TO telemetry.alert_cells AS
SELECT project_id, map_id, toDate(timestamp) AS day,
    platform, resolution, build_config, gpu, storage,
    floor(position_x / 25) * 25 AS x,
    floor(position_y / 25) * 25 AS y,
    sum(ifNull(toFloat64(fps), 0)) AS fps_sum, toUInt64(count(fps)) AS fps_n,
    sum(ifNull(toFloat64(frame_time_ms), 0)) AS frame_sum, toUInt64(count(frame_time_ms)) AS frame_n,
    sum(ifNull(memory_used_bytes / 1048576, 0)) AS mem_sum, toUInt64(count(memory_used_bytes)) AS mem_n,
    sum(ifNull(toFloat64(gpu_time_ms), 0)) AS gpu_sum, toUInt64(count(gpu_time_ms)) AS gpu_n,
    toUInt64(count(frame_ms)) AS beats_n,
    toUInt64(countIf(ifNull(frame_ms > 1000 / hz, 0))) AS slow_n
FROM (
    SELECT *,
        if(isNotNull(frame_time_ms), toFloat64(frame_time_ms), if(ifNull(fps, 0) > 0, 1000 / toFloat64(fps), NULL)) AS frame_ms,
        if(mapContains(metrics, 'display.hz') AND metrics['display.hz'] > 0, metrics['display.hz'], 60) AS hz
    FROM (SELECT * FROM telemetry.events_replay WHERE has(replay_targets, 'alert_cells'))
    WHERE isNotNull(position_x) AND isNotNull(position_y)
        AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
                OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
)
GROUP BY project_id, map_id, day, platform, resolution, build_config, gpu, storage, x, y;

-- The backfill: the new counts of every stored heartbeat, beside the rows under the same key.
INSERT INTO telemetry.alert_cells
SELECT project_id, map_id, day, platform, resolution, build_config, gpu, storage, x, y,
    0 AS fps_sum, toUInt64(0) AS fps_n, 0 AS frame_sum, toUInt64(0) AS frame_n,
    0 AS mem_sum, toUInt64(0) AS mem_n, 0 AS gpu_sum, toUInt64(0) AS gpu_n,
    beats_n, slow_n
FROM (
    SELECT project_id, map_id, toDate(timestamp) AS day,
        platform, resolution, build_config, gpu, storage,
        floor(position_x / 25) * 25 AS x,
        floor(position_y / 25) * 25 AS y,
        toUInt64(count(frame_ms)) AS beats_n,
        toUInt64(countIf(ifNull(frame_ms > 1000 / hz, 0))) AS slow_n
    FROM (
        SELECT *,
            if(isNotNull(frame_time_ms), toFloat64(frame_time_ms), if(ifNull(fps, 0) > 0, 1000 / toFloat64(fps), NULL)) AS frame_ms,
            if(mapContains(metrics, 'display.hz') AND metrics['display.hz'] > 0, metrics['display.hz'], 60) AS hz
        FROM telemetry.events
        WHERE isNotNull(position_x) AND isNotNull(position_y)
            AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
                    OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
    )
    GROUP BY project_id, map_id, day, platform, resolution, build_config, gpu, storage, x, y
)
WHERE beats_n > 0;
