import { lt, sql } from "drizzle-orm";
import { auditLog } from "../../../schema/pg/schema.js";
import type { Db } from "../db.js";

/**
 * How long audit entries are kept: at least a year, with a margin. The trigger of migration
 * 0011_audit_log_immutable refuses to delete a younger entry (it has the same number), whoever asks.
 */
export const AUDIT_RETENTION_DAYS = 400;

/**
 * Deletes the entries older than the retention, by the database's clock (the one the trigger checks).
 * Run by the API Worker's cron (index.ts scheduled()); returns how many went.
 */
export async function purgeAuditLog(db: Db): Promise<number> {
  const gone = await db
    .delete(auditLog)
    .where(lt(auditLog.lastAt, sql`now() - make_interval(days => ${AUDIT_RETENTION_DAYS})`))
    .returning({ id: auditLog.id });
  return gone.length;
}
