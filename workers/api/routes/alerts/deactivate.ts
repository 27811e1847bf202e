import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { alertRules } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import { auditResource } from "../../audit/project.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { RuleIdParams } from "./schema.js";

export const route = createRoute({
  method: "delete",
  path: "/v1/projects/{id}/alerts/{alertId}",
  operationId: "deactivateAlertRule",
  tags: ["Alerts"],
  summary: "Deactivate an alert rule",
  description: "The rule and its history are kept; PATCH with isActive: true reactivates it.",
  ...policy({ scope: "resources:write", project: "path" }),
  request: { params: RuleIdParams },
  responses: {
    200: envelope(z.object({ id: z.uuid(), isActive: z.boolean() }), "The rule is inactive."),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { alertId } = c.req.valid("param");
    const project = c.get("project");
    const row = await c.get("db").transaction(async (tx) => {
      const [updated] = await tx
        .update(alertRules)
        .set({ isActive: false, updatedAt: sql`now()` })
        .where(and(eq(alertRules.id, alertId), eq(alertRules.projectId, project.id)))
        .returning({ id: alertRules.id, isActive: alertRules.isActive, name: alertRules.name });
      if (!updated) {
        throw new ApiError("NOT_FOUND", "Alert rule not found.");
      }
      await auditResource(c, project, "alert_rule.deactivated", updated, tx);
      return { id: updated.id, isActive: updated.isActive };
    });
    return c.json({ success: true as const, data: row }, 200);
  });
}
