-- Retention's backstop TTL (0015_retention_ttl.sql) on the tables created or rebuilt after it:
-- cell_samples (0018 rebuilt it with smaller granules, which dropped the TTL and the setting) and the
-- per-day sessions of the dashboard's count (0020: session hashes, and the stored per-day counts). The
-- daily purge (workers/api/retention/purge.ts) reaches them through RETAINED_TABLES.
ALTER TABLE telemetry.cell_samples MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.cell_samples MODIFY TTL toDate(timestamp) + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.daily_sessions MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.daily_sessions MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.daily_session_counts MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
