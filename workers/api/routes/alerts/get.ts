import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { detailOf, loadRule } from "../../alerts/rules.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { RuleIdParams, RuleSchema } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/alerts/{alertId}",
  operationId: "getAlertRule",
  tags: ["Alerts"],
  summary: "One alert rule",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: RuleIdParams },
  responses: { 200: envelope(RuleSchema, "The alert rule."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { alertId } = c.req.valid("param");
    const project = c.get("project");
    return c.json(
      { success: true as const, data: detailOf(await loadRule(c.get("db"), project.id, alertId)) },
      200,
    );
  });
}
