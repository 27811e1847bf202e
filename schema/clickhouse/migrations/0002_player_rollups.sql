-- Each player's first event in a project, for retention cohorts: a cohort date is the player's first
-- event ever, which must not require scanning the project's whole history at read time.
-- SimpleAggregateFunction(min) makes duplicates and out-of-order inserts harmless: merges keep the
-- minimum, and readers take min() over the parts not merged yet.
-- Holds player identifiers: a player erasure must delete from this table as well as from events.
CREATE TABLE IF NOT EXISTS telemetry.player_first_seen
(
    project_id UUID,
    player String,
    first_seen SimpleAggregateFunction(min, DateTime64(6, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY (project_id, player);

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.player_first_seen_mv TO telemetry.player_first_seen AS
SELECT project_id, if(empty(player_id), session_id, player_id) AS player, min(timestamp) AS first_seen
FROM telemetry.events
GROUP BY project_id, player;

-- Events that arrived before the view existed. Overlap with rows the view already wrote is harmless.
INSERT INTO telemetry.player_first_seen
SELECT project_id, player, min(timestamp)
FROM telemetry.events
GROUP BY project_id, player;

-- Who was active on which UTC day: one row per (project, day, player) and per (project, day, session).
-- The dashboard's distinct counts read these instead of every event: a few rows per player and day
-- rather than hundreds of events. Rows are sets, so duplicates are harmless (readers count distinct
-- values; merges drop them). Holds player and session identifiers: a player erasure must delete from
-- this table as well (rows of kind 'player' with that player, rows of kind 'session' with their sessions).
CREATE TABLE IF NOT EXISTS telemetry.daily_actors
(
    project_id UUID,
    day Date,
    kind Enum8('player' = 1, 'session' = 2),
    id String
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, kind, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.daily_actors_mv TO telemetry.daily_actors AS
SELECT DISTINCT project_id, toDate(timestamp) AS day, kind, id
FROM telemetry.events
ARRAY JOIN
    ['player', 'session'] AS kind,
    [if(empty(player_id), session_id, player_id), session_id] AS id;

INSERT INTO telemetry.daily_actors
SELECT DISTINCT project_id, toDate(timestamp) AS day, kind, id
FROM telemetry.events
ARRAY JOIN
    ['player', 'session'] AS kind,
    [if(empty(player_id), session_id, player_id), session_id] AS id;
