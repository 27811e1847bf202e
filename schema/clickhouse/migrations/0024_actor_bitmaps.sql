-- The analytics backbone's exact distinct counts (docs/analytics.md, "Distinct counts from bitmaps"):
-- roaring bitmaps (groupBitmap states) of the dense player and session numbers that ingest writes on every
-- event (0023_actor_numbers.sql, workers/shared/actors.ts), per project and UTC day, hour, minute, and per
-- (day, event name, dimension value). A distinct count over any set of buckets is the cardinality of the
-- OR of their bitmaps: merging is the answer, so nothing is stamped, stored per read or recomputed, and a
-- late batch or a future-dated event simply lands in its own bucket. Rows with number 0 (stored before
-- numbering, not yet backfilled) are left out; the backfill rebuilds the buckets of the rows it numbers
-- (workers/api/analytics/numbers-backfill.ts).
--
-- Each table follows 0004_rollups.sql's pattern: the table, `<name>_src` (the SELECT as a parameterized
-- view, which the erasure uses to rebuild a player's days without them, workers/api/erasure/rollups.ts,
-- and the backfill to rebuild the days it numbered), and `<name>_mv` (the same SELECT on every insert).
-- Every table has a `day` column, so one rebuild deletes and re-inserts a day's rows of any of them.
-- They hold no player identifier, only numbers whose mapping lives in the project's BatchClaims object
-- (deleted by an erasure).
--
-- They replace daily_actors, daily_players, daily_player_counts, daily_sessions, daily_session_counts,
-- hourly_players, player_last_seen and player_days (dropped below).

-- actor_days: the players and the sessions of each (project, day).
CREATE TABLE IF NOT EXISTS telemetry.actor_days
(
    project_id UUID,
    day Date,
    players AggregateFunction(groupBitmap, UInt32),
    sessions AggregateFunction(groupBitmap, UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day)
TTL day + INTERVAL 800 DAY
SETTINGS ttl_only_drop_parts = 1;

CREATE VIEW IF NOT EXISTS telemetry.actor_days_src AS
SELECT project_id, toDate(timestamp) AS day,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players,
    groupBitmapStateIf(session_idx, session_idx != 0) AS sessions
FROM telemetry.events
WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
    AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
        OR (player_id = '' AND session_id IN {identified:Array(String)}))))
GROUP BY project_id, day;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.actor_days_mv TO telemetry.actor_days AS
SELECT project_id, toDate(timestamp) AS day,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players,
    groupBitmapStateIf(session_idx, session_idx != 0) AS sessions
FROM telemetry.events
GROUP BY project_id, day;

-- actor_hours: the players of each (project, hour), for the whole hours at both ends of a rolling range
-- (the 24 hours and 30 days ending now). Kept 32 days: no rolling range reaches further.
CREATE TABLE IF NOT EXISTS telemetry.actor_hours
(
    project_id UUID,
    day Date,
    hour DateTime('UTC'),
    players AggregateFunction(groupBitmap, UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, hour)
TTL hour + INTERVAL 32 DAY;

CREATE VIEW IF NOT EXISTS telemetry.actor_hours_src AS
SELECT project_id, toDate(timestamp) AS day, toStartOfHour(timestamp) AS hour,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players
FROM telemetry.events
WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
    AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
        OR (player_id = '' AND session_id IN {identified:Array(String)}))))
GROUP BY project_id, day, hour;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.actor_hours_mv TO telemetry.actor_hours AS
SELECT project_id, toDate(timestamp) AS day, toStartOfHour(timestamp) AS hour,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players
FROM telemetry.events
GROUP BY project_id, day, hour;

-- actor_minutes: the players of each (project, minute), for the whole minutes at both ends of a rolling
-- range: a rolling count reads at most two partial minutes of events. Kept 2 days.
CREATE TABLE IF NOT EXISTS telemetry.actor_minutes
(
    project_id UUID,
    day Date,
    minute DateTime('UTC'),
    players AggregateFunction(groupBitmap, UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, minute)
TTL minute + INTERVAL 2 DAY;

CREATE VIEW IF NOT EXISTS telemetry.actor_minutes_src AS
SELECT project_id, toDate(timestamp) AS day, toStartOfMinute(timestamp) AS minute,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players
FROM telemetry.events
WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
    AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
        OR (player_id = '' AND session_id IN {identified:Array(String)}))))
