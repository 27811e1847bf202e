import { z } from "@hono/zod-openapi";
import { AUDIT_ACTOR_TYPES, AUDIT_OUTCOMES } from "../../../../schema/pg/columns.js";
import type { AuditLogRow } from "../../../../schema/pg/schema.js";
import { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX } from "../../audit/read.js";

export const AuditEntrySchema = z
  .object({
    id: z.uuid(),
    at: z.iso.datetime().describe("When it happened (for a counted row: the start of its window)"),
    lastAt: z.iso.datetime().describe("The last attempt a counted row counts; equal to `at` otherwise"),
    count: z
      .number()
      .int()
      .describe("Attempts this row counts (failed sign-ins per account, IP and window); 1 otherwise"),
    action: z.string().describe("Dotted verb, e.g. key.created, member.role_changed"),
    outcome: z.enum(AUDIT_OUTCOMES),
    projectId: z.uuid().nullable(),
    actor: z.object({
      type: z.enum(AUDIT_ACTOR_TYPES),
      id: z.string().nullable(),
      label: z.string().describe("As it was then: an email, a key's name, an OAuth client and its user"),
      userId: z.uuid().nullable().describe("The person behind the actor, when known"),
    }),
    target: z
      .object({ type: z.string(), id: z.string().nullable(), label: z.string().nullable() })
      .nullable(),
    ip: z.string().nullable(),
    userAgent: z.string().nullable(),
    detail: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  })
  .openapi("AuditEntry");

export const AuditPageSchema = z
  .object({
    entries: z.array(AuditEntrySchema).describe("Newest first"),
    nextCursor: z.string().nullable().describe("Pass as `cursor` for the next (older) page; null at the end"),
  })
  .openapi("AuditLogPage");

export const AuditQuerySchema = z.object({
  actor: z.string().max(320).optional().describe("An actor's id or label (email, key name), exactly"),
  action: z
    .string()
    .regex(/^[a-z_]+(\.[a-z_]+)*$/, "an action (key.created) or its noun (key)")
    .max(100)
    .optional(),
  project: z.uuid().optional().describe("Only entries of this project"),
  from: z.iso.datetime().optional().describe("Entries at or after this instant"),
  to: z.iso.datetime().optional().describe("Entries at or before this instant"),
  cursor: z.string().max(200).optional(),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(AUDIT_PAGE_MAX)
    .optional()
    .describe(`Default ${AUDIT_PAGE_DEFAULT}`),
});

export function auditEntryItem(row: AuditLogRow): z.infer<typeof AuditEntrySchema> {
  return {
    id: row.id,
    at: row.at.toISOString(),
    lastAt: row.lastAt.toISOString(),
    count: row.count,
    action: row.action,
    outcome: row.outcome,
    projectId: row.projectId,
    actor: { type: row.actorType, id: row.actorId, label: row.actorLabel, userId: row.actorUserId },
    target: row.targetType ? { type: row.targetType, id: row.targetId, label: row.targetLabel } : null,
    ip: row.ip,
    userAgent: row.userAgent,
    detail: row.detail,
  };
}
