import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { dataExports } from "../../../../schema/pg/schema.js";
import { auditInProject } from "../../audit/project.js";
import type { AppEnv } from "../../context.js";
import { single } from "../../db.js";
import type { ExportMessage } from "../../exports/consumer.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { exportRange } from "./range.js";
import { ExportBodySchema, ExportSchema, exportItem } from "./schema.js";

export const route = createRoute({
  method: "post",
  path: "/v1/projects/{id}/exports",
  operationId: "createExport",
  tags: ["Data administration"],
  summary: "Start an export of the project's events",
  description:
    "Queues the export and answers at once; poll GET …/exports/{exportId}. The file has the query " +
    "endpoint's `events` columns, ordered by timestamp, in ClickHouse's JSONEachRow (ndjson), Parquet " +
    "or CSVWithNames (csv) output, streamed into object storage. Needs data:admin (API key only).",
  ...policy({ scope: "data:admin", project: "path" }),
  request: {
    params: ProjectIdParam,
    body: { required: true, content: { "application/json": { schema: ExportBodySchema } } },
  },
  responses: { 202: envelope(ExportSchema, "The export, queued."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const body = c.req.valid("json");
    const { from, to } = exportRange(body, new Date(c.get("now")));
    // Set by the gate before projectFromPath could pass.
    const principal = c.get("principal");
    const db = c.get("db");
    const created = await db.transaction(async (tx) => {
      const inserted = single(
        await tx
          .insert(dataExports)
          .values({
            projectId: project.id,
            requestedBy: principal?.kind === "key" ? principal.keyId : null,
            format: body.format,
            rangeFrom: from,
            rangeTo: to,
            eventName: body.eventName ?? null,
            status: "queued",
          })
          .returning(),
        "export insert",
      );
      await auditInProject(
        c,
        project,
        {
          action: "export.requested",
          target: { type: "export", id: inserted.id, label: null },
          detail: {
            format: inserted.format,
            from: inserted.rangeFrom.toISOString(),
            to: inserted.rangeTo.toISOString(),
            eventName: inserted.eventName,
          },
        },
        tx,
      );
      return inserted;
    });
    try {
      await c.env.EXPORTS_QUEUE.send({ exportId: created.id } satisfies ExportMessage);
    } catch (err) {
      // Without its message the record would sit queued forever.
      await db.delete(dataExports).where(eq(dataExports.id, created.id));
      throw err;
    }
    return c.json({ success: true as const, data: exportItem(created) }, 202);
  });
}
