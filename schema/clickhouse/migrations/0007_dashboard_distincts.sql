-- The dashboard's exact distinct counts without counting player-days on every read
-- (workers/api/analytics/dashboard.ts). Three tables:
--
-- daily_players: one row per project, UTC day and player (cityHash64 of the player: the event's
-- player_id, or its session_id when player_id is empty) with the player's event count that day. A day's
-- players are uniqExact over the hashes; its event total, sum(events), is the stamp that tells whether a
-- stored count is still current. The `totals` projection keeps that sum per project and day inside every
-- part, so reading the stamps of a window reads a row per part and day, not a row per player; and as the
-- projection lives in the same part as the rows, a count and its stamp computed by one SELECT always
-- describe the same parts (a stamp from another table could count a batch whose rows here are not
-- committed yet). Merges keep the sum; a late batch strictly raises it; an erasure deletes the player's
-- rows (by hash, workers/api/erasure/steps.ts) and then bumps the project's data_version.
-- Two players collide in cityHash64 with probability about n² / 2^65: 3 · 10^-8 at a million.
CREATE TABLE IF NOT EXISTS telemetry.daily_players
(
    project_id UUID,
    day Date,
    player UInt64,
    events SimpleAggregateFunction(sum, UInt64),
    PROJECTION totals (SELECT project_id, day, sum(events) GROUP BY project_id, day)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, player)
SETTINGS deduplicate_merge_projection_mode = 'rebuild', lightweight_mutation_projection_mode = 'rebuild';

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.daily_players_mv TO telemetry.daily_players AS
SELECT project_id, toDate(timestamp) AS day, cityHash64(if(empty(player_id), session_id, player_id)) AS player,
    toUInt64(count()) AS events
FROM telemetry.events
GROUP BY project_id, day, player;

INSERT INTO telemetry.daily_players
SELECT project_id, toDate(timestamp) AS day, cityHash64(if(empty(player_id), session_id, player_id)) AS player,
    toUInt64(count()) AS events
FROM telemetry.events
GROUP BY project_id, day, player;

-- A closed day's player count, stored by the read that computed it, with the stamps it was computed at:
-- the day's event total in daily_players (same snapshot) and the project's data_version. A read trusts a
-- row only while both still match; otherwise it recomputes the day and stores a new row (the latest
-- computed_at wins). Holds no player identifier.
CREATE TABLE IF NOT EXISTS telemetry.daily_player_counts
(
    project_id UUID,
    day Date,
    players UInt64,
    events UInt64,
    data_version UInt64,
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
ORDER BY (project_id, day);

-- Each player's latest event, for the players of the last 30 days (mau): a row per player instead of a
-- row per player and day. Readers count a player when any of their rows lies in the 30 days (unmerged
-- parts hold several; the true maximum is at least every row). The SDKs may send timestamps up to 48 h
-- ahead, so a player's latest event may lie after now and hide one in range: last_past is the latest of
-- their events that was not ahead of the clock when inserted (1970 when none), hence never after any
-- later now; first_ahead the earliest that was ahead (2299 when none). A player with last_past in range,
-- or first_ahead in range, counts too; only a player with first_ahead before the range (an event sent
-- ahead more than a month ago) and no row in range is looked up in the window's hourly and daily
-- players (dashboard.ts). Rows whose latest event is more than 31 days old can never count again and expire.
-- Holds player identifiers: the erasure deletes from it.
CREATE TABLE IF NOT EXISTS telemetry.player_last_seen
(
    project_id UUID,
    player String,
    last_seen SimpleAggregateFunction(max, DateTime64(6, 'UTC')),
    last_past SimpleAggregateFunction(max, DateTime64(6, 'UTC')),
    first_ahead SimpleAggregateFunction(min, DateTime64(6, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY (project_id, player)
TTL toDateTime(last_seen) + INTERVAL 31 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.player_last_seen_mv TO telemetry.player_last_seen AS
SELECT project_id, if(empty(player_id), session_id, player_id) AS player, max(timestamp) AS last_seen,
    maxIf(timestamp, timestamp <= now64(6)) AS last_past,
    if(countIf(timestamp > now64(6)) = 0, toDateTime64('2299-12-31 00:00:00', 6, 'UTC'),
        minIf(timestamp, timestamp > now64(6))) AS first_ahead
FROM telemetry.events
WHERE timestamp >= now() - INTERVAL 31 DAY
GROUP BY project_id, player;

INSERT INTO telemetry.player_last_seen
SELECT project_id, if(empty(player_id), session_id, player_id) AS player, max(timestamp) AS last_seen,
    maxIf(timestamp, timestamp <= now64(6)) AS last_past,
    if(countIf(timestamp > now64(6)) = 0, toDateTime64('2299-12-31 00:00:00', 6, 'UTC'),
        minIf(timestamp, timestamp > now64(6))) AS first_ahead
FROM telemetry.events
WHERE timestamp >= now() - INTERVAL 31 DAY
GROUP BY project_id, player;
