import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { maps } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import type { AppEnv } from "../../context.js";
import { errorResponses, policy, rateLimitHeaderDocs } from "../../openapi.js";
import { MapParams } from "./schema.js";

const binary = { schema: z.string().openapi({ type: "string", format: "binary" }) };

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/maps/{mapInternalId}/image",
  operationId: "getMapImage",
  tags: ["Maps"],
  summary: "The map's image, as uploaded",
  description: "The path is the map's `imageUrl`. Content-Type is the type sniffed at upload.",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: MapParams },
  responses: {
    200: {
      description: "The image bytes.",
      headers: rateLimitHeaderDocs,
      content: { "image/png": binary, "image/jpeg": binary, "image/webp": binary },
    },
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { mapInternalId } = c.req.valid("param");
    const project = c.get("project");
    const [row] = await c
      .get("db")
      .select({ imageKey: maps.imageKey, contentType: maps.imageContentType })
      .from(maps)
      .where(and(eq(maps.id, mapInternalId), eq(maps.projectId, project.id)));
    const object = row ? await c.env.MAPS.get(row.imageKey) : null;
    if (!row || !object) {
      throw new ApiError("NOT_FOUND", "Map not found.");
    }
    return c.body(object.body, 200, {
      "Content-Type": row.contentType,
      "Content-Length": String(object.size),
      ETag: object.httpEtag,
      // The URL stays the same when the map is re-uploaded: revalidate rather than reuse blindly.
      "Cache-Control": "private, no-cache",
    });
  });
}
