-- Insights' unique players by map, platform or build over every event (workers/api/analytics/insights.ts)
-- OR'd player_dims' rows of every event name: a map's players of a day are the union of its rows for each
-- of the day's event names. At 100M events over 30 days that is 990 rows (3 maps × 11 names × 30 days),
-- about 88 MB of bitmaps deserialized and merged for an answer of four numbers: 124-137 ms against a
-- target of 100 (docs/benchmarks.md).
--
-- The view now also writes each dimension's rows of all event names, with event_name '' (an event name is
-- never empty: the ingest rejects it, and the API's `eventName` is at least one character): 7 rows per
-- event before the view's GROUP BY instead of 4, and per day 3 + platforms + builds + maps more rows. The
-- read by a dimension without an event name reads those: 90 rows for the same answer, 56-57 ms at 100M.
-- Rows with dim '' (the event name alone) are unchanged, so a grouping by event name lists no '' key.
--
-- Could a shared table answer? This is player_dims itself: no table and no view are added. The existing
-- days get their rows from the table's own per-event rows (the OR of a day's names per dimension value):
-- no events are read, and since an OR of bitmaps is idempotent, rows an insert adds while this runs are
-- at most OR'd twice, which changes nothing.
DROP VIEW IF EXISTS telemetry.player_dims_mv;

DROP VIEW IF EXISTS telemetry.player_dims_replay_mv;

DROP VIEW IF EXISTS telemetry.player_dims_src;

-- The view's SELECT, parameterized for the tests' fresh builds (as 0024's).
CREATE VIEW IF NOT EXISTS telemetry.player_dims_src AS
SELECT project_id, day, d.1 AS event_name, d.2 AS dim, d.3 AS dim_value,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players
FROM (
    SELECT project_id, toDate(timestamp) AS day, player_idx,
        [(toString(event_name), '', ''), (toString(event_name), 'map', toString(map_id)),
            (toString(event_name), 'platform', toString(platform)), (toString(event_name), 'build', toString(build_id)),
            ('', 'map', toString(map_id)), ('', 'platform', toString(platform)), ('', 'build', toString(build_id))] AS ds
    FROM telemetry.events
    WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
        AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
            OR (player_id = '' AND session_id IN {identified:Array(String)}))))
)
ARRAY JOIN ds AS d
GROUP BY project_id, day, event_name, dim, dim_value;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.player_dims_mv TO telemetry.player_dims AS
SELECT project_id, day, d.1 AS event_name, d.2 AS dim, d.3 AS dim_value,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players
FROM (
    SELECT project_id, toDate(timestamp) AS day, player_idx,
        [(toString(event_name), '', ''), (toString(event_name), 'map', toString(map_id)),
            (toString(event_name), 'platform', toString(platform)), (toString(event_name), 'build', toString(build_id)),
            ('', 'map', toString(map_id)), ('', 'platform', toString(platform)), ('', 'build', toString(build_id))] AS ds
    FROM telemetry.events
)
ARRAY JOIN ds AS d
GROUP BY project_id, day, event_name, dim, dim_value;

-- The replay counterpart (0032_rollup_replay.sql).
CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.player_dims_replay_mv TO telemetry.player_dims AS
SELECT project_id, day, d.1 AS event_name, d.2 AS dim, d.3 AS dim_value,
    groupBitmapStateIf(player_idx, player_idx != 0) AS players
FROM (
    SELECT project_id, toDate(timestamp) AS day, player_idx,
        [(toString(event_name), '', ''), (toString(event_name), 'map', toString(map_id)),
            (toString(event_name), 'platform', toString(platform)), (toString(event_name), 'build', toString(build_id)),
            ('', 'map', toString(map_id)), ('', 'platform', toString(platform)), ('', 'build', toString(build_id))] AS ds
    FROM (SELECT * FROM telemetry.events_replay WHERE has(replay_targets, 'player_dims'))
)
ARRAY JOIN ds AS d
GROUP BY project_id, day, event_name, dim, dim_value;

-- The stored days' rows of all event names, from their rows of each event name (filtered in a subquery:
-- in the outer WHERE, `event_name` would name the SELECT's alias ''.
INSERT INTO telemetry.player_dims
SELECT project_id, day, '' AS event_name, dim, dim_value, groupBitmapMergeState(players) AS players
FROM (SELECT * FROM telemetry.player_dims WHERE dim != '' AND event_name != '')
GROUP BY project_id, day, dim, dim_value;
