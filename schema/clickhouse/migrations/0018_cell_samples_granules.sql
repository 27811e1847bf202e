-- The cell drill-down (workers/api/analytics/cell.ts) reads one base cell of 50 of one map over its
-- window: at 10M bench events a few hundred samples, next to each other in every part (ordered by
-- project, map, bx, by, day). With granules of 8,192 rows each of its statements read at least a whole
-- granule per part for them, most of it other cells' rows: rows read followed the parts and the
-- granule, not the cell (docs/operations.md, "Rows read per endpoint"). Granules of 1,024 rows read an
-- eighth of that; the primary index grows to one mark per 1,024 rows (about 60 bytes each: 6 MB per
-- 100M samples in memory), as telemetry.session_devices' does (0010).
--
-- index_granularity cannot be altered, so the table is made again with the same columns, engine,
-- partitions and key (CREATE … AS copies the columns, whichever migration last defined them), filled
-- from the old one, and exchanged: the materialized view writes to the table by name, so it fills the
-- new one from then on. Runs before traffic with the rest of the migrations, as 0009's rebuilds did.
-- A TTL or setting an earlier migration put on the old table is not copied by CREATE … AS with an
-- engine: re-applied after the exchange where one exists (none on this branch).
DROP TABLE IF EXISTS telemetry.cell_samples_next;

CREATE TABLE telemetry.cell_samples_next AS telemetry.cell_samples
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, map_id, bx, by, toDate(timestamp), batch_id, event_index)
SETTINGS index_granularity = 1024;

INSERT INTO telemetry.cell_samples_next SELECT * FROM telemetry.cell_samples;

EXCHANGE TABLES telemetry.cell_samples_next AND telemetry.cell_samples;

DROP TABLE telemetry.cell_samples_next;
