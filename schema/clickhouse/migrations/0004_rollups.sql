-- Rollups: aggregating tables fed by materialized views, so the analytics of whole UTC days (every
-- window is whole days, workers/shared/window.ts) read a few rows per day, cell or build instead of
-- every event. Each rollup below comes as four parts that must stay in step:
--   1. the table (AggregatingMergeTree of SimpleAggregateFunction / AggregateFunction columns, or a
--      SummingMergeTree where plain sums suffice), partitioned by month like the events;
--   2. `<name>_src`, a parameterized view with the one SELECT that turns events into rollup rows.
--      With whole = false it covers one project's `days` without the events of one player (the
--      erasure: workers/api/erasure/rollups.ts rebuilds those days from it); with whole = true all events
--      (the backfill below);
--   3. `<name>_mv`, the materialized view with the same SELECT and no restriction (a materialized view
--      cannot read a parameterized view, so the SELECT is written twice, side by side);
--   4. the backfill from the events that existed before the view.
-- These tables hold no player identifier: none is in a key, and session and player counts are hashed
-- states. A player erasure deletes and rebuilds the (project, day) rows the player touched.
-- Percentiles are kept as mergeable states of quantized samples: each sample v counts as q(v), v with
-- all but the 8 leading bits of its Float64 mantissa cleared (the lower bound of its bucket; 256 buckets
-- per octave), so 0 ≤ v − q(v) < 2^-8 · v ≈ 0.39 % of v for v > 0, and values with at most 9 significant
-- bits (integers below 512, 16.5, 4,096 MB …) stay exact. The samples are counted per q(v) in a
-- quantileExactWeighted state (a hash map q(v) → count, which merges exactly and holds at most one entry
-- per bucket whatever the volume: about 850 for a metric spanning a factor of 10). The reported
-- percentile is the nearest-rank one: the k-th smallest q(v), k = max(1, ceil(level · n)). Raw-event
-- queries compute the same function over the same q(v) (workers/api/analytics/percentiles.ts), so both paths
-- agree exactly; as q is monotone, the answer is q of the raw samples' own nearest-rank percentile.
-- Readers always aggregate (sum, max, -Merge …) over the key: parts not merged yet hold
-- several rows of one key. A row inserted into events twice would be counted twice here (the events'
-- ReplacingMergeTree would merge it away, a rollup cannot): the consumer writes each row once.


-- Heatmap, performance mode: per project, map, day and base cell of 25 world units (x, y and z origins
-- floor(v / 25) · 25; z is NaN when the event has no z), over the performance-bearing events. A
-- requested cell size that is a multiple of 25 (25, 50) is derived exactly:
-- floor(floor(v / 25) · 25 / s) · s = floor(v / s) · s; 2-D cells merge the z rows. Finer sizes (5, 10),
-- the events mode (one event name) and the build and platform filters read the events: a base cell of
-- 5 held about one row per event on the benchmark's 1 km maps, and a name, build or platform in this key
-- multiplies the rows every performance query merges. Averages are sum and count (exact), max memory a
-- max (-inf: none), percentiles quantized exact-weighted states (above).
CREATE TABLE IF NOT EXISTS telemetry.heatmap_cells
(
    project_id UUID,
    map_id LowCardinality(String),
    day Date,
    x Float64,
    y Float64,
    z Float64,
    events SimpleAggregateFunction(sum, UInt64),
    fps_sum SimpleAggregateFunction(sum, Float64),
    fps_n SimpleAggregateFunction(sum, UInt64),
    frame_sum SimpleAggregateFunction(sum, Float64),
    frame_n SimpleAggregateFunction(sum, UInt64),
    mem_sum SimpleAggregateFunction(sum, Float64),
    mem_n SimpleAggregateFunction(sum, UInt64),
    mem_max SimpleAggregateFunction(max, Float64),
    gpu_sum SimpleAggregateFunction(sum, Float64),
    gpu_n SimpleAggregateFunction(sum, UInt64),
    vram_sum SimpleAggregateFunction(sum, Float64),
    vram_n SimpleAggregateFunction(sum, UInt64),
    fps_q AggregateFunction(quantileExactWeighted(0.05), Float64, UInt8),
    frame_q AggregateFunction(quantileExactWeighted(0.95), Float64, UInt8),
    gpu_q AggregateFunction(quantileExactWeighted(0.95), Float64, UInt8),
    vram_q AggregateFunction(quantileExactWeighted(0.95), Float64, UInt8)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, map_id, day, x, y, z);

