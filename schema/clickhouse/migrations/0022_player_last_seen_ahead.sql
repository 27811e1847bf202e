-- The dashboard's dau (the 24 hours ending now) is counted from player_last_seen in the same pass as
-- mau (workers/api/analytics/dashboard.ts, rollingPlayers), instead of the 24 hours' player-hours and
-- partial hours of events. A row proves an event in a range by last_seen, last_past or first_ahead
-- (0007_dashboard_distincts.sql), and a player whose first_ahead lies before the range is in doubt and
-- looked up by id. For mau that is a player who sent an event ahead of the clock more than a month ago
-- (the table keeps 31 days); for 24 hours it would be every player whose clock ran ahead at any time
-- in the month and who did not play since, which a few fast device clocks make thousands.
--
-- last_ahead, the latest of a row's events that was ahead of the clock when inserted (1970 when none),
-- bounds them from above: the row's events that were ahead all lie in [first_ahead, last_ahead], so
-- last_ahead in range proves an event in range, and only a row with first_ahead before the range and
-- last_ahead after it (an event still ahead of now, or past the range's end) leaves its player in doubt.
-- Rows written before this column existed read it as their last_seen when they hold an event that was
-- ahead (an upper bound that is itself one of their events: every conclusion above still holds, only
-- more of them are in doubt), as 1970 otherwise. They expire within 31 days.
ALTER TABLE telemetry.player_last_seen
    ADD COLUMN IF NOT EXISTS last_ahead SimpleAggregateFunction(max, DateTime64(6, 'UTC'))
    DEFAULT if(first_ahead = toDateTime64('2299-12-31 00:00:00', 6, 'UTC'), toDateTime64(0, 6, 'UTC'), last_seen);

-- The view again with last_ahead (the rest as in 0007), before traffic like every migration.
DROP VIEW IF EXISTS telemetry.player_last_seen_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.player_last_seen_mv TO telemetry.player_last_seen AS
SELECT project_id, if(empty(player_id), session_id, player_id) AS player, max(timestamp) AS last_seen,
    maxIf(timestamp, timestamp <= now64(6)) AS last_past,
    if(countIf(timestamp > now64(6)) = 0, toDateTime64('2299-12-31 00:00:00', 6, 'UTC'),
        minIf(timestamp, timestamp > now64(6))) AS first_ahead,
    maxIf(timestamp, timestamp > now64(6)) AS last_ahead
FROM telemetry.events
WHERE timestamp >= now() - INTERVAL 31 DAY
GROUP BY project_id, player;
