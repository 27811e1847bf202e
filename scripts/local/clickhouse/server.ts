// The HTTP server: lifecycle, routing and running each request's statement.

import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path, { resolve } from "node:path";
import type { Writable } from "node:stream";
import zlib from "node:zlib";
import type { ChdbResult } from "chdb";
import { authenticate } from "./auth.js";
import { blockPlanFor, HeaderOnce } from "./blocks.js";
import { badRequest, ClickHouseHttpError, describeError, notImplemented } from "./errors.js";
import { toChdbParams } from "./params.js";
import { joinQuery, parseRequestParams, type RequestParams, readBody } from "./request.js";
import { contentTypeFor, GZIP_LEVEL, sendError, sendResult } from "./responses.js";
import { SessionPool } from "./session-pool.js";
import { analyzeStatement, BINARY_FORMAT, renderSettings, type Statement, withSettings } from "./sql.js";

export interface ClickHouseHttpOptions {
  dataDir: string;
  port?: number;
  user: string;
  password: string;
  /** chdb connections on the data dir; one connection runs one query at a time. */
  connections?: number;
}

export interface ClickHouseHttpServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

// chdb binds one data directory per process, so a second server could only
// ever share (and fight over) the first one's engine.
let activeDataDir: string | undefined;

export async function startClickHouseHttp(opts: ClickHouseHttpOptions): Promise<ClickHouseHttpServer> {
  const dataDir = resolve(opts.dataDir);
  if (activeDataDir !== undefined) {
    throw new Error(
      `startClickHouseHttp: already running on ${activeDataDir}; chdb binds one data directory per process, ` +
        "so close() the first server before starting another",
    );
  }
  activeDataDir = dataDir;
  try {
    mkdirSync(dataDir, { recursive: true });
    const pool = new SessionPool(dataDir, opts.connections ?? defaultConnectionCount());
    // A request line as long as ClickHouse takes (http_max_uri_size, 1 MiB by default): query parameters
    // travel in the URL, and Node's default limit of 16 KB for the request line and headers refused a
    // purge message's few hundred projects with a bare 431 (an error without a message to the client).
    const server = http.createServer({ maxHeaderSize: 1024 * 1024 }, (req, res) => {
      pool.track(handleRequest(pool, opts, req, res));
    });
    const port = await listen(server, opts.port ?? 0).catch(async (err: unknown) => {
      await pool.close();
      throw err;
    });
    return { url: `http://127.0.0.1:${port}`, port, close: () => closeServer(server, pool) };
  } catch (err) {
    activeDataDir = undefined;
    throw err;
  }
}

// Every chdb query occupies a libuv worker thread for its whole run; leaving
// one thread free keeps fs and zlib work (request gunzip) from starving
// behind long queries.
function defaultConnectionCount(): number {
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  return Math.max(1, threads - 1);
}

function listen(server: http.Server, port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolvePort((server.address() as AddressInfo).port);
    });
  });
}

async function closeServer(server: http.Server, pool: SessionPool): Promise<void> {
  await new Promise<void>((done) => {
    server.close(() => done());
    server.closeAllConnections();
  });
  await pool.close();
  activeDataDir = undefined;
}

async function handleRequest(
  pool: SessionPool,
  opts: ClickHouseHttpOptions,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const queryId = url.searchParams.get("query_id") || randomUUID();
  try {
    if (isPing(req, url)) {
      res.writeHead(200, { "Content-Type": "text/plain; charset=UTF-8" }).end("Ok.\n");
      return;
    }
    checkRoute(req, url);
    authenticate(req, url, opts);
    const request = parseRequestParams(req, url);
    const bytes = req.method === "POST" ? await readBody(req) : Buffer.alloc(0);
    const binary = binaryInsert(request.urlQuery);
    if (binary !== undefined && request.urlQuery !== undefined) {
      const result = await executeBinaryInsert(pool, request.urlQuery, binary, bytes, request);
      await sendResult(res, queryId, "TabSeparated", result, request.gzip);
      return;
    }
    const sql = joinQuery(request.urlQuery, bytes.toString("utf8"));
    if (request.stream && isStreamable(sql)) {
      await executeStreaming(pool, sql, request, res, queryId);
      return;
    }
    const result = await execute(pool, sql, request);
    await sendResult(res, queryId, result.format, result.result, request.gzip);
  } catch (err) {
    // A stream that failed midway has already been cut off; there is no status left to send.
    if (!res.headersSent) {
      sendError(res, queryId, err);
    }
  }
}

function isPing(req: http.IncomingMessage, url: URL): boolean {
  const readOnlyMethod = req.method === "GET" || req.method === "HEAD";
  return (
    readOnlyMethod && (url.pathname === "/ping" || (url.pathname === "/" && !url.searchParams.has("query")))
  );
}

function checkRoute(req: http.IncomingMessage, url: URL): void {
  if (url.pathname !== "/") {
    throw new ClickHouseHttpError(404, 48, "NOT_IMPLEMENTED", `There is no handler for ${url.pathname}`);
  }
  if (req.method !== "GET" && req.method !== "POST") {
    throw new ClickHouseHttpError(405, 48, "NOT_IMPLEMENTED", `HTTP method ${req.method} is not allowed`);
  }
  if ((req.headers["content-type"] ?? "").toLowerCase().startsWith("multipart/form-data")) {
    throw notImplemented("A multipart/form-data body (query parameters or external tables)");
  }
}

type Prepared = {
  finalSql: string;
  format: string;
  params: Record<string, string | null>;
  hasParams: boolean;
};