CREATE VIEW IF NOT EXISTS telemetry.heatmap_cells_src AS
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
    quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(vram)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(vram)) AS vram_q
FROM (
    SELECT project_id, map_id, toDate(timestamp) AS day,
        floor(position_x / 25) * 25 AS x,
        floor(position_y / 25) * 25 AS y,
        ifNull(floor(position_z / 25) * 25, nan) AS z,
        toNullable(toFloat64(fps)) AS fps, toNullable(toFloat64(frame_time_ms)) AS frame,
        memory_used_bytes / 1048576 AS mem, toNullable(toFloat64(gpu_time_ms)) AS gpu,
        if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL) AS vram
    FROM telemetry.events
    WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
        AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
            OR (player_id = '' AND session_id IN {identified:Array(String)}))))
    AND isNotNull(position_x) AND isNotNull(position_y) AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
)
GROUP BY project_id, map_id, day, x, y, z;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.heatmap_cells_mv TO telemetry.heatmap_cells AS
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
    quantileExactWeightedStateIf(0.95)(reinterpretAsFloat64(bitAnd(reinterpretAsUInt64(assumeNotNull(vram)), 0xFFFFF00000000000)), toUInt8(1), isNotNull(vram)) AS vram_q
FROM (
    SELECT project_id, map_id, toDate(timestamp) AS day,
        floor(position_x / 25) * 25 AS x,
        floor(position_y / 25) * 25 AS y,
        ifNull(floor(position_z / 25) * 25, nan) AS z,
        toNullable(toFloat64(fps)) AS fps, toNullable(toFloat64(frame_time_ms)) AS frame,
        memory_used_bytes / 1048576 AS mem, toNullable(toFloat64(gpu_time_ms)) AS gpu,
        if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL) AS vram
    FROM telemetry.events
    WHERE isNotNull(position_x) AND isNotNull(position_y) AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
)
GROUP BY project_id, map_id, day, x, y, z;

INSERT INTO telemetry.heatmap_cells
SELECT * FROM telemetry.heatmap_cells_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);

-- Alert evaluation: the mean of one metric per map cell over the performance-bearing events that match
-- a threshold profile's device filters. Per project, map, day, device and base cell of 25 (as the heatmap's):
-- sum and count of each alert metric; a cell's mean is sum / count over the matching rows.
CREATE TABLE IF NOT EXISTS telemetry.alert_cells
(
    project_id UUID,
    map_id LowCardinality(String),
    day Date,
    platform LowCardinality(String),
    resolution LowCardinality(String),
    build_config LowCardinality(String),
    gpu LowCardinality(String),
    storage LowCardinality(String),
    x Float64,
    y Float64,
    fps_sum Float64,
    fps_n UInt64,
    frame_sum Float64,
    frame_n UInt64,
    mem_sum Float64,
    mem_n UInt64,
    gpu_sum Float64,
    gpu_n UInt64
)
ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, map_id, day, platform, resolution, build_config, gpu, storage, x, y);

