import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { auditPage } from "../../audit/read.js";
import type { AppEnv } from "../../context.js";
import { principalOf } from "../../middleware/auth.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { AuditPageSchema, AuditQuerySchema, auditEntryItem } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/audit-log",
  operationId: "listAuditLog",
  tags: ["Audit log"],
  summary: "Who did what in the studio: the audit log, newest first",
  description:
    "Needs data:admin: an owner's session reads every entry of the studio; a Full key (made by an " +
    "owner) reads only the entries of its own project. OAuth tokens and members' sessions never hold " +
    "data:admin (403). Entries are kept 400 days and cannot be changed or deleted.",
  ...policy({ scope: "data:admin" }),
  request: { query: AuditQuerySchema },
  responses: { 200: envelope(AuditPageSchema, "One page of entries."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const p = principalOf(c);
    const page = await auditPage(
      c.get("db"),
      p.tenantId,
      {
        actor: q.actor,
        action: q.action,
        projectId: q.project,
        from: q.from ? new Date(q.from) : undefined,
        to: q.to ? new Date(q.to) : undefined,
        cursor: q.cursor,
        limit: q.limit,
      },
      p.kind === "key" ? p.projectId : undefined,
    );
    return c.json(
      {
        success: true as const,
        data: { entries: page.entries.map(auditEntryItem), nextCursor: page.nextCursor },
      },
      200,
    );
  });
}
