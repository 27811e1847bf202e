-- Rollups: aggregating tables fed by materialized views, so the analytics of whole UTC days (every
-- window is whole days, workers/shared/window.ts) read a few rows per day, cell or build instead of
-- every event. Each rollup below comes as four parts that must stay in step:
--   1. the table (AggregatingMergeTree of SimpleAggregateFunction / AggregateFunction columns, or a
--      SummingMergeTree where plain sums suffice), partitioned by month like the events;
--   2. `<name>_src`, a parameterized view with the one SELECT that turns events into rollup rows.
--      With whole = false it covers one project's `days` without the events of one player (the
--      erasure: workers/erasure/rollups.ts rebuilds those days from it); with whole = true all events
--      (the backfill below);
--   3. `<name>_mv`, the materialized view with the same SELECT and no restriction (a materialized view
--      cannot read a parameterized view, so the SELECT is written twice, side by side);
--   4. the backfill from the events that existed before the view.
-- These tables hold no player identifier: none is in a key, and session and player counts are hashed
-- states. A player erasure deletes and rebuilds the (project, day) rows the player touched.
-- Percentiles are kept as fixed-resolution histograms: each sample is rounded to 0.01 of its unit
-- (q(v) = floor(v · 100 + 0.5) / 100: fps, ms, MB, bytes, operations) and counted per rounded value in
-- a sumMap, which merges exactly. The percentile of the rounded samples is the rounded exact
-- percentile (rounding is monotone), so a reported percentile is within 0.005 units of the exact one;
-- raw-event queries round the same way (workers/analytics/percentiles.ts), so both paths agree.
-- Readers always aggregate (sum, max, sumMap, uniqMerge …) over the key: parts not merged yet hold
-- several rows of one key. A row inserted into events twice would be counted twice here (the events'
-- ReplacingMergeTree would merge it away, a rollup cannot): the consumer writes each row once.


-- Heatmap: per project, map, mode, day and base cell of 25 world units (x, y and z origins
-- floor(v / 25) · 25; z is NaN when the event has no z). A requested cell size that is a multiple of 25
-- (25, 50) is derived exactly: floor(floor(v / 25) · 25 / s) · s = floor(v / s) · s. Finer sizes (5,
-- 10) read the events: a base cell of 5 held about one row per event on the benchmark's 1 km maps (no
-- saving) and doubled the cost of every insert.
-- Each event is in exactly one row, keyed by its name and whether it is performance-bearing: the
-- performance mode reads the rows with perf = true of every name, the events mode the rows of one name
-- (a separate copy per mode cost twice the groups on every insert). Averages are sum and count, max
-- memory a max (-inf: none), percentiles histograms.
CREATE TABLE IF NOT EXISTS telemetry.heatmap_cells
(
    project_id UUID,
    map_id LowCardinality(String),
    event_name LowCardinality(String),
    perf Bool,
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
    fps_hist SimpleAggregateFunction(sumMap, Tuple(Array(Float64), Array(UInt64))),
    frame_hist SimpleAggregateFunction(sumMap, Tuple(Array(Float64), Array(UInt64))),
    gpu_hist SimpleAggregateFunction(sumMap, Tuple(Array(Float64), Array(UInt64))),
    vram_hist SimpleAggregateFunction(sumMap, Tuple(Array(Float64), Array(UInt64)))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, map_id, day, perf, event_name, x, y, z);