function prepare(sql: string, request: RequestParams): Prepared {
  const statement = analyzeStatement(sql);
  const format = statement.format ?? request.defaultFormat ?? "TabSeparated";
  // chdb's API treats the lowercase name 'arrow' as a request to run a
  // session-wide SET first, which must never reach a pooled connection.
  if (format === "arrow") {
    throw badRequest(73, "UNKNOWN_FORMAT", "Unknown format 'arrow'");
  }
  const finalSql = withSettings(sql, statement, request.settings, format);
  const params = toChdbParams(request.params, sql.slice(0, statement.headEnd));
  return { finalSql, format, params, hasParams: Object.keys(params).length > 0 };
}

// Only reads produce a result worth streaming; everything else keeps the buffered path.
function isStreamable(sql: string): boolean {
  return STREAMABLE_KINDS.has(analyzeStatement(sql).kind);
}
const STREAMABLE_KINDS = new Set(["SELECT", "WITH", "("]);

/**
 * Writes each chunk as the engine produces it, waiting for the socket to drain, so a large export
 * never sits whole in this process. A failure before the first chunk still answers with its status;
 * after it, like the real server, the exception text is appended and the connection is cut, so the
 * client sees a broken transfer rather than a complete-looking file.
 *
 * chdb formats each block on its own (blocks.ts): a header format's repeated header is dropped, so the
 * names come once per response as ClickHouse sends them; a format that frames the whole result
 * (Parquet, Arrow, JSON, ...) is answered whole, since its per-block output would be several files
 * end to end. That answer comes only once the query ends, where ClickHouse would already be sending.
 */
async function executeStreaming(
  pool: SessionPool,
  sql: string,
  request: RequestParams,
  res: http.ServerResponse,
  queryId: string,
): Promise<void> {
  const { finalSql, format, params, hasParams } = prepare(sql, request);
  const plan = blockPlanFor(format);
  if (plan.kind === "whole") {
    const result = await execute(pool, sql, request);
    await sendResult(res, queryId, result.format, result.result, request.gzip);
    return;
  }
  const header = plan.kind === "header" ? new HeaderOnce(plan) : null;
  // With gzip asked for, chunks go through a compressor piped into the response; back-pressure is the
  // compressor's, which the pipe relays from the socket.
  let out: Writable = res;
  const start = () => {
    startStream(res, queryId, format, request.gzip);
    if (request.gzip) {
      const gz = zlib.createGzip({ level: GZIP_LEVEL });
      gz.pipe(res);
      out = gz;
    }
  };
  await pool.run(async (session) => {
    const stream = hasParams
      ? session.queryStreamBind(finalSql, params, { format })
      : session.queryStream(finalSql, { format });
    try {
      for await (const chunk of stream) {
        if (!res.headersSent) {
          start();
        }
        const raw = chunk.raw();
        const bytes = header ? header.next(raw) : raw;
        if (bytes.byteLength > 0 && !out.write(bytes)) {
          await new Promise((drained) => out.once("drain", drained));
        }
      }
    } catch (err) {
      if (!res.headersSent) {
        throw err;
      }
      // No terminating chunk: the response is left unfinished on purpose.
      out.write(`\n${describeError(err).message}\n`, () => res.destroy());
      throw err;
    } finally {
      stream.cancel();
    }
    if (!res.headersSent) {
      start();
    }
    out.end();
  });
}

function startStream(res: http.ServerResponse, queryId: string, format: string, gzip: boolean): void {
  res.writeHead(200, {
    "Content-Type": contentTypeFor(format),
    ...(gzip ? { "Content-Encoding": "gzip" } : {}),
    "X-ClickHouse-Query-Id": queryId,
    "X-ClickHouse-Format": format,
  });
}

/** An INSERT in a binary format named in the URL's query (its rows are the body), or undefined. */
function binaryInsert(urlQuery: string | undefined): Statement | undefined {
  if (urlQuery === undefined || !/^\s*INSERT\b/i.test(urlQuery)) {
    return undefined;
  }
  const statement = analyzeStatement(urlQuery, true);
  const format = statement.insertFormat;
  return format !== undefined && BINARY_FORMAT.test(format) ? statement : undefined;
}

/**
 * chdb's query API takes text only, so binary rows reach it the way clickhouse-client sends a file:
 * written to a temporary file and read by `INSERT … FROM INFILE … FORMAT x`, which the engine parses
 * with the same input format (and feeds the same materialized views) as rows in an HTTP body.
 */
async function executeBinaryInsert(
  pool: SessionPool,
  sql: string,
  statement: Statement,
  rows: Buffer,
  request: RequestParams,
): Promise<ChdbResult> {
  if (statement.hasOwnSettings && request.settings.size > 0) {
    // Same refusal as withSettings.
    withSettings(sql, statement, request.settings, "TabSeparated");
  }
  const file = path.join(os.tmpdir(), `chdb-http-insert-${randomUUID()}.bin`);
  await fs.writeFile(file, rows);
  try {
    const settings = request.settings.size > 0 ? ` SETTINGS ${renderSettings(request.settings)}` : "";
    const finalSql =
      `${sql.slice(0, statement.settingsAt)} FROM INFILE '${file}'` +
      `${settings} ${sql.slice(statement.settingsAt, statement.headEnd)}`;
    return await pool.run((session) => session.queryAsync(finalSql, { format: "TabSeparated" }));
  } finally {
    await fs.rm(file, { force: true });
  }
}

async function execute(
  pool: SessionPool,
  sql: string,
  request: RequestParams,
): Promise<{ result: ChdbResult; format: string }> {
  const { finalSql, format, params, hasParams } = prepare(sql, request);
  const result = await pool.run((session) =>
    hasParams
      ? session.queryBindAsync(finalSql, params, { format })
      : session.queryAsync(finalSql, { format }),
  );
  return { result, format };
}
