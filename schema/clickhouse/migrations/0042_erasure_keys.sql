-- An erasure's keys (workers/api/erasure/keys.ts): the rollup keys the erased events fed, and their
-- dense player and session numbers, one row per distinct combination. Staged once, from the player's
-- events before the first delete, so that every attempt of the erasure (a retry after the events are
-- gone included) rebuilds only those keys' rows instead of re-aggregating every event of the player's
-- days (workers/api/erasure/rollups.ts). No view reads or fills it: ingest does not pay for it.
--
-- The erasure deletes its rows when it completes; the TTL removes those of an erasure that failed. The
-- rows hold no player or session id, only numbers the project's BatchClaims object forgets with the
-- erasure, and the map, platform, build and batch the events named.
CREATE TABLE IF NOT EXISTS telemetry.erasure_keys (
  project_id UUID,
  erasure_id String,
  staged_at DateTime DEFAULT now(),
  day Date,
  event_name LowCardinality(String),
  map_id LowCardinality(String),
  platform LowCardinality(String),
  build_id LowCardinality(String),
  batch_id String,
  -- The 25-unit square of a positioned event (floor(position / 25)), as heatmap_cells and alert_cells
  -- key their cells; null without a position.
  cell_x Nullable(Float64),
  cell_y Nullable(Float64),
  player_idx UInt32,
  session_idx UInt32
) ENGINE = MergeTree
ORDER BY (project_id, erasure_id)
TTL staged_at + INTERVAL 30 DAY;
