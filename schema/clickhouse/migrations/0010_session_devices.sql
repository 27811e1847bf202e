-- Hardware context for the engine SDKs (docs/ingest.md, "Hardware context from the engine SDKs"). The
-- Unity, UE5 and Godot SDKs never send the device message (batch field 2 / event field 22) and cannot
-- attach anything to their automated heartbeats; a game sends one event named `device_info` per session
-- instead, its attributes named as the device message's fields. This table keeps one row per project,
-- day and session: the latest device_info of that session on that day. Reads attach it to every sample
-- of the session at read time (workers/api/analytics/device.ts), samples that arrived before it
-- included, the sample's own device columns (the web SDK's device message) winning field by field.
-- Sessions are keyed by cityHash64(session_id), as telemetry.session_values is: no identifier is
-- stored, and a read joins on the hash. Ordered by day after the project, so a read of a window reads
-- only that window's days (widened by one day each side: the bound in device.ts).
-- ReplacingMergeTree on the device_info's timestamp: a session that sent it twice on a day keeps the
-- later one after a merge; reads take argMax over timestamp, so they never depend on the merge.
CREATE TABLE IF NOT EXISTS telemetry.session_devices
(
    project_id UUID,
    day Date,
    session UInt64,
    timestamp DateTime64(6, 'UTC'),
    resolution LowCardinality(String),
    build_config LowCardinality(String),
    gpu LowCardinality(String),
    storage LowCardinality(String),
    cpu LowCardinality(String),
    os_version LowCardinality(String),
    device_model LowCardinality(String),
    memory_total_mb UInt32
)
ENGINE = ReplacingMergeTree(timestamp)
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, session)
SETTINGS index_granularity = 1024;

-- The attribute values are capped at ingest like every attribute; memory_total_mb is a decimal string
-- (anything else reads 0, "not sent"). No other expression of the view reads the events' own device
-- columns, so the aliases that share their names replace nothing.
CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.session_devices_mv TO telemetry.session_devices AS
SELECT project_id, toDate(timestamp) AS day, cityHash64(session_id) AS session, timestamp,
    attributes['resolution'] AS resolution, attributes['build_config'] AS build_config,
    attributes['gpu'] AS gpu, attributes['storage'] AS storage, attributes['cpu'] AS cpu,
    attributes['os_version'] AS os_version, attributes['device_model'] AS device_model,
    toUInt32OrZero(attributes['memory_total_mb']) AS memory_total_mb
FROM telemetry.events
WHERE event_name = 'device_info' AND session_id != '';

-- The device_info events that existed before the view.
INSERT INTO telemetry.session_devices
SELECT project_id, toDate(timestamp), cityHash64(session_id), timestamp,
    attributes['resolution'], attributes['build_config'], attributes['gpu'], attributes['storage'],
    attributes['cpu'], attributes['os_version'], attributes['device_model'],
    toUInt32OrZero(attributes['memory_total_mb'])
FROM telemetry.events
WHERE event_name = 'device_info' AND session_id != '';