CREATE VIEW IF NOT EXISTS telemetry.alert_cells_src AS
SELECT project_id, map_id, toDate(timestamp) AS day,
    platform, resolution, build_config, gpu, storage,
    floor(position_x / 25) * 25 AS x,
    floor(position_y / 25) * 25 AS y,
    sum(ifNull(toFloat64(fps), 0)) AS fps_sum, toUInt64(count(fps)) AS fps_n,
    sum(ifNull(toFloat64(frame_time_ms), 0)) AS frame_sum, toUInt64(count(frame_time_ms)) AS frame_n,
    sum(ifNull(memory_used_bytes / 1048576, 0)) AS mem_sum, toUInt64(count(memory_used_bytes)) AS mem_n,
    sum(ifNull(toFloat64(gpu_time_ms), 0)) AS gpu_sum, toUInt64(count(gpu_time_ms)) AS gpu_n
FROM telemetry.events
WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
        AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
            OR (player_id = '' AND session_id IN {identified:Array(String)}))))
    AND isNotNull(position_x) AND isNotNull(position_y)
    AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
GROUP BY project_id, map_id, day, platform, resolution, build_config, gpu, storage, x, y;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.alert_cells_mv TO telemetry.alert_cells AS
SELECT project_id, map_id, toDate(timestamp) AS day,
    platform, resolution, build_config, gpu, storage,
    floor(position_x / 25) * 25 AS x,
    floor(position_y / 25) * 25 AS y,
    sum(ifNull(toFloat64(fps), 0)) AS fps_sum, toUInt64(count(fps)) AS fps_n,
    sum(ifNull(toFloat64(frame_time_ms), 0)) AS frame_sum, toUInt64(count(frame_time_ms)) AS frame_n,
    sum(ifNull(memory_used_bytes / 1048576, 0)) AS mem_sum, toUInt64(count(memory_used_bytes)) AS mem_n,
    sum(ifNull(toFloat64(gpu_time_ms), 0)) AS gpu_sum, toUInt64(count(gpu_time_ms)) AS gpu_n
FROM telemetry.events
WHERE isNotNull(position_x) AND isNotNull(position_y)
    AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
GROUP BY project_id, map_id, day, platform, resolution, build_config, gpu, storage, x, y;

INSERT INTO telemetry.alert_cells
SELECT * FROM telemetry.alert_cells_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);

-- Event counts per project, day, name, map, platform and build: the dashboard's events and top events,
-- and the insights' counts of every grouping.
CREATE TABLE IF NOT EXISTS telemetry.daily_events
(
    project_id UUID,
    day Date,
    event_name LowCardinality(String),
    map_id LowCardinality(String),
    platform LowCardinality(String),
    build_id LowCardinality(String),
    events UInt64
)
ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, event_name, map_id, platform, build_id);

CREATE VIEW IF NOT EXISTS telemetry.daily_events_src AS
SELECT project_id, toDate(timestamp) AS day, event_name, map_id, platform, build_id, toUInt64(count()) AS events
FROM telemetry.events
WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
        AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
            OR (player_id = '' AND session_id IN {identified:Array(String)}))))
GROUP BY project_id, day, event_name, map_id, platform, build_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.daily_events_mv TO telemetry.daily_events AS
SELECT project_id, toDate(timestamp) AS day, event_name, map_id, platform, build_id, toUInt64(count()) AS events
FROM telemetry.events
GROUP BY project_id, day, event_name, map_id, platform, build_id;

INSERT INTO telemetry.daily_events
SELECT * FROM telemetry.daily_events_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);

-- Builds list: per project, build and day, the performance-bearing events of non-empty builds: count,
-- first and last timestamp, and uniq states of sessions and players (the spec's approximate counts;
-- merged states give what uniq over the events gives).
CREATE TABLE IF NOT EXISTS telemetry.build_days
(
    project_id UUID,
    day Date,
    build_id LowCardinality(String),
    events SimpleAggregateFunction(sum, UInt64),
    first_seen SimpleAggregateFunction(min, DateTime64(6, 'UTC')),
    last_seen SimpleAggregateFunction(max, DateTime64(6, 'UTC')),
    sessions AggregateFunction(uniq, String),
    players AggregateFunction(uniq, String)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, build_id);

