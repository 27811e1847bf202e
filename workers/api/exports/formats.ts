import type { ExportFormat } from "../../../schema/pg/columns.js";

export { EXPORT_FORMAT_NAMES, type ExportFormat } from "../../../schema/pg/columns.js";

type FormatSpec = { clickhouse: string; contentType: string; extension: string };

/**
 * Export formats: ClickHouse writes the rows of each one; we move the bytes. A CSV file's header line
 * is ours (csvHeader): ClickHouse is asked for CSV without names, so its rows are the only lines it
 * sends and a header can never turn up inside the file, whatever a server does per streamed block.
 */
export const EXPORT_FORMATS = {
  ndjson: { clickhouse: "JSONEachRow", contentType: "application/x-ndjson", extension: "ndjson" },
  parquet: { clickhouse: "Parquet", contentType: "application/vnd.apache.parquet", extension: "parquet" },
  csv: { clickhouse: "CSV", contentType: "text/csv; charset=utf-8", extension: "csv" },
} as const satisfies Record<ExportFormat, FormatSpec>;

/** A CSV file's first line as ClickHouse's CSVWithNames writes it: every name quoted, one line. */
export function csvHeader(columns: readonly string[]): Uint8Array {
  return new TextEncoder().encode(`${columns.map((c) => `"${c.replaceAll('"', '""')}"`).join(",")}\n`);
}

export function objectKeyOf(projectId: string, exportId: string, format: ExportFormat): string {
  return `exports/${projectId}/${exportId}.${EXPORT_FORMATS[format].extension}`;
}
