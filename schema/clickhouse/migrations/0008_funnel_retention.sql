-- Funnels and retention read per-player data whose size follows the players, not the events.
-- Both tables hold the player as cityHash64 of its identifier (the event's player_id, or its session_id
-- when player_id is empty), as the analytics already group by it: a UInt64 costs less to read, sort
-- and group than the string, and with a million players two share a hash with a chance of about 3 in
-- 10^8. Both hold player-derived rows: the player erasure deletes the rows of the player's hash and of
-- the hashes of the sessions they signed into (workers/api/erasure/steps.ts).

-- Funnels: the step events only in what a funnel reads (name, time, player), ordered by project, event
-- name and day, then player. A funnel's filter (its step names over its window) narrows the read by the
-- primary key to those names' granules, and each granule holds 16 bytes per event instead of the
-- events' player string, which the read hashed row by row. Plain MergeTree: a row written twice (a
-- consumer race that the events' ReplacingMergeTree would merge away) cannot change a funnel, as
-- events of one player at the same microsecond never form two steps in either statement
-- (workers/api/analytics/funnels.ts).
CREATE TABLE IF NOT EXISTS telemetry.funnel_events
(
    project_id UUID,
    event_name LowCardinality(String),
    timestamp DateTime64(6, 'UTC'),
    player_hash UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, event_name, toDate(timestamp), player_hash, timestamp);

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.funnel_events_mv TO telemetry.funnel_events AS
SELECT project_id, event_name, timestamp, cityHash64(if(empty(player_id), session_id, player_id)) AS player_hash
FROM telemetry.events;

INSERT INTO telemetry.funnel_events
SELECT project_id, event_name, timestamp, cityHash64(if(empty(player_id), session_id, player_id)) AS player_hash
FROM telemetry.events;

-- Retention: one row per (project, player, UTC day with an event), ordered by player. A player's cohort
-- is their first day (the minimum over their rows, so a late event of an earlier day moves them) and
-- their return days are the same rows: retention reads the project's player-days once, grouped by a
-- UInt64, with no join, whatever the number of events per player and day. Rows are sets, so a
-- duplicate is harmless (readers take min and has(); merges drop it).
CREATE TABLE IF NOT EXISTS telemetry.player_days
(
    project_id UUID,
    player_hash UInt64,
    day Date
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, player_hash, day);

-- Fed from funnel_events, whose rows already carry the hash: the player string is hashed once per
-- event, by funnel_events_mv, for both tables (a view on a view's target runs on the block that view
-- inserts).
CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.player_days_mv TO telemetry.player_days AS
SELECT DISTINCT project_id, player_hash, toDate(timestamp) AS day
FROM telemetry.funnel_events;

INSERT INTO telemetry.player_days
SELECT DISTINCT project_id, player_hash, toDate(timestamp) AS day
FROM telemetry.funnel_events;

-- player_first_seen (0002) only served retention, which player_days now answers: its view no longer
-- costs every insert a GROUP BY of player strings, and the table goes with it (and its erasure step).
DROP VIEW IF EXISTS telemetry.player_first_seen_mv;
DROP TABLE IF EXISTS telemetry.player_first_seen;
