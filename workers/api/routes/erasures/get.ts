import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { erasures } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { ErasureIdParams, ErasureSchema, erasureItem } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/erasures/{erasureId}",
  operationId: "getErasure",
  tags: ["Data administration"],
  summary: "Read an erasure's audit entry",
  ...policy({ scope: "data:admin", project: "path" }),
  request: { params: ErasureIdParams },
  responses: { 200: envelope(ErasureSchema, "The erasure."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { erasureId } = c.req.valid("param");
    const project = c.get("project");
    const [row] = await c
      .get("db")
      .select()
      .from(erasures)
      .where(and(eq(erasures.id, erasureId), eq(erasures.projectId, project.id)))
      .limit(1);
    if (!row) {
      throw new ApiError("NOT_FOUND", "Erasure not found.");
    }
    return c.json({ success: true as const, data: erasureItem(row) }, 200);
  });
}
