-- The events of a few minutes, read by time (workers/api/analytics/actors.ts playersBetween: the partial
-- minutes at both ends of a rolling 24 hours or 30 days, and the status KPIs' last 24 hours). The events'
-- key orders a day's rows by event name and batch, so a range of minutes read every granule of the
-- project's day: at a studio's volume millions of rows for two partial minutes. This projection keeps
-- the three columns those reads use ordered by (project, timestamp), inside each part: ClickHouse reads
-- it instead whenever a query needs no other column, and a minute is then a granule or two.
-- 'rebuild': merges of the ReplacingMergeTree and lightweight deletes (the erasure, the retention purge)
-- rebuild the projection of the parts they change, as the other tables with projections do.
ALTER TABLE telemetry.events MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild', lightweight_mutation_projection_mode = 'rebuild';
ALTER TABLE telemetry.events ADD PROJECTION IF NOT EXISTS by_time (SELECT project_id, timestamp, player_idx ORDER BY project_id, timestamp);
-- Existing parts get it by a background mutation; until then their reads use the table's own key.
ALTER TABLE telemetry.events MATERIALIZE PROJECTION by_time
