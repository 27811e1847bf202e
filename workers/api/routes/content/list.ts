import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { contentEntries } from "../../../../schema/pg/schema.js";
import type { AppEnv } from "../../context.js";
import type { Db } from "../../db.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { ContentEntrySchema, contentItem, TypeQuery } from "./schema.js";

export const ORDER_NOTE =
  "Ordered by content type, then display name (then content id), compared by Unicode code point.";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/content",
  operationId: "listProjectContent",
  tags: ["Content"],
  summary: "List the project's content registry",
  description: ORDER_NOTE,
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: TypeQuery },
  responses: { 200: envelope(z.array(ContentEntrySchema), "Content entries."), ...errorResponses },
});

/**
 * Byte order (COLLATE "C") makes the order the same on every server whatever its default locale; a
 * registry is small enough that not using the (locale-ordered) index for the sort costs nothing.
 */
export async function listContent(db: Db, projectId: string, type: string | undefined) {
  const rows = await db
    .select()
    .from(contentEntries)
    .where(
      and(
        eq(contentEntries.projectId, projectId),
        type === undefined ? undefined : eq(contentEntries.contentType, type),
      ),
    )
    .orderBy(
      sql`${contentEntries.contentType} collate "C"`,
      sql`${contentEntries.displayName} collate "C"`,
      sql`${contentEntries.contentId} collate "C"`,
    );
  return rows.map(contentItem);
}

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const data = await listContent(c.get("db"), project.id, c.req.valid("query").type);
    return c.json({ success: true as const, data }, 200);
  });
}
