import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { desc, eq } from "drizzle-orm";
import { maps } from "../../../../schema/pg/schema.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { MapSchema, mapItem } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/maps",
  operationId: "listMaps",
  tags: ["Maps"],
  summary: "List maps, newest first",
  description: "Newest by creation: re-uploading a map updates it in place.",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam },
  responses: { 200: envelope(z.array(MapSchema), "The project's maps."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const rows = await c
      .get("db")
      .select()
      .from(maps)
      .where(eq(maps.projectId, project.id))
      .orderBy(desc(maps.createdAt), desc(maps.id));
    return c.json({ success: true as const, data: rows.map(mapItem) }, 200);
  });
}
