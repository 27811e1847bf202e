// Reading an HTTP request: URL parameters, headers and the (possibly compressed) body.

import type http from "node:http";
import { pipeline, type Readable } from "node:stream";
import zlib from "node:zlib";
import { badRequest, ClickHouseHttpError, notImplemented } from "./errors.js";

const MAX_BODY_BYTES = 256 * 1024 * 1024;

// These only shape the HTTP exchange of a networked server; an in-process engine
// that answers with one buffered body has nothing to apply them to.
const TRANSPORT_ONLY_PARAMS = new Set(["send_progress_in_http_headers", "http_headers_progress_interval_ms"]);

// Server-side sessions and roles would need per-client engine state that the
// pooled connections cannot keep apart, so they are refused rather than faked.
const SESSION_PARAMS = new Set(["session_id", "session_timeout", "session_check", "close_session", "role"]);

const SETTING_NAME = /^[a-z_][a-z0-9_]*$/;

const DECODERS: Record<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress> = {
  gzip: () => zlib.createGunzip(),
  "x-gzip": () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

export function singleHeader(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export interface RequestParams {
  urlQuery: string | undefined;
  params: Record<string, string>;
  settings: Map<string, string>;
  defaultFormat: string | undefined;
  /**
   * wait_end_of_query=0 (the real server's default): stream the result as the engine produces it.
   * wait_end_of_query=1, or none sent: the whole result is buffered first, so a failure still answers
   * with its HTTP status instead of a cut-off 200. Buffering when nothing was asked is stricter than
   * the real server; callers that depend on it send wait_end_of_query=1 themselves.
   */
  stream: boolean;
  /**
   * enable_http_compression=1 with gzip in Accept-Encoding: the response body is gzip'd, as the real
   * server does (other codecs it offers are not, and are left to identity).
   */
  gzip: boolean;
}

export function parseRequestParams(req: http.IncomingMessage, url: URL): RequestParams {
  const request: RequestParams = {
    urlQuery: undefined,
    params: {},
    settings: new Map(),
    defaultFormat: singleHeader(req, "x-clickhouse-format"),
    stream: false,
    gzip: false,
  };
  let compressionEnabled = false;
  checkDatabase(singleHeader(req, "x-clickhouse-database"));
  for (const [key, value] of url.searchParams) {
    if (key === "enable_http_compression") {
      compressionEnabled = value === "1";
      continue;
    }
    applyUrlParam(request, key, value);
  }
  const accepted = (singleHeader(req, "accept-encoding") ?? "").toLowerCase().split(",");
  request.gzip = compressionEnabled && accepted.some((e) => e.split(";")[0]?.trim() === "gzip");
  // Like the real server: a GET may only read, unless the caller asked for
  // stricter readonly itself.
  if (req.method === "GET" && (request.settings.get("readonly") ?? "0") === "0") {
    request.settings.set("readonly", "2");
  }
  return request;
}

function applyUrlParam(request: RequestParams, key: string, value: string): void {
  if (key === "query") {
    request.urlQuery = value;
  } else if (key === "wait_end_of_query") {
    request.stream = value === "0";
  } else if (key === "default_format") {
    request.defaultFormat = value;
  } else if (key === "database") {
    checkDatabase(value);
  } else if (key === "compress" || key === "decompress") {
    if (value !== "0") {
      throw notImplemented(`ClickHouse-native compression (${key}=${value})`);
    }
  } else if (SESSION_PARAMS.has(key)) {
    throw notImplemented(`The ${key} URL parameter`);
  } else if (key.startsWith("param_")) {
    request.params[key.slice("param_".length)] = value;
  } else if (!TRANSPORT_ONLY_PARAMS.has(key) && !["query_id", "user", "password"].includes(key)) {
    if (!SETTING_NAME.test(key)) {
      throw badRequest(115, "UNKNOWN_SETTING", `Invalid setting name '${key}'`);
    }
    request.settings.set(key, value);
  }
}

// chdb can only switch the current database with a session-wide USE, which
// would leak into concurrent queries on the same connection, so any database
// other than `default` is refused; callers fully qualify their table names.
function checkDatabase(database: string | undefined): void {
  if (database !== undefined && database !== "" && database !== "default") {
    throw notImplemented(`Selecting database '${database}' per request (qualify table names instead)`);
  }
}

// Reads with 'data' events rather than for-await so that an oversized body only
// pauses the socket: destroying it would lose the 413 answer.
export function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolveBody, reject) => {
    if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) {
      reject(tooLarge());
      return;
    }
    const source = decodedBody(req);
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        source.off("data", onData).pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    source.on("data", onData);
    source.once("end", () => resolveBody(Buffer.concat(chunks)));
    source.once("error", (err: Error & { code?: string }) => {
      reject(err.code?.startsWith("Z_") ? badRequest(271, "CANNOT_DECOMPRESS", err.message) : err);
    });
  });
}

function decodedBody(req: http.IncomingMessage): Readable {
  const encoding = (singleHeader(req, "content-encoding") ?? "identity").trim().toLowerCase();
  if (encoding === "identity" || encoding === "") {
    return req;
  }
  const decoder = DECODERS[encoding];
  if (decoder === undefined) {
    throw notImplemented(`Content-Encoding '${encoding}'`);
  }
  // pipeline forwards errors from either side into the stream we iterate.
  return pipeline(req, decoder(), () => {});
}

function tooLarge(): ClickHouseHttpError {
  return new ClickHouseHttpError(
    413,
    229,
    "QUERY_IS_TOO_LARGE",
    `Request body exceeds ${MAX_BODY_BYTES} bytes`,
  );
}

// Same concatenation as the real server: URL query first, then the body (for
// INSERT, the body carries the rows).
export function joinQuery(urlQuery: string | undefined, body: string): string {
  if (urlQuery === undefined) {
    return body;
  }
  return body === "" ? urlQuery : `${urlQuery}\n${body}`;
}
