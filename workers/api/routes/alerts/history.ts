import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { desc, eq } from "drizzle-orm";
import { type AlertEvaluationEventRow, alertEvaluationEvents } from "../../../../schema/pg/schema.js";
import { type LinkedCell, linked } from "../../alerts/links.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { EvaluationEventSchema, HistoryQuery } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/alerts/history",
  operationId: "listAlertHistory",
  tags: ["Alerts"],
  summary: "Alert evaluation events of every rule of the project, newest first",
  description:
    "An event is recorded whenever a (rule, profile) status changes, the first evaluation included. " +
    "Events of a deleted profile are kept with thresholdProfileId and thresholdProfileName null and " +
    "thresholdProfileDeleted true. A triggered event lists its worst failing cells (worstCells, up to " +
    "10, worst first) with links to the heatmap page set to the evaluated map, metric, profile, cell " +
    "size and days (links.heatmap) and to each cell's panel; events recorded before evaluations kept " +
    "them have worstCells [] and links null.",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: HistoryQuery },
  responses: { 200: envelope(z.array(EvaluationEventSchema), "Evaluation events."), ...errorResponses },
});

function eventItem(e: AlertEvaluationEventRow, origin: string) {
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
    // Links use the evaluated profile: the page still opens (unjudged) once that profile is gone.
    ...(e.worstCells
      ? linked({
          origin,
          projectId: e.projectId,
          metric: e.metric,
          profileId: e.evaluatedProfileId,
          record: e.worstCells,
        })
      : { links: null, worstCells: [] as LinkedCell[] }),
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
    return c.json(
      { success: true as const, data: rows.map((e) => eventItem(e, c.get("config").APP_URL)) },
      200,
    );
  });
}
