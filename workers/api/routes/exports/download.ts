import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { ApiError } from "../../../shared/errors.js";
import { auditInProject } from "../../audit/project.js";
import type { AppEnv } from "../../context.js";
import { EXPORT_FORMATS } from "../../exports/formats.js";
import { errorResponses, ProblemSchema, policy, rateLimitHeaderDocs } from "../../openapi.js";
import { exportFor } from "./get.js";
import { ExportIdParams } from "./schema.js";

const file = { schema: z.string().openapi({ format: "binary" }) };

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/exports/{exportId}/download",
  operationId: "downloadExport",
  tags: ["Data administration"],
  summary: "Download a completed export (streamed)",
  ...policy({ scope: "data:admin", project: "path" }),
  request: { params: ExportIdParams },
  responses: {
    200: {
      description: "The file.",
      headers: rateLimitHeaderDocs,
      content: Object.fromEntries(Object.values(EXPORT_FORMATS).map((f) => [f.contentType, file])),
    },
    ...errorResponses,
    409: {
      description: "The export has not completed.",
      content: { "application/problem+json": { schema: ProblemSchema } },
    },
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { exportId } = c.req.valid("param");
    const row = await exportFor(c.get("db"), c.get("project").id, exportId);
    if (row.status !== "completed" || !row.objectKey) {
      throw new ApiError("CONFLICT", `Export ${exportId} is ${row.status}; download it once completed.`);
    }
    const object = await c.env.EXPORTS.get(row.objectKey);
    if (!object) {
      throw new ApiError("NOT_FOUND", "The export's file is gone.");
    }
    const format = EXPORT_FORMATS[row.format];
    // The file leaves the service here: who took it, and how much.
    await auditInProject(c, c.get("project"), {
      action: "export.downloaded",
      target: { type: "export", id: exportId, label: null },
      detail: { format: row.format, sizeBytes: object.size },
    });
    return new Response(object.body, {
      status: 200,
      headers: {
        "Content-Type": format.contentType,
        "Content-Length": String(object.size),
        "Content-Disposition": `attachment; filename="events-${exportId}.${format.extension}"`,
      },
    });
  });
}
