import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { projectsOf } from "../../middleware/auth.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { ProjectSchema, projectItem } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects",
  operationId: "listProjects",
  tags: ["Projects"],
  summary: "List the tenant's projects",
  ...policy({ scope: "analytics:read" }),
  responses: {
    200: envelope(z.array(ProjectSchema), "All projects of the authenticated tenant."),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const rows = await projectsOf(c);
    return c.json({ success: true as const, data: rows.map(projectItem) }, 200);
  });
}
