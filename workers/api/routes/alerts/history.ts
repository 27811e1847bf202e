import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { desc, eq } from "drizzle-orm";
import { type AlertEvaluationEventRow, alertEvaluationEvents } from "../../../../schema/pg/schema.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { EvaluationEventSchema, HistoryQuery } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/{id}/alerts/history",
  operationId: "listAlertHistory",
  tags: ["Alerts"],
  summary: "Alert evaluation events of every rule of the project, newest first",
  description:
    "An event is recorded whenever a (rule, profile) status changes, the first evaluation included. " +
    "Events of a deleted profile are kept with thresholdProfileId and thresholdProfileName null and " +
    "thresholdProfileDeleted true.",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: HistoryQuery },
  responses: { 200: envelope(z.array(EvaluationEventSchema), "Evaluation events."), ...errorResponses },
});

function eventItem(e: AlertEvaluationEventRow) {
  // The FK nulls the reference even if a profile was deleted without applyProfileDeletion.
  const deleted = e.thresholdProfileDeleted || e.thresholdProfileId === null;
  return {
    id: e.id,
    alertRuleId: e.alertRuleId,
    ruleName: e.ruleName,
    metric: e.metric,
    status: e.status,
    failCount: e.failCount,
    totalCount: e.totalCount,
    failPercentage: e.failPercentage,
    notified: e.notified,
    createdAt: e.createdAt.toISOString(),
    thresholdProfileId: deleted ? null : e.thresholdProfileId,
    thresholdProfileName: deleted ? null : e.thresholdProfileName,
    thresholdProfileDeleted: deleted,
  };
}

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const { limit, offset } = c.req.valid("query");
    const rows = await c
      .get("db")
      .select()
      .from(alertEvaluationEvents)
      .where(eq(alertEvaluationEvents.projectId, project.id))
      .orderBy(desc(alertEvaluationEvents.createdAt), desc(alertEvaluationEvents.id))
      .limit(limit)
      .offset(offset);
    return c.json({ success: true as const, data: rows.map(eventItem) }, 200);
  });
}
