-- Funnels from stored anchor hours (docs/analytics.md "Funnels", workers/api/analytics/funnel-anchors.ts).
--
-- A player reaches step k of a funnel when, for some step-1 event at t1 in the read's window, they did
-- steps 2..k in order within `window` seconds of t1. A chain anchored at t1 uses only the player's events
-- of [t1, t1 + window], so the chains anchored in the UTC hour h use only the events of
-- [h, h + 1 h + window): once that interval is over, "the players reaching each step from an anchor in h"
-- no longer depends on the read's window, and can be stored per (project, definition, hour). A read ORs the
-- stored hours' players per step with those of the hours it computes live (workers/api/analytics/funnels.ts).

-- funnel_events gets the player's dense number (0023_actor_numbers.sql), so a funnel's players can be held
-- in bitmaps and merged across hours. 0 means not numbered (rows stored before numbering, until the
-- backfill: workers/api/analytics/numbers-backfill.ts numbers these rows as well).
ALTER TABLE telemetry.funnel_events ADD COLUMN IF NOT EXISTS player_idx UInt32 DEFAULT 0;

ALTER TABLE telemetry.funnel_events_mv MODIFY QUERY
SELECT project_id, event_name, timestamp, cityHash64(if(empty(player_id), session_id, player_id)) AS player_hash, player_idx
FROM telemetry.events;

-- The rows stored before this migration take the number their events already have (one mutation, through a
-- temporary lookup of (project, player hash) → number).
CREATE TABLE IF NOT EXISTS telemetry.funnel_numbers_0027 ENGINE = Join(ANY, LEFT, project_id, player_hash) AS
SELECT e.project_id AS project_id, cityHash64(e.player) AS player_hash, max(e.player_idx) AS number
FROM telemetry.events AS e
WHERE e.player_idx != 0
GROUP BY project_id, player_hash;

ALTER TABLE telemetry.funnel_events
UPDATE player_idx = joinGet('telemetry.funnel_numbers_0027', 'number', project_id, player_hash)
WHERE player_idx = 0
-- joinGet reads another table: ClickHouse calls that nondeterministic in a mutation.
SETTINGS mutations_sync = 2, allow_nondeterministic_mutations = 1;

DROP TABLE IF EXISTS telemetry.funnel_numbers_0027;

-- funnel_anchors: per (project, definition, anchor hour, level) the players (dense numbers) who reach at
-- least `level` from a step-1 event in that hour. Level 0 is the hour's marker (an empty bitmap): the hour
-- was stored, even when no one started the funnel in it. `stamp` is a fingerprint of what the hour's answer
-- was computed from: the project's data version (Postgres, bumped by every erasure) and its step events
-- per UTC day the hour's events can lie on (daily_events). A read uses a stored hour only when its stamp
-- equals that fingerprint now; any other hour is computed live.
-- The stamp is in the key, so a recomputed hour never merges with its stale rows (the job deletes those).
-- Written only by the funnel-anchors job (the jobs queue), never by a read.
CREATE TABLE IF NOT EXISTS telemetry.funnel_anchors
(
    project_id UUID,
    definition UInt64,
    day Date,
    hour DateTime('UTC'),
    level UInt8,
    stamp UInt64,
    players AggregateFunction(groupBitmap, UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, definition, hour, level, stamp)
TTL day + INTERVAL 800 DAY
SETTINGS ttl_only_drop_parts = 1;

-- funnel_definitions: the funnels read lately (a definition is a query's distinct step names and window),
-- so the job knows which ones to store hours for. A definition not read for 35 days expires.
CREATE TABLE IF NOT EXISTS telemetry.funnel_definitions
(
    project_id UUID,
    definition UInt64,
    steps Array(String),
    window_s UInt32,
    read_at DateTime('UTC')
)
ENGINE = ReplacingMergeTree(read_at)
ORDER BY (project_id, definition)
TTL read_at + INTERVAL 35 DAY
