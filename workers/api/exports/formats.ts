import type { ExportFormat } from "../../../schema/pg/columns.js";

export { EXPORT_FORMAT_NAMES, type ExportFormat } from "../../../schema/pg/columns.js";

type FormatSpec = { clickhouse: string; contentType: string; extension: string };

/** Export formats: ClickHouse writes each one itself; we only move the bytes. */
export const EXPORT_FORMATS = {
  ndjson: { clickhouse: "JSONEachRow", contentType: "application/x-ndjson", extension: "ndjson" },
  parquet: { clickhouse: "Parquet", contentType: "application/vnd.apache.parquet", extension: "parquet" },
  csv: { clickhouse: "CSVWithNames", contentType: "text/csv; charset=utf-8", extension: "csv" },
} as const satisfies Record<ExportFormat, FormatSpec>;

export function objectKeyOf(projectId: string, exportId: string, format: ExportFormat): string {
  return `exports/${projectId}/${exportId}.${EXPORT_FORMATS[format].extension}`;
}
