-- Stored session-median days for every grouping builds/regressions reads (docs/analytics.md, "Build
-- regressions", "Stored days"; workers/api/analytics/session-medians.ts). 0030 stored each closed day's
-- histograms by map and platform only, which answered compare's verdicts; regressions by a device key
-- (gpu, device model, resolution, OS version, and the GPU tiers built from gpu) still merged every
-- session's samples of the window. The histograms are now kept per hardware key: `by_key` numbers it
-- (0 none, 1 platform, 2 gpu, 3 device_model, 4 resolution, 5 os_version; session-medians.ts
-- STORED_GROUPINGS) and `key_value` holds its value ('' for not sent), the device keys being the session's
-- effective hardware (its own, else its device_info: analytics/device.ts). The carried rows keep the
-- device columns as stored, so a read joins them with device_info as it does session_values' rows.
--
-- No shared table answers this: the histograms are results of closed days, not rollups of events, and no
-- view fills them (ingest pays nothing). They are derived data: the table is recreated and the stored
-- days forgotten, and the hourly session-medians job stores them again (at 20M events, 28 days in about
-- two minutes); until then compare and regressions read session_values as before, with the same answer.
DROP TABLE IF EXISTS telemetry.session_median_hist;
CREATE TABLE telemetry.session_median_hist
(
    project_id UUID,
    build_id LowCardinality(String),
    day Date,
    version UInt64,
    by_map UInt8,
    map_id LowCardinality(String),
    by_key UInt8,
    key_value String,
    metric UInt8,
    value Float32,
    sessions UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, build_id, by_map, map_id, by_key, day, version, key_value, metric, value)
TTL day + INTERVAL 800 DAY
SETTINGS ttl_only_drop_parts = 1;
ALTER TABLE telemetry.session_median_carry
    ADD COLUMN IF NOT EXISTS gpu LowCardinality(String) AFTER platform,
    ADD COLUMN IF NOT EXISTS device_model LowCardinality(String) AFTER gpu,
    ADD COLUMN IF NOT EXISTS resolution LowCardinality(String) AFTER device_model,
    ADD COLUMN IF NOT EXISTS os_version LowCardinality(String) AFTER resolution;
TRUNCATE TABLE IF EXISTS telemetry.session_median_carry;
TRUNCATE TABLE IF EXISTS telemetry.session_median_days;
