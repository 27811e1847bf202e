-- One table of player and session bitmaps per (project, grain, bucket), filled by one view: it replaces
-- actor_days, actor_hours and actor_minutes (0024_actor_bitmaps.sql), whose three views each wrote a part
-- of their own on every insert into the events. A view costs an insert mostly per insert, not per row
-- (`npm run bench:views`): one view emitting the three grains writes one part where three views wrote
-- three, and aggregates the same rows (docs/analytics.md, "Distinct counts from bitmaps").
--
-- actor_buckets: `grain` 'day', 'hour' or 'minute'; `bucket` the grain's start (UTC), `day` its UTC date
-- (what the erasure's rebuild, the number backfill and the retention purge select rows by). `players` is the
-- bitmap of the bucket's player numbers; `sessions` that of its session numbers on the day grain only (no
-- read counts sessions by hour or minute: the hour and minute rows hold an empty bitmap there).
-- Each grain keeps the old table's retention: the hours 32 days (no rolling range reaches further), the
-- minutes 2 days (a rolling range reads at most two partial minutes of events), everything the plan
-- maximum as the retention's backstop (0015_retention_ttl.sql). Those are row TTLs, applied when parts merge:
-- a part holds rows of all three grains, so it cannot be dropped whole (no `ttl_only_drop_parts`).
-- The key starts (project, grain, day): a read of one grain's days, hours or minutes is one key range, and
-- the rebuild's and the purge's `day` conditions use the key too (within a grain, `day` is the date of
-- `bucket`, so adding it changes no order).
CREATE TABLE IF NOT EXISTS telemetry.actor_buckets
(
    project_id UUID,
    grain Enum8('day' = 1, 'hour' = 2, 'minute' = 3),
    day Date,
    bucket DateTime('UTC'),
    players AggregateFunction(groupBitmap, UInt32),
    sessions AggregateFunction(groupBitmap, UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, grain, day, bucket)
TTL bucket + INTERVAL 2 DAY DELETE WHERE grain = 'minute',
    bucket + INTERVAL 32 DAY DELETE WHERE grain = 'hour',
    day + INTERVAL 800 DAY;

-- The same SELECT as the view, parameterized for the erasure's and the backfill's rebuild of a project's
-- days (workers/api/erasure/rollups.ts, which re-inserts only the hours and minutes their TTLs keep).
-- Every event is counted in its day, hour and minute (ARRAY JOIN), in one aggregation.
CREATE VIEW IF NOT EXISTS telemetry.actor_buckets_src AS
SELECT project_id, g.1 AS grain, day, g.2 AS bucket,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players,
    groupBitmapStateIf(session_idx, session_idx != 0 AND g.1 = 'day') AS sessions
FROM (
    SELECT project_id, toDate(timestamp) AS day, player_idx, session_idx,
        [('day', toStartOfDay(timestamp)), ('hour', toStartOfHour(timestamp)), ('minute', toStartOfMinute(timestamp))] AS gs
    FROM telemetry.events
    WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
        AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
            OR (player_id = '' AND session_id IN {identified:Array(String)}))))
)
ARRAY JOIN gs AS g
GROUP BY project_id, grain, day, bucket;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.actor_buckets_mv TO telemetry.actor_buckets AS
SELECT project_id, g.1 AS grain, day, g.2 AS bucket,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players,
    groupBitmapStateIf(session_idx, session_idx != 0 AND g.1 = 'day') AS sessions
FROM (
    SELECT project_id, toDate(timestamp) AS day, player_idx, session_idx,
        [('day', toStartOfDay(timestamp)), ('hour', toStartOfHour(timestamp)), ('minute', toStartOfMinute(timestamp))] AS gs
    FROM telemetry.events
)
ARRAY JOIN gs AS g
GROUP BY project_id, grain, day, bucket;

-- The rows the old tables hold, copied rather than rebuilt from the events (the hours and minutes within
-- their TTLs). A bitmap union is idempotent: events inserted while this runs, counted both by the new view
-- and by an old one copied here, are still each number once.
INSERT INTO telemetry.actor_buckets
SELECT project_id, 'day', day, toDateTime(day, 'UTC'), groupBitmapMergeState(players), groupBitmapMergeState(sessions)
FROM telemetry.actor_days GROUP BY project_id, day;
INSERT INTO telemetry.actor_buckets
SELECT project_id, 'hour', day, hour, groupBitmapMergeState(players), groupBitmapStateIf(toUInt32(0), 0)
FROM telemetry.actor_hours WHERE hour >= now() - INTERVAL 32 DAY GROUP BY project_id, day, hour;
INSERT INTO telemetry.actor_buckets
SELECT project_id, 'minute', day, minute, groupBitmapMergeState(players), groupBitmapStateIf(toUInt32(0), 0)
FROM telemetry.actor_minutes WHERE minute >= now() - INTERVAL 2 DAY GROUP BY project_id, day, minute;

DROP VIEW IF EXISTS telemetry.actor_days_mv;
DROP VIEW IF EXISTS telemetry.actor_hours_mv;
DROP VIEW IF EXISTS telemetry.actor_minutes_mv;
DROP VIEW IF EXISTS telemetry.actor_days_src;
DROP VIEW IF EXISTS telemetry.actor_hours_src;
DROP VIEW IF EXISTS telemetry.actor_minutes_src;
DROP TABLE IF EXISTS telemetry.actor_days;
DROP TABLE IF EXISTS telemetry.actor_hours;
DROP TABLE IF EXISTS telemetry.actor_minutes
