-- Stored session verdicts for closed days (docs/analytics.md, "Session verdicts", "Stored days";
-- workers/api/analytics/session-verdicts.ts, session-medians.ts). The verdicts read (builds/compare and
-- builds/regressions with their session verdicts, the poor-session share) merged every heartbeat of
-- every session of two builds over the window: 9.5 s and 13.75M rows at 100M events. The session-medians
-- job already stores each closed day's sessions seen on no other day near it (`counted`: their whole
-- window is that day), as histograms of their medians; it now stores their verdicts too, counted per
-- build, map grouping and hardware key exactly as the read counts them, and carries the heartbeat
-- columns of the day's other sessions beside their medians, so a read merges those with their other
-- days' rows.
--
-- session_verdict_hist: per build, day, version and grouping (by_map / map_id and by_key / key_value as
-- in session_median_hist), the counted sessions with a heartbeat, by verdict (good, acceptable, poor,
-- unjudged), their heartbeats with a frame length, those over budget, the slow ones by bound (b0…b5:
-- frame-causes.ts BOUNDS in order), hitches, and the time played (µs, first to last heartbeat).
--
-- Could a shared table answer the read? No: these are results of closed days, not rollups of events,
-- and no view fills them (ingest pays nothing). session_median_hist's rows are a histogram per metric
-- value; a verdict is a session's, over all its heartbeats, and adds up by counts, not by values. The
-- carried rows are session_median_carry's, which gains the six heartbeat columns of session_values
-- (0036) instead of a second carry table.
--
-- Stored days before this carry no heartbeat columns: they are forgotten, as 0033 did, and the hourly
-- job stores them again; until then compare and regressions read session_values with the same answers.
CREATE TABLE IF NOT EXISTS telemetry.session_verdict_hist
(
    project_id UUID,
    build_id LowCardinality(String),
    day Date,
    version UInt64,
    by_map UInt8,
    map_id LowCardinality(String),
    by_key UInt8,
    key_value String,
    sessions UInt64,
    good UInt64,
    acceptable UInt64,
    poor UInt64,
    unjudged UInt64,
    heartbeats UInt64,
    slow UInt64,
    b0 UInt64,
    b1 UInt64,
    b2 UInt64,
    b3 UInt64,
    b4 UInt64,
    b5 UInt64,
    hitches UInt64,
    played_us Int64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, build_id, by_map, map_id, by_key, day, version, key_value)
TTL day + INTERVAL 800 DAY
SETTINGS ttl_only_drop_parts = 1;

ALTER TABLE telemetry.session_median_carry
    ADD COLUMN IF NOT EXISTS frames Map(UInt32, UInt64),
    ADD COLUMN IF NOT EXISTS over_budget UInt64,
    ADD COLUMN IF NOT EXISTS slow_bounds Map(UInt8, UInt64),
    ADD COLUMN IF NOT EXISTS slow_memory Map(UInt64, UInt64),
    ADD COLUMN IF NOT EXISTS first_heartbeat Nullable(DateTime64(6, 'UTC')),
    ADD COLUMN IF NOT EXISTS last_heartbeat Nullable(DateTime64(6, 'UTC'));

TRUNCATE TABLE IF EXISTS telemetry.session_median_carry;
TRUNCATE TABLE IF EXISTS telemetry.session_median_hist;
TRUNCATE TABLE IF EXISTS telemetry.session_median_days;
