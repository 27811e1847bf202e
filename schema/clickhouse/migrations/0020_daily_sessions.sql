-- The dashboard's session count from per-day counts (workers/api/analytics/sessions.ts, docs/analytics.md
-- "Sessions from per-day counts"). The sessions of a window are the sum over its days of each day's
-- sessions, less, for every day but the first, the day's sessions already seen on an earlier day of the
-- window: a session across midnight is a session of both days counted once.

-- daily_sessions: one row per project, UTC day and session (cityHash64 of session_id, as session_values
-- and session_devices key it) with the session's event count that day. The `totals` projection keeps the
-- day's event total per part, the stamp that tells whether a stored count is current (as daily_players
-- does, 0007_dashboard_distincts.sql): merges keep the sum, a late batch strictly raises it, an erasure
-- deletes rows and then bumps the project's data_version. Holds session hashes: the erasure deletes the
-- rows of the sessions it empties (workers/api/erasure/steps.ts), as it does daily_actors' session rows.
CREATE TABLE IF NOT EXISTS telemetry.daily_sessions
(
    project_id UUID,
    day Date,
    session UInt64,
    events SimpleAggregateFunction(sum, UInt64),
    PROJECTION totals (SELECT project_id, day, sum(events) GROUP BY project_id, day)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, session)
SETTINGS deduplicate_merge_projection_mode = 'rebuild', lightweight_mutation_projection_mode = 'rebuild';

CREATE MATERIALIZED VIEW IF NOT EXISTS telemetry.daily_sessions_mv TO telemetry.daily_sessions AS
SELECT project_id, toDate(timestamp) AS day, cityHash64(session_id) AS session, toUInt64(count()) AS events
FROM telemetry.events
GROUP BY project_id, day, session;

INSERT INTO telemetry.daily_sessions
SELECT project_id, toDate(timestamp) AS day, cityHash64(session_id) AS session, toUInt64(count()) AS events
FROM telemetry.events
GROUP BY project_id, day, session;

-- A closed day's sessions, stored by the read that computed them: `sessions`, the day's distinct
-- sessions; `earlier`, for each of them also seen on one of the 89 days before, the latest such day (a
-- window starting on d0 subtracts those with earlier >= d0: the day's sessions it has already counted).
-- Stamped like daily_player_counts: `events` is the event total of the 90 days ending on the day (the
-- days `earlier` looked at; a late batch on any of them raises it) and data_version the project's. A read
-- trusts a row only while both match; otherwise it recomputes the day and stores a new row (the latest
-- computed_at wins). Holds no session identifier.
CREATE TABLE IF NOT EXISTS telemetry.daily_session_counts
(
    project_id UUID,
    day Date,
    sessions UInt64,
    earlier Array(Date),
    events UInt64,
    data_version UInt64,
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
ORDER BY (project_id, day);
