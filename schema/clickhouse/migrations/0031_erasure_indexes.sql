-- Skip indexes for the erasure's reads (workers/api/erasure/steps.ts). An erasure looks one player up by
-- value: their sessions (playerSessions: `player = X OR session_id = X`, then those sessions' events),
-- then their rows of the events and of cell_samples. Neither table is ordered by player, so each of
-- those reads scanned the project's rows of the days (the project's whole history for the sessions'
-- lookup): at 20M events a player of 4 events on 2 days read 90.8M rows (docs/benchmarks.md,
-- bench:writes). A bloom filter per granule on `player` and on `session_id` lets those reads skip every
-- granule without the player or their sessions (false positives 0.1 %, as the events' batch_id index,
-- 0003_sdk_wire_layout.sql). The index is a few bytes per granule; writing it costs each insert a hash
-- of the two columns, and no part (bench:pipeline).
-- funnel_events is ordered by (project, event_name, day, player_hash): with no event name in the
-- erasure's condition its key narrows nothing (58M rows read for three passes at 20M), so it gets a
-- bloom filter on player_hash.

ALTER TABLE telemetry.events ADD INDEX IF NOT EXISTS idx_player player TYPE bloom_filter(0.001) GRANULARITY 1;

ALTER TABLE telemetry.events ADD INDEX IF NOT EXISTS idx_session session_id TYPE bloom_filter(0.001) GRANULARITY 1;

ALTER TABLE telemetry.cell_samples ADD INDEX IF NOT EXISTS idx_player player TYPE bloom_filter(0.001) GRANULARITY 1;

ALTER TABLE telemetry.cell_samples ADD INDEX IF NOT EXISTS idx_session session_id TYPE bloom_filter(0.001) GRANULARITY 1;

ALTER TABLE telemetry.funnel_events ADD INDEX IF NOT EXISTS idx_player_hash player_hash TYPE bloom_filter(0.001) GRANULARITY 1;

-- Rows stored before this migration get the indexes by a background mutation.
ALTER TABLE telemetry.events MATERIALIZE INDEX idx_player;

ALTER TABLE telemetry.events MATERIALIZE INDEX idx_session;

ALTER TABLE telemetry.cell_samples MATERIALIZE INDEX idx_player;

ALTER TABLE telemetry.cell_samples MATERIALIZE INDEX idx_session;

ALTER TABLE telemetry.funnel_events MATERIALIZE INDEX idx_player_hash;
