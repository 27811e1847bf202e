import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { contentEntries } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import type { AppEnv } from "../../context.js";
import { ProjectHeader } from "../../middleware/project-header.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { DeleteContentQuery, DeletedContentSchema } from "./schema.js";

export const route = createRoute({
  method: "delete",
  path: "/v1/content",
  operationId: "deleteContent",
  tags: ["Content"],
  summary: "Delete one content entry of the project named by X-Project-Id",
  description:
    "Name the entry either by `id`, or by `contentType` with `contentId` (its uniqueness key); giving " +
    "neither form, or both, is a 400. 404 when the project has no such entry.",
  ...policy({ scope: "resources:write", project: "header" }),
  request: { headers: ProjectHeader, query: DeleteContentQuery },
  responses: { 200: envelope(DeletedContentSchema, "The deleted entry's identifiers."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const projectId = c.get("project").id;
    // The query's refinement guarantees exactly one form: an id, or a type and content id.
    const which =
      q.id !== undefined
        ? eq(contentEntries.id, q.id)
        : and(
            eq(contentEntries.contentType, q.contentType ?? ""),
            eq(contentEntries.contentId, q.contentId ?? ""),
          );
    const [row] = await c
      .get("db")
      .delete(contentEntries)
      .where(and(eq(contentEntries.projectId, projectId), which))
      .returning({
        id: contentEntries.id,
        contentType: contentEntries.contentType,
        contentId: contentEntries.contentId,
      });
    if (!row) {
      throw new ApiError("NOT_FOUND", "Content entry not found.");
    }
    return c.json({ success: true as const, data: row }, 200);
  });
}
