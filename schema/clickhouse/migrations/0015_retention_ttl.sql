-- Retention (docs/operations.md, "Retention"). Each studio keeps the raw events of its plan's days or
-- fewer (workers/shared/plans.ts); a daily purge deletes every project's older rows from every table
-- (workers/api/retention/purge.ts) and every read stops at the horizon (workers/api/window.ts), so
-- these TTLs are only the backstop: the longest plan's 800 days, for rows of projects the purge does
-- not know (a project deleted from Postgres). hourly_players and player_last_seen keep their own,
-- shorter TTLs.
--
-- ttl_only_drop_parts: a TTL never rewrites a part; a monthly part goes whole once its newest row
-- expired. materialize_ttl_after_modify = 0: the existing parts are not rewritten now to compute their
-- TTL (a mutation of every part of every table); they expire as merges or the purge reach them.
ALTER TABLE telemetry.events MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.events MODIFY TTL toDate(timestamp) + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.cell_samples MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.cell_samples MODIFY TTL toDate(timestamp) + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.funnel_events MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.funnel_events MODIFY TTL toDate(timestamp) + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.player_days MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.player_days MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.daily_actors MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.daily_actors MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.daily_players MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.daily_players MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.session_devices MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.session_devices MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.session_values MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.session_values MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.session_cells MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.session_cells MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.build_days MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.build_days MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.compare_days MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.compare_days MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.compare_builds MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.compare_builds MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.heatmap_cells MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.heatmap_cells MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.alert_cells MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.alert_cells MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.daily_events MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.daily_events MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE telemetry.daily_player_counts MODIFY SETTING ttl_only_drop_parts = 1;
ALTER TABLE telemetry.daily_player_counts MODIFY TTL day + INTERVAL 800 DAY SETTINGS materialize_ttl_after_modify = 0;
