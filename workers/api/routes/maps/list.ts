import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { desc, eq } from "drizzle-orm";
import { maps } from "../../../../schema/pg/schema.js";
import type { AppEnv } from "../../context.js";
import { projectFor, requireScope } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, security } from "../../openapi.js";
import { MapSchema, mapItem } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/projects/{id}/maps",
  operationId: "listMaps",
  tags: ["Maps"],
  summary: "List maps, newest first",
  description: "Newest by creation: re-uploading a map updates it in place.",
  security: security.keyOrToken,
  middleware: [requireScope("analytics:read")],
  request: { params: ProjectIdParam },
  responses: { 200: envelope(z.array(MapSchema), "The project's maps."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = await projectFor(c, c.req.valid("param").id);
    const rows = await c
      .get("db")
      .select()
      .from(maps)
      .where(eq(maps.projectId, project.id))
      .orderBy(desc(maps.createdAt), desc(maps.id));
    return c.json({ success: true as const, data: rows.map(mapItem) }, 200);
  });
}
