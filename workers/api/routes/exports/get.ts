import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import type { Context } from "hono";
import { dataExports } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import type { AppEnv } from "../../context.js";
import { projectFor, requireScope } from "../../middleware/auth.js";
import { envelope, errorResponses, security } from "../../openapi.js";
import { ExportIdParams, ExportSchema, exportItem } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/{id}/exports/{exportId}",
  operationId: "getExport",
  tags: ["Data administration"],
  summary: "An export's status, row count, size and download URL",
  security: security.keyOnly,
  middleware: [requireScope("data:admin")],
  request: { params: ExportIdParams },
  responses: { 200: envelope(ExportSchema, "The export."), ...errorResponses },
});

/** The export if it belongs to a project the caller may reach; 404 otherwise. */
export async function exportFor(c: Context<AppEnv>, projectId: string, exportId: string) {
  const project = await projectFor(c, projectId);
  const [row] = await c
    .get("db")
    .select()
    .from(dataExports)
    .where(and(eq(dataExports.id, exportId), eq(dataExports.projectId, project.id)))
    .limit(1);
  if (!row) {
    throw new ApiError("NOT_FOUND", "Export not found.");
  }
  return row;
}

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { id, exportId } = c.req.valid("param");
    return c.json({ success: true as const, data: exportItem(await exportFor(c, id, exportId)) }, 200);
  });
}
