import { and, asc, eq, isNull } from "drizzle-orm";
import { type AuditLogRow, auditLog } from "../../schema/pg/schema.js";
import { withDb } from "./harness.js";

/**
 * The audit entries of a studio (tenantId null: the entries of no studio), oldest first, optionally of
 * one action: what a test asserts after the action it drove.
 */
export function auditEntries(tenantId: string | null, action?: string): Promise<AuditLogRow[]> {
  return withDb((db) =>
    db
      .select()
      .from(auditLog)
      .where(
        and(
          tenantId === null ? isNull(auditLog.tenantId) : eq(auditLog.tenantId, tenantId),
          action === undefined ? undefined : eq(auditLog.action, action),
        ),
      )
      .orderBy(asc(auditLog.at), asc(auditLog.id)),
  );
}

/** The one entry of `action` in the studio; throws (failing the test) unless there is exactly one. */
export async function onlyAuditEntry(tenantId: string | null, action: string): Promise<AuditLogRow> {
  const rows = await auditEntries(tenantId, action);
  if (rows.length !== 1 || !rows[0]) {
    throw new Error(`expected exactly one ${action} entry, found ${rows.length}`);
  }
  return rows[0];
}
