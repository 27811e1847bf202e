import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { insightGroups, insightTotal } from "../../analytics/insights.js";
import type { AppEnv } from "../../context.js";
import { windowFor } from "../../data-retention/horizon.js";
import { readerOf } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { InsightsQuery, InsightsSchema } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/insights",
  operationId: "getInsights",
  tags: ["Analytics"],
  summary: "Event count or unique players grouped by period or dimension",
  description:
    'Time groupings give the most recent limit periods of the window, zero-filled, ascending (key: period start date, weeks start Monday). Other groupings give the top limit keys by value, ties by key; events without the value form the key "". total is the metric over the whole window.',
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: InsightsQuery },
  responses: { 200: envelope(InsightsSchema, "Groups and total."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const q = c.req.valid("query");
    const days = Number(q.days);
    const w = await windowFor(readerOf(c), days);
    const query = { metric: q.metric, groupBy: q.groupBy, limit: Number(q.limit), eventName: q.eventName };
    const [groups, total] = await Promise.all([
      insightGroups(c.get("ch"), project.id, w, query),
      insightTotal(c.get("ch"), project.id, w, query),
    ]);
    return c.json(
      { success: true as const, data: { metric: q.metric, groupBy: q.groupBy, days, groups, total } },
      200,
    );
  });
}
