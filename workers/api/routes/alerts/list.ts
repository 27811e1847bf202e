import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { loadRules } from "../../alerts/rules.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { RuleListItemSchema } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/alerts",
  operationId: "listAlertRules",
  tags: ["Alerts"],
  summary: "List alert rules, newest first, with map and profile names and the latest status",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam },
  responses: { 200: envelope(z.array(RuleListItemSchema), "Alert rules."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    return c.json({ success: true as const, data: await loadRules(c.get("db"), project.id) }, 200);
  });
}
