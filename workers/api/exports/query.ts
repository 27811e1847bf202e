import type { ClickHouseClient } from "@clickhouse/client-web";
import { EVENTS_COLUMNS, projectEventsSelect } from "../query/events-view.js";
import { chTime } from "../window.js";
import { csvHeader, EXPORT_FORMATS, type ExportFormat } from "./formats.js";

export type ExportSpec = {
  projectId: string;
  from: Date;
  to: Date;
  eventName: string | null;
  format: ExportFormat;
  /** Rows received after this instant are left out, so the count and the file agree. */
  cutoff: Date;
  /** The studio's retention horizon when the export runs: older rows have expired and are left out. */
  retainedFrom: Date;
};

/** Exports run for minutes, not seconds; ClickHouse stops them at this bound. */
const MAX_EXPORT_SECONDS = 600;

function where(spec: ExportSpec): string {
  const conditions = [
    "timestamp >= {from:DateTime64(6, 'UTC')}",
    "timestamp < {to:DateTime64(6, 'UTC')}",
    "received_at <= {cutoff:DateTime64(3, 'UTC')}",
    "timestamp >= {retainedFrom:DateTime64(6, 'UTC')}",
  ];
  if (spec.eventName !== null) {
    conditions.push("event_name = {eventName:String}");
  }
  return conditions.join(" AND ");
}

function params(spec: ExportSpec): Record<string, string> {
  const at = (d: Date) => chTime(d.getTime());
  return {
    project: spec.projectId,
    from: at(spec.from),
    to: at(spec.to),
    cutoff: at(spec.cutoff),
    retainedFrom: at(spec.retainedFrom),
    ...(spec.eventName !== null ? { eventName: spec.eventName } : {}),
  };
}

export async function countExportRows(ch: ClickHouseClient, spec: ExportSpec): Promise<number> {
  const rs = await ch.query({
    query: `SELECT count() AS n FROM (${projectEventsSelect("project", where(spec))})`,
    query_params: params(spec),
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{ n: string | number }>();
  return Number(row?.n ?? 0);
}

/**
 * The export's rows per time bucket, in order, for planning its segments (segments.ts): buckets of
 * whole seconds, about BUCKETS of them over the export's range (a row falls in the bucket its
 * timestamp's millisecond floors into, as the segments' [from, to) bounds on timestamp do).
 */
export async function exportBuckets(
  ch: ClickHouseClient,
  spec: ExportSpec,
): Promise<{ widthMs: number; buckets: Array<{ at: number; rows: number }> }> {
  const widthMs = Math.max(1, Math.ceil((spec.to.getTime() - spec.from.getTime()) / BUCKETS / 1000)) * 1000;
  const rs = await ch.query({
    query: `SELECT intDiv(toUnixTimestamp64Milli(timestamp), {width:UInt64}) * {width:UInt64} AS at, count() AS rows
            FROM (${projectEventsSelect("project", where(spec))}) GROUP BY at ORDER BY at`,
    query_params: { ...params(spec), width: String(widthMs) },
    format: "JSONEachRow",
  });
  const rows = await rs.json<{ at: string | number; rows: string | number }>();
  return { widthMs, buckets: rows.map((r) => ({ at: Number(r.at), rows: Number(r.rows) })) };
}

/** Buckets planned over an export's range: a few thousand rows of plan, segments cut to the second. */
const BUCKETS = 20_000;

/**
 * ClickHouse's own output format, streamed as it is produced (wait_end_of_query=0). CSV: ClickHouse
 * sends rows only (FORMAT CSV) and the file's header line is written here, before them, unless
 * `header` is false (a later segment of a segmented export). `blockRows`: the query's max_block_size
 * (local stacks and tests only).
 */
export async function exportStream(
  ch: ClickHouseClient,
  spec: ExportSpec,
  opts: { header?: boolean; blockRows?: number | null } = {},
): Promise<ReadableStream<Uint8Array>> {
  const header = opts.header ?? true;
  const format = EXPORT_FORMATS[spec.format].clickhouse;
  const result = await ch.exec({
    query: `${projectEventsSelect("project", where(spec))} ORDER BY timestamp FORMAT ${format}`,
    query_params: params(spec),
    clickhouse_settings: {
      wait_end_of_query: 0,
      readonly: "1",
      max_execution_time: MAX_EXPORT_SECONDS,
      ...(opts.blockRows ? { max_block_size: String(opts.blockRows) } : {}),
    },
  });
  const rows = result.stream as ReadableStream<Uint8Array>;
  return spec.format === "csv" && header ? startingWith(csvHeader(EVENTS_COLUMNS), rows) : rows;
}

/** `rest` with `first` before its bytes; cancelling it cancels `rest`, an error of `rest` is its error. */
function startingWith(first: Uint8Array, rest: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = rest.getReader();
  let sent = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!sent) {
        sent = true;
        controller.enqueue(first);
        return;
      }
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
      } else {
        controller.enqueue(value);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