GROUP BY project_id, day, minute;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.actor_minutes_mv TO telemetry.actor_minutes AS
SELECT project_id, toDate(timestamp) AS day, toStartOfMinute(timestamp) AS minute,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players
FROM telemetry.events
GROUP BY project_id, day, minute;

-- player_dims: the players of each (project, day, event name, dimension, value), one dimension per row
-- (never their product): dim '' (dim_value '') for the event name alone, 'map', 'platform' and 'build'. Unique
-- players by a dimension, or of one event name, OR these rows instead of reading the events.
CREATE TABLE IF NOT EXISTS telemetry.player_dims
(
    project_id UUID,
    day Date,
    event_name LowCardinality(String),
    dim LowCardinality(String),
    dim_value String,
    players AggregateFunction(groupBitmap, UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, dim, event_name, dim_value)
TTL day + INTERVAL 800 DAY
SETTINGS ttl_only_drop_parts = 1;

CREATE VIEW IF NOT EXISTS telemetry.player_dims_src AS
SELECT project_id, day, event_name, dv.1 AS dim, dv.2 AS dim_value,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players
FROM (
    SELECT project_id, toDate(timestamp) AS day, event_name, player_idx,
        [('', ''), ('map', toString(map_id)), ('platform', toString(platform)), ('build', toString(build_id))] AS dvs
    FROM telemetry.events
    WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
        AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
            OR (player_id = '' AND session_id IN {identified:Array(String)}))))
)
ARRAY JOIN dvs AS dv
GROUP BY project_id, day, event_name, dim, dim_value;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.player_dims_mv TO telemetry.player_dims AS
SELECT project_id, day, event_name, dv.1 AS dim, dv.2 AS dim_value,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players
FROM (
    SELECT project_id, toDate(timestamp) AS day, event_name, player_idx,
        [('', ''), ('map', toString(map_id)), ('platform', toString(platform)), ('build', toString(build_id))] AS dvs
    FROM telemetry.events
)
ARRAY JOIN dvs AS dv
GROUP BY project_id, day, event_name, dim, dim_value;

-- The numbered rows stored before these views (the backfill numbers the rest and rebuilds their days).
INSERT INTO telemetry.actor_days SELECT * FROM telemetry.actor_days_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);
INSERT INTO telemetry.actor_hours SELECT * FROM telemetry.actor_hours_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []) WHERE hour >= now() - INTERVAL 32 DAY;
INSERT INTO telemetry.actor_minutes SELECT * FROM telemetry.actor_minutes_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []) WHERE minute >= now() - INTERVAL 2 DAY;
INSERT INTO telemetry.player_dims SELECT * FROM telemetry.player_dims_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = []);

-- Retired: every per-read rollup the bitmaps replace, with their stamps and stored counts.
DROP VIEW IF EXISTS telemetry.daily_actors_mv;
DROP VIEW IF EXISTS telemetry.daily_players_mv;
DROP VIEW IF EXISTS telemetry.daily_sessions_mv;
DROP VIEW IF EXISTS telemetry.hourly_players_mv;
DROP VIEW IF EXISTS telemetry.player_last_seen_mv;
DROP VIEW IF EXISTS telemetry.player_days_mv;
DROP TABLE IF EXISTS telemetry.daily_actors;
DROP TABLE IF EXISTS telemetry.daily_players;
DROP TABLE IF EXISTS telemetry.daily_player_counts;
DROP TABLE IF EXISTS telemetry.daily_sessions;
DROP TABLE IF EXISTS telemetry.daily_session_counts;
DROP TABLE IF EXISTS telemetry.hourly_players;
DROP TABLE IF EXISTS telemetry.player_last_seen;
DROP TABLE IF EXISTS telemetry.player_days
