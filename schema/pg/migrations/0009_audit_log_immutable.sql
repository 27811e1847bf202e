-- audit_log rows cannot be changed or deleted, whoever asks (the Workers, the admin CLI, psql):
--   UPDATE   refused, except the one change an aggregated row (aggregate_key set) allows: its count
--            grows and its last_at moves forward, nothing else changes.
--   DELETE   refused for a row younger than the retention, 400 days (AUDIT_RETENTION_DAYS in
--            workers/api/audit/retention.ts), measured against the database's clock; the cron's purge
--            deletes the older ones.
--   TRUNCATE refused.
-- Keep 400 in step with AUDIT_RETENTION_DAYS.
CREATE FUNCTION audit_log_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF OLD.aggregate_key IS NOT NULL
       AND NEW.count > OLD.count
       AND NEW.last_at >= OLD.last_at
       AND (to_jsonb(NEW) - 'count' - 'last_at') = (to_jsonb(OLD) - 'count' - 'last_at') THEN
      RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit_log entries cannot be changed' USING ERRCODE = 'insufficient_privilege';
  ELSIF TG_OP = 'DELETE' THEN
    IF OLD.last_at < now() - interval '400 days' THEN
      RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit_log entries are kept for 400 days' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RAISE EXCEPTION 'audit_log cannot be truncated' USING ERRCODE = 'insufficient_privilege';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER audit_log_guard_rows BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_guard();
--> statement-breakpoint
CREATE TRIGGER audit_log_guard_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_guard();