CREATE VIEW IF NOT EXISTS telemetry.heatmap_cells_src AS
SELECT project_id, map_id, event_name, perf, day, x, y, z,
    toUInt64(count()) AS events,
    sum(ifNull(fps, 0)) AS fps_sum, toUInt64(count(fps)) AS fps_n,
    sum(ifNull(frame, 0)) AS frame_sum, toUInt64(count(frame)) AS frame_n,
    sum(ifNull(mem, 0)) AS mem_sum, toUInt64(count(mem)) AS mem_n,
    max(ifNull(mem, -inf)) AS mem_max,
    sum(ifNull(gpu, 0)) AS gpu_sum, toUInt64(count(gpu)) AS gpu_n,
    sum(ifNull(vram, 0)) AS vram_sum, toUInt64(count(vram)) AS vram_n,
    sumMap(if(isNull(fps), CAST([], 'Array(Float64)'), [floor(assumeNotNull(fps) * 100 + 0.5) / 100]),
        if(isNull(fps), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS fps_hist,
    sumMap(if(isNull(frame), CAST([], 'Array(Float64)'), [floor(assumeNotNull(frame) * 100 + 0.5) / 100]),
        if(isNull(frame), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS frame_hist,
    sumMap(if(isNull(gpu), CAST([], 'Array(Float64)'), [floor(assumeNotNull(gpu) * 100 + 0.5) / 100]),
        if(isNull(gpu), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS gpu_hist,
    sumMap(if(isNull(vram), CAST([], 'Array(Float64)'), [floor(assumeNotNull(vram) * 100 + 0.5) / 100]),
        if(isNull(vram), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS vram_hist
FROM (
    SELECT project_id, map_id, event_name, (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0) AS perf,
        toDate(timestamp) AS day,
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
    AND isNotNull(position_x) AND isNotNull(position_y)
)
GROUP BY project_id, map_id, event_name, perf, day, x, y, z;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.heatmap_cells_mv TO telemetry.heatmap_cells AS
SELECT project_id, map_id, event_name, perf, day, x, y, z,
    toUInt64(count()) AS events,
    sum(ifNull(fps, 0)) AS fps_sum, toUInt64(count(fps)) AS fps_n,
    sum(ifNull(frame, 0)) AS frame_sum, toUInt64(count(frame)) AS frame_n,
    sum(ifNull(mem, 0)) AS mem_sum, toUInt64(count(mem)) AS mem_n,
    max(ifNull(mem, -inf)) AS mem_max,
    sum(ifNull(gpu, 0)) AS gpu_sum, toUInt64(count(gpu)) AS gpu_n,
    sum(ifNull(vram, 0)) AS vram_sum, toUInt64(count(vram)) AS vram_n,
    sumMap(if(isNull(fps), CAST([], 'Array(Float64)'), [floor(assumeNotNull(fps) * 100 + 0.5) / 100]),
        if(isNull(fps), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS fps_hist,
    sumMap(if(isNull(frame), CAST([], 'Array(Float64)'), [floor(assumeNotNull(frame) * 100 + 0.5) / 100]),
        if(isNull(frame), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS frame_hist,
    sumMap(if(isNull(gpu), CAST([], 'Array(Float64)'), [floor(assumeNotNull(gpu) * 100 + 0.5) / 100]),
        if(isNull(gpu), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS gpu_hist,
    sumMap(if(isNull(vram), CAST([], 'Array(Float64)'), [floor(assumeNotNull(vram) * 100 + 0.5) / 100]),
        if(isNull(vram), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS vram_hist
FROM (
    SELECT project_id, map_id, event_name, (ifNull(fps, 0) > 0 OR ifNull(frame_time_ms, 0) > 0
            OR ifNull(memory_used_bytes, 0) > 0 OR ifNull(gpu_time_ms, 0) > 0) AS perf,
        toDate(timestamp) AS day,
        floor(position_x / 25) * 25 AS x,
        floor(position_y / 25) * 25 AS y,
        ifNull(floor(position_z / 25) * 25, nan) AS z,
        toNullable(toFloat64(fps)) AS fps, toNullable(toFloat64(frame_time_ms)) AS frame,
        memory_used_bytes / 1048576 AS mem, toNullable(toFloat64(gpu_time_ms)) AS gpu,
        if(mapContains(metrics, 'mem.vram'), metrics['mem.vram'] / 1048576, NULL) AS vram
    FROM telemetry.events
    WHERE isNotNull(position_x) AND isNotNull(position_y)
)
GROUP BY project_id, map_id, event_name, perf, day, x, y, z;

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
-- metric: count, first and last timestamp, exact session and player sets (uniqExact states), and per
-- metric h0..h7 a histogram of its rounded samples, in the order of COMPARE_METRICS
-- (workers/analytics/compare.ts): frame time, memory, GPU time, io.read_bytes, io.read_time_ms,
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
    sessions AggregateFunction(uniqExact, String),
    players AggregateFunction(uniqExact, String),
    h0 SimpleAggregateFunction(sumMap, Tuple(Array(Float64), Array(UInt64))),
    h1 SimpleAggregateFunction(sumMap, Tuple(Array(Float64), Array(UInt64))),
    h2 SimpleAggregateFunction(sumMap, Tuple(Array(Float64), Array(UInt64))),
    h3 SimpleAggregateFunction(sumMap, Tuple(Array(Float64), Array(UInt64))),
    h4 SimpleAggregateFunction(sumMap, Tuple(Array(Float64), Array(UInt64))),
    h5 SimpleAggregateFunction(sumMap, Tuple(Array(Float64), Array(UInt64))),
    h6 SimpleAggregateFunction(sumMap, Tuple(Array(Float64), Array(UInt64))),
    h7 SimpleAggregateFunction(sumMap, Tuple(Array(Float64), Array(UInt64)))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, build_id, day, map_id, platform);

CREATE VIEW IF NOT EXISTS telemetry.compare_days_src AS
SELECT project_id, build_id, day, map_id, platform, toUInt64(count()) AS events,
    min(timestamp) AS first_seen, max(timestamp) AS last_seen,
    uniqExactState(session_id) AS sessions, uniqExactState(player) AS players,
    sumMap(if(isNull(v0), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v0) * 100 + 0.5) / 100]),
        if(isNull(v0), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h0,
    sumMap(if(isNull(v1), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v1) * 100 + 0.5) / 100]),
        if(isNull(v1), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h1,
    sumMap(if(isNull(v2), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v2) * 100 + 0.5) / 100]),
        if(isNull(v2), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h2,
    sumMap(if(isNull(v3), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v3) * 100 + 0.5) / 100]),
        if(isNull(v3), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h3,
    sumMap(if(isNull(v4), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v4) * 100 + 0.5) / 100]),
        if(isNull(v4), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h4,
    sumMap(if(isNull(v5), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v5) * 100 + 0.5) / 100]),
        if(isNull(v5), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h5,
    sumMap(if(isNull(v6), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v6) * 100 + 0.5) / 100]),
        if(isNull(v6), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h6,
    sumMap(if(isNull(v7), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v7) * 100 + 0.5) / 100]),
        if(isNull(v7), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h7
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
    uniqExactState(session_id) AS sessions, uniqExactState(player) AS players,
    sumMap(if(isNull(v0), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v0) * 100 + 0.5) / 100]),
        if(isNull(v0), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h0,
    sumMap(if(isNull(v1), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v1) * 100 + 0.5) / 100]),
        if(isNull(v1), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h1,
    sumMap(if(isNull(v2), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v2) * 100 + 0.5) / 100]),
        if(isNull(v2), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h2,
    sumMap(if(isNull(v3), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v3) * 100 + 0.5) / 100]),
        if(isNull(v3), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h3,
    sumMap(if(isNull(v4), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v4) * 100 + 0.5) / 100]),
        if(isNull(v4), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h4,
    sumMap(if(isNull(v5), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v5) * 100 + 0.5) / 100]),
        if(isNull(v5), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h5,
    sumMap(if(isNull(v6), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v6) * 100 + 0.5) / 100]),
        if(isNull(v6), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h6,
    sumMap(if(isNull(v7), CAST([], 'Array(Float64)'), [floor(assumeNotNull(v7) * 100 + 0.5) / 100]),
        if(isNull(v7), CAST([], 'Array(UInt64)'), [toUInt64(1)])) AS h7
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
