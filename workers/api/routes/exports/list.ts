import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { desc, eq } from "drizzle-orm";
import { dataExports } from "../../../../schema/pg/schema.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { ExportSchema, exportItem } from "./schema.js";

/** The exports a list shows: the newest, enough for a month of daily exports. */
export const EXPORTS_LISTED = 50;

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/exports",
  operationId: "listExports",
  tags: ["Data administration"],
  summary: "The project's exports, newest first",
  description: `At most ${EXPORTS_LISTED}, with their status and progress. Needs data:admin.`,
  ...policy({ scope: "data:admin", project: "path" }),
  request: { params: ProjectIdParam },
  responses: { 200: envelope(z.array(ExportSchema), "The exports."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const rows = await c
      .get("db")
      .select()
      .from(dataExports)
      .where(eq(dataExports.projectId, c.get("project").id))
      .orderBy(desc(dataExports.createdAt), desc(dataExports.id))
      .limit(EXPORTS_LISTED);
    return c.json({ success: true as const, data: rows.map(exportItem) }, 200);
  });
}
