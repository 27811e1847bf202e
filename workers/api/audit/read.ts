import { and, desc, eq, gte, like, lt, lte, or, type SQL, sql } from "drizzle-orm";
import { type AuditLogRow, auditLog } from "../../../schema/pg/schema.js";
import { ApiError } from "../../shared/errors.js";
import type { Db } from "../db.js";

// Reading the audit log: one studio's entries, newest first, with filters and a cursor. The API route
// (routes/audit-log) and the dashboard's "Audit log" page both read through here.

export const AUDIT_PAGE_MAX = 200;
export const AUDIT_PAGE_DEFAULT = 50;

export type AuditFilters = {
  /** An actor's id (user, key, OAuth client) or label (an email, a key's name), exactly. */
  actor?: string;
  /** An action (`key.created`) or its noun alone (`key`: every `key.*`). */
  action?: string;
  projectId?: string;
  from?: Date;
  to?: Date;
  cursor?: string;
  limit?: number;
};

export type AuditPage = { entries: AuditLogRow[]; nextCursor: string | null };

/** The cursor after `row`: its time and id, opaque to clients. */
function cursorOf(row: AuditLogRow): string {
  return btoa(`${row.at.getTime()}_${row.id}`).replace(/=+$/, "");
}

function parseCursor(cursor: string): { at: Date; id: string } {
  let text = "";
  try {
    text = atob(cursor);
  } catch {
    // falls through to the refusal
  }
  const m = /^(\d{1,15})_([0-9a-f-]{36})$/.exec(text);
  if (!m?.[1] || !m[2]) {
    throw new ApiError("BAD_REQUEST", "query.cursor: not a cursor this endpoint returned", {
      extensions: { field: "query.cursor" },
    });
  }
  return { at: new Date(Number(m[1])), id: m[2] };
}

/** A page of the studio's entries (only `projectId`'s when `onlyProject` is set: an API key's view). */
export async function auditPage(
  db: Db,
  tenantId: string,
  filters: AuditFilters,
  onlyProject?: string,
): Promise<AuditPage> {
  const limit = Math.min(Math.max(filters.limit ?? AUDIT_PAGE_DEFAULT, 1), AUDIT_PAGE_MAX);
  const where: (SQL | undefined)[] = [eq(auditLog.tenantId, tenantId)];
  if (onlyProject) {
    where.push(eq(auditLog.projectId, onlyProject));
  }
  if (filters.projectId) {
    where.push(eq(auditLog.projectId, filters.projectId));
  }
  if (filters.actor) {
    where.push(or(eq(auditLog.actorId, filters.actor), eq(auditLog.actorLabel, filters.actor)));
  }
  if (filters.action) {
    where.push(
      filters.action.includes(".")
        ? eq(auditLog.action, filters.action)
        : like(auditLog.action, `${filters.action.replace(/[%_\\]/g, "\\$&")}.%`),
    );
  }
  if (filters.from) {
    where.push(gte(auditLog.at, filters.from));
  }
  if (filters.to) {
    where.push(lte(auditLog.at, filters.to));
  }
  if (filters.cursor) {
    const after = parseCursor(filters.cursor);
    where.push(
      or(lt(auditLog.at, after.at), and(eq(auditLog.at, after.at), sql`${auditLog.id} < ${after.id}::uuid`)),
    );
  }
  const rows = await db
    .select()
    .from(auditLog)
    .where(and(...where))
    .orderBy(desc(auditLog.at), desc(auditLog.id))
    .limit(limit + 1);
  const entries = rows.slice(0, limit);
  const last = entries.at(-1);
  return { entries, nextCursor: rows.length > limit && last ? cursorOf(last) : null };
}
