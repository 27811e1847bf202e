-- Insights' unique players by a dimension, or of one event name (workers/api/analytics/insights.ts),
-- OR player_dims' bitmaps: a row per (project, day, event name, dimension, value), at 100M events about
-- 125 rows a day for this project, each a bitmap of up to a day's players (tens of KB). Every read names
-- one dimension, but the key put `day` before it: a window's rows of one dimension were 30 short ranges,
-- and with granules of 8,192 rows (bounded to ~10 MB by the adaptive granularity) each range read the
-- whole day of every dimension and deserialized it. Unique players by map over 30 days read all 3,740
-- rows of the project for its 990 (docs/benchmarks.md).
--
-- The key is now (project, dim, day, event name, value): a dimension's window is one range, an event
-- name's rows are contiguous within each day; in granules of 32 rows. Every read, the erasure's
-- rebuild and the retention purge name the project and a day condition, and still prune by key.
--
-- The table is made again with the same columns, engine, partitions, TTL and setting (0024) and the new
-- key, filled from the old one, and exchanged: the materialized views write to the table by name and fill
-- the new one from then on (as 0018 and 0040). Runs before traffic with the rest of the migrations.
DROP TABLE IF EXISTS telemetry.player_dims_next;

CREATE TABLE telemetry.player_dims_next AS telemetry.player_dims
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, dim, day, event_name, dim_value)
TTL day + INTERVAL 800 DAY
SETTINGS ttl_only_drop_parts = 1, index_granularity = 32;

INSERT INTO telemetry.player_dims_next SELECT * FROM telemetry.player_dims;

EXCHANGE TABLES telemetry.player_dims_next AND telemetry.player_dims;

DROP TABLE telemetry.player_dims_next;
