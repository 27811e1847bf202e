-- The dashboard's distinct counts read two small things through granules sized for big tables
-- (docs/analytics.md, "Distinct counts from bitmaps"; workers/api/analytics/actors.ts playersBetween):
--
-- - actor_buckets holds a few thousand rows per project (30-odd days, 32 days of hours, 2 days of
--   minutes), each a bitmap of up to a month's players. With granules of 8,192 rows a read of the
--   window's 30 day rows read the granule of every grain: at 100M events 2,413 rows and every hour and
--   minute bitmap deserialized, where it wants 30 (55 ms of the dashboard's statement, its three unions
--   each paying it). Granules of 32 rows read 64: the dashboard's statement fell from 121 to 68 ms at 100M
--   (docs/benchmarks.md). The primary index grows to a mark per 32 rows (about 23 bytes each: some
--   3,700 rows, 120 marks, per project).
-- - The events' `by_time` projection (0026) serves the partial minutes at the rolling ranges' ends (and
--   the partial hour 30 days ago): with 8,192-row granules, two granules per part for each: 90,112 rows
--   at 100M for dau's two partial minutes (a few thousand events), 106,496 for mau's ends.
--   `by_time_fine` is the same projection with granules of 1,024 rows (projection-level settings), built
--   on the existing parts by a background mutation, and `by_time` goes (a projection is sorted and
--   written on every insert). Until the mutation reaches a part, reads of that part use the table's own
--   key (project, day): slower, the same answers.
--
-- index_granularity cannot be altered, so actor_buckets is made again with the same columns, engine,
-- partitions, key and row TTLs (0027), filled from the old one, and exchanged: the materialized views
-- write to the table by name and fill the new one from then on, as 0018 did for cell_samples. Runs
-- before traffic with the rest of the migrations.
DROP TABLE IF EXISTS telemetry.actor_buckets_next;

CREATE TABLE telemetry.actor_buckets_next AS telemetry.actor_buckets
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, grain, day, bucket)
TTL bucket + INTERVAL 2 DAY DELETE WHERE grain = 'minute',
    bucket + INTERVAL 32 DAY DELETE WHERE grain = 'hour',
    day + INTERVAL 800 DAY
SETTINGS index_granularity = 32;

INSERT INTO telemetry.actor_buckets_next SELECT * FROM telemetry.actor_buckets;

EXCHANGE TABLES telemetry.actor_buckets_next AND telemetry.actor_buckets;

DROP TABLE telemetry.actor_buckets_next;

ALTER TABLE telemetry.events ADD PROJECTION IF NOT EXISTS by_time_fine
    (SELECT project_id, timestamp, player_idx ORDER BY project_id, timestamp)
    WITH SETTINGS (index_granularity = 1024);

ALTER TABLE telemetry.events MATERIALIZE PROJECTION by_time_fine;

ALTER TABLE telemetry.events DROP PROJECTION IF EXISTS by_time;