CREATE VIEW IF NOT EXISTS telemetry.build_days_src AS
SELECT project_id, toDate(timestamp) AS day, build_id, toUInt64(count()) AS events,
    min(timestamp) AS first_seen, max(timestamp) AS last_seen,
    uniqState(session_id) AS sessions,
    uniqState(if(empty(player_id), session_id, player_id)) AS players
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
    uniqState(session_id) AS sessions,
    uniqState(if(empty(player_id), session_id, player_id)) AS players
FROM telemetry.events
WHERE build_id != '' AND (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0)
GROUP BY project_id, day, build_id;

INSERT INTO telemetry.build_days
SELECT * FROM telemetry.build_days_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);

-- builds/compare: per project, build, day, map and platform, the events carrying at least one compared
-- metric: count, first and last timestamp, session and player sets (uniqExact states of their 64-bit
-- hashes, as every distinct count: workers/api/analytics/select.ts), and per
-- metric n0..n7 its sample count and q0..q7 a state of its p50 and p95 (quantized, above), in the order of COMPARE_METRICS
-- (workers/api/analytics/compare.ts): frame time, memory, GPU time, io.read_bytes, io.read_time_ms,
-- io.read_ops, load_time_ms, mem.vram.
CREATE TABLE IF NOT EXISTS telemetry.compare_days
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
ORDER BY (project_id, build_id, day, map_id, platform);

CREATE VIEW IF NOT EXISTS telemetry.compare_days_src AS
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
    WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
        AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
            OR (player_id = '' AND session_id IN {identified:Array(String)}))))
    AND (isNotNull(v0) OR isNotNull(v1) OR isNotNull(v2) OR isNotNull(v3) OR isNotNull(v4) OR isNotNull(v5) OR isNotNull(v6) OR isNotNull(v7))
)
GROUP BY project_id, build_id, day, map_id, platform;

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

INSERT INTO telemetry.compare_days
SELECT * FROM telemetry.compare_days_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);

-- builds/compare without a map or platform filter (the CLI's perf-diff and the dashboard's default):
-- the same per build and day, so a session seen on several maps or platforms is one entry of one set
-- rather than one per (map, platform) row to union at read time.
CREATE TABLE IF NOT EXISTS telemetry.compare_builds
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
ORDER BY (project_id, build_id, day);

CREATE VIEW IF NOT EXISTS telemetry.compare_builds_src AS
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
    WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
        AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
            OR (player_id = '' AND session_id IN {identified:Array(String)}))))
    AND (isNotNull(v0) OR isNotNull(v1) OR isNotNull(v2) OR isNotNull(v3) OR isNotNull(v4) OR isNotNull(v5) OR isNotNull(v6) OR isNotNull(v7))
)
GROUP BY project_id, build_id, day;

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

INSERT INTO telemetry.compare_builds
SELECT * FROM telemetry.compare_builds_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);

-- Who played in which UTC hour, for the last 32 days only (TTL): the dashboard's rolling counts (dau: the
-- last 24 hours; mau: the last 30 days) are whole days from daily_actors, whole hours from here and two
-- partial hours from the events, instead of two partial days of events (which grow with the volume).
-- Rows are sets, like daily_actors; a player erasure deletes the player's rows (workers/api/erasure/steps.ts).
CREATE TABLE IF NOT EXISTS telemetry.hourly_players
(
    project_id UUID,
    hour DateTime('UTC'),
    id String
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour, id)
TTL hour + INTERVAL 32 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.hourly_players_mv TO telemetry.hourly_players AS
SELECT DISTINCT project_id, toStartOfHour(timestamp) AS hour, if(empty(player_id), session_id, player_id) AS id
FROM telemetry.events
WHERE timestamp >= now() - INTERVAL 32 DAY;

INSERT INTO telemetry.hourly_players
SELECT DISTINCT project_id, toStartOfHour(timestamp) AS hour, if(empty(player_id), session_id, player_id) AS id
FROM telemetry.events
WHERE timestamp >= now() - INTERVAL 32 DAY;
