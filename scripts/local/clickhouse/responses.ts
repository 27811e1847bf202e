import type http from "node:http";
import { promisify } from "node:util";
import zlib from "node:zlib";
import type { ChdbResult } from "chdb";
import { describeError } from "./errors.js";
import { BINARY_FORMAT } from "./sql.js";

const gzipAsync = promisify(zlib.gzip);
/** The real server's default http_zlib_compression_level. */
export const GZIP_LEVEL = 3;

export async function sendResult(
  res: http.ServerResponse,
  queryId: string,
  format: string,
  result: ChdbResult,
  gzip: boolean,
): Promise<void> {
  const raw = result.bytes();
  const body = gzip ? await gzipAsync(raw, { level: GZIP_LEVEL }) : raw;
  res.writeHead(200, {
    "Content-Type": contentTypeFor(format),
    "Content-Length": body.byteLength,
    ...(gzip ? { "Content-Encoding": "gzip" } : {}),
    "X-ClickHouse-Query-Id": queryId,
    "X-ClickHouse-Format": format,
    "X-ClickHouse-Summary": summaryOf(result, raw.byteLength),
  });
  res.end(body);
}

export function contentTypeFor(format: string): string {
  if (/^JSON/i.test(format)) {
    return "application/json; charset=UTF-8";
  }
  if (/^(TSV|TabSeparated)/i.test(format)) {
    return "text/tab-separated-values; charset=UTF-8";
  }
  if (BINARY_FORMAT.test(format)) {
    return "application/octet-stream";
  }
  return "text/plain; charset=UTF-8";
}

function summaryOf(result: ChdbResult, resultBytes: number): string {
  return JSON.stringify({
    read_rows: String(result.rowsRead),
    read_bytes: String(result.bytesRead),
    written_rows: "0",
    written_bytes: "0",
    total_rows_to_read: "0",
    result_rows: "0",
    result_bytes: String(resultBytes),
    elapsed_ns: String(Math.round(result.elapsed * 1e9)),
  });
}

export function sendError(res: http.ServerResponse, queryId: string, err: unknown): void {
  const { status, code, message } = describeError(err);
  const headers: http.OutgoingHttpHeaders = {
    "Content-Type": "text/plain; charset=UTF-8",
    "X-ClickHouse-Query-Id": queryId,
    "X-ClickHouse-Exception-Code": String(code),
  };
  // The rest of an oversized body is not worth reading just to keep the socket.
  if (status === 413) {
    headers.Connection = "close";
  }
  res.writeHead(status, headers).end(`${message}\n`);
}
