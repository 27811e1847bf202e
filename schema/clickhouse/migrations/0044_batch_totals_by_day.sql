-- The status KPIs' totals (workers/api/analytics/project-status.ts) summed batch_totals' rows: a row per
-- batch and day since the retention horizon. That grows with the project's batches, not with its days: at
-- 100M events 15.2M rows, 230 ms, the larger half of the status read (docs/benchmarks.md); a studio year
-- under 400-day retention would be ten times that.
--
-- `by_day` is an aggregate projection: each part also stores its sum of events and latest event per
-- (project, day). The totals over the settled batches are then the projection's sums minus the in-flight
-- batches' own rows (found by the key's batch id, within each day), in one statement that reads the table
-- through one snapshot of its parts (`enable_shared_storage_snapshot_in_query`), so a batch whose part
-- commits while the statement runs is in both reads or in neither. A read without the batch id (no batch
-- in flight) reads the projection alone: 87 rows at 100M.
--
-- A projection of a table whose merges aggregate rows needs `deduplicate_merge_projection_mode`, and one
-- the erasure's lightweight DELETE runs on needs `lightweight_mutation_projection_mode`: both rebuild the
-- projection of the parts they rewrite (sums of sums and maxima of maxima, so the rebuilt rows are the
-- same). The existing parts get it by the materializing mutation; until it reaches a part, a read of that
-- part uses the table's rows: slower, the same answers.
--
-- The erasure's earlier lightweight DELETEs are applied to the parts first (APPLY DELETED MASK): on the
-- 100M bench dir, whose parts held rows masked by erasures, the materialized projection counted those
-- rows too (5.26M events more than the rows over the last two days, after a rebuild by whole days), and
-- after the mask was applied it equalled the rows. Mutations run in order on each part, so the
-- projection is built from parts without masked rows.
--
-- Could a shared table answer? This is batch_totals' own projection: no table and no view are added, and
-- an insert writes a few rows more per part (one per day the insert covers).
ALTER TABLE telemetry.batch_totals MODIFY SETTING
    deduplicate_merge_projection_mode = 'rebuild', lightweight_mutation_projection_mode = 'rebuild';

ALTER TABLE telemetry.batch_totals ADD PROJECTION IF NOT EXISTS by_day
    (SELECT project_id, day, sum(events), max(last_event) GROUP BY project_id, day);

ALTER TABLE telemetry.batch_totals APPLY DELETED MASK;

ALTER TABLE telemetry.batch_totals MATERIALIZE PROJECTION by_day;
