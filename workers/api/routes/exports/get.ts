import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { dataExports } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import type { AppEnv } from "../../context.js";
import type { Db } from "../../db.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { ExportIdParams, ExportSchema, exportItem } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/exports/{exportId}",
  operationId: "getExport",
  tags: ["Data administration"],
  summary: "An export's status, row count, size and download URL",
  ...policy({ scope: "data:admin", project: "path" }),
  request: { params: ExportIdParams },
  responses: { 200: envelope(ExportSchema, "The export."), ...errorResponses },
});

/** The export if it belongs to the project (one the caller may reach: projectFromPath); 404 otherwise. */
export async function exportFor(db: Db, projectId: string, exportId: string) {
  const [row] = await db
    .select()
    .from(dataExports)
    .where(and(eq(dataExports.id, exportId), eq(dataExports.projectId, projectId)))
    .limit(1);
  if (!row) {
    throw new ApiError("NOT_FOUND", "Export not found.");
  }
  return row;
}

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const row = await exportFor(c.get("db"), c.get("project").id, c.req.valid("param").exportId);
    return c.json({ success: true as const, data: exportItem(row) }, 200);
  });
}
