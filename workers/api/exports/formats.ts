/** Export formats: ClickHouse writes each one itself; we only move the bytes. */
export const EXPORT_FORMATS = {
  ndjson: { clickhouse: "JSONEachRow", contentType: "application/x-ndjson", extension: "ndjson" },
  parquet: { clickhouse: "Parquet", contentType: "application/vnd.apache.parquet", extension: "parquet" },
  csv: { clickhouse: "CSVWithNames", contentType: "text/csv; charset=utf-8", extension: "csv" },
} as const;

export type ExportFormat = keyof typeof EXPORT_FORMATS;

export const EXPORT_FORMAT_NAMES = Object.keys(EXPORT_FORMATS) as [ExportFormat, ...ExportFormat[]];

export function objectKeyOf(projectId: string, exportId: string, format: ExportFormat): string {
  return `exports/${projectId}/${exportId}.${EXPORT_FORMATS[format].extension}`;
}
