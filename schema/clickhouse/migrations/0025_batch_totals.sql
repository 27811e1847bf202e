-- The status KPIs' totals without counting the project's events (workers/api/analytics/project-status.ts):
-- per project, UTC day and batch, the batch's event count and latest event time that day. The status
-- counts only settled batches (those no consumer holds a claim on), so the batch stays in the key: the
-- read leaves the in-flight batches out by id, as it did over the events. A row per batch and day (a
-- batch is up to 1,000 events), so the read grows with batches, not events; erased events leave it by
-- the erasure's rebuild of the player's days (workers/api/erasure/rollups.ts), expired ones by the purge.
CREATE TABLE IF NOT EXISTS telemetry.batch_totals
(
    project_id UUID,
    day Date,
    batch_id String,
    events SimpleAggregateFunction(sum, UInt64),
    last_event SimpleAggregateFunction(max, DateTime64(6, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, batch_id)
TTL day + INTERVAL 800 DAY
SETTINGS ttl_only_drop_parts = 1;

CREATE VIEW IF NOT EXISTS telemetry.batch_totals_src AS
SELECT project_id, toDate(timestamp) AS day, batch_id, toUInt64(count()) AS events, max(timestamp) AS last_event
FROM telemetry.events
WHERE ({whole:Bool} OR (project_id = {project:UUID} AND toDate(timestamp) IN {days:Array(Date)}
    AND NOT (if(empty(player_id), session_id, player_id) = {player:String}
        OR (player_id = '' AND session_id IN {identified:Array(String)}))))
GROUP BY project_id, day, batch_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.batch_totals_mv TO telemetry.batch_totals AS
SELECT project_id, toDate(timestamp) AS day, batch_id, toUInt64(count()) AS events, max(timestamp) AS last_event
FROM telemetry.events
GROUP BY project_id, day, batch_id;

INSERT INTO telemetry.batch_totals SELECT * FROM telemetry.batch_totals_src(whole = true, project = '00000000-0000-0000-0000-000000000000', days = [], player = '', identified = [])
