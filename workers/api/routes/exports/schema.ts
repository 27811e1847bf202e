import { z } from "@hono/zod-openapi";
import { EXPORT_STATUSES } from "../../../../schema/pg/columns.js";
import type { DataExportRow } from "../../../../schema/pg/schema.js";
import { EXPORT_FORMAT_NAMES } from "../../exports/formats.js";

/** Longest range one export may cover. */
export const MAX_EXPORT_DAYS = 400;

export const ExportBodySchema = z
  .object({
    days: z
      .number()
      .int()
      .min(1)
      .max(90)
      .optional()
      .describe("The N UTC calendar days ending today, today included; or give from and to"),
    from: z.iso.datetime().optional().describe("Start, inclusive (with `to`, instead of `days`)"),
    to: z.iso.datetime().optional().describe("End, exclusive"),
    format: z.enum(EXPORT_FORMAT_NAMES),
    eventName: z.string().min(1).max(128).optional().describe("Only events of this name"),
  })
  .openapi("ExportRequest");

export const ExportSchema = z
  .object({
    id: z.uuid(),
    projectId: z.uuid(),
    status: z.enum(EXPORT_STATUSES),
    format: z.enum(EXPORT_FORMAT_NAMES),
    from: z.iso.datetime(),
    to: z.iso.datetime(),
    eventName: z.string().nullable(),
    rowCount: z.number().int().nullable().describe("Rows in the file, once completed"),
    sizeBytes: z.number().int().nullable().describe("Bytes of the file, once completed"),
    rowsExpected: z
      .number()
      .int()
      .nullable()
      .describe("Rows the export will hold, counted when it starts running (the progress bar's end)"),
    rowsWritten: z
      .number()
      .int()
      .nullable()
      .describe(
        "Rows written so far while running (null for parquet until completed), updated about every second",
      ),
    bytesWritten: z.number().int().nullable().describe("Bytes written so far while running"),
    downloadUrl: z.string().nullable().describe("Where to GET the file (same credentials), once completed"),
    error: z.string().nullable().describe("Why the last attempt failed, if it did"),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    completedAt: z.iso.datetime().nullable(),
  })
  .openapi("Export");

export const ExportIdParams = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" }, description: "Project UUID" }),
  exportId: z.uuid().openapi({ param: { name: "exportId", in: "path" } }),
});

export function exportItem(row: DataExportRow): z.infer<typeof ExportSchema> {
  const completed = row.status === "completed";
  return {
    id: row.id,
    projectId: row.projectId,
    status: row.status,
    format: row.format,
    from: row.rangeFrom.toISOString(),
    to: row.rangeTo.toISOString(),
    eventName: row.eventName,
    rowCount: row.rowCount,
    sizeBytes: row.sizeBytes,
    rowsExpected: row.rowsExpected,
    rowsWritten: row.rowsWritten,
    bytesWritten: row.bytesWritten,
    downloadUrl: completed ? `/api/v1/projects/${row.projectId}/exports/${row.id}/download` : null,
    error: row.error,
    createdAt: row.createdAt.toISOString(),
    startedAt: row.startedAt?.toISOString() ?? null,
    completedAt: row.completedAt?.toISOString() ?? null,
  };
}
