import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { asc, eq } from "drizzle-orm";
import { projects } from "../../../../schema/pg/schema.js";
import type { AppEnv } from "../../context.js";
import { principalOf } from "../../middleware/auth.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { ProjectSchema, projectItem } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/",
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
    const rows = await c
      .get("db")
      .select()
      .from(projects)
      .where(eq(projects.tenantId, principalOf(c).tenantId))
      .orderBy(asc(projects.createdAt), asc(projects.id));
    return c.json({ success: true as const, data: rows.map(projectItem) }, 200);
  });
}
