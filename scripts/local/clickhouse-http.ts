// A loopback stand-in for the ClickHouse HTTP interface, backed by chdb, so that
// Workers running in workerd can use @clickhouse/client-web against a real
// ClickHouse engine during local dev and tests.
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { mkdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { pipeline, type Readable } from "node:stream";
import zlib from "node:zlib";
import { type ChdbResult, drainPending, Session } from "chdb";

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

const MAX_BODY_BYTES = 256 * 1024 * 1024;

// These only shape the HTTP exchange of a networked server; an in-process engine
// that answers with one buffered body has nothing to apply them to.
const TRANSPORT_ONLY_PARAMS = new Set([
  "enable_http_compression",
  "send_progress_in_http_headers",
  "http_headers_progress_interval_ms",
  "wait_end_of_query",
]);

// Server-side sessions and roles would need per-client engine state that the
// pooled connections cannot keep apart, so they are refused rather than faked.
const SESSION_PARAMS = new Set(["session_id", "session_timeout", "session_check", "close_session", "role"]);

// These change state of the chdb connection itself, which later requests on the
// same pooled connection would inherit; over real HTTP they die with the query.
const CONNECTION_STATE_STATEMENTS = new Set(["SET", "USE", "BEGIN", "COMMIT", "ROLLBACK"]);

// Statements whose SETTINGS clause (at top level) is the query's own settings.
const QUERY_STATEMENTS = new Set(["SELECT", "WITH", "(", "EXPLAIN", "SHOW", "DESCRIBE", "DESC", "EXISTS"]);

const SETTING_NAME = /^[a-z_][a-z0-9_]*$/;

// Request bodies in these formats are bytes, not text, and would be mangled by
// the string-only chdb query API.
const BINARY_FORMAT = /^(RowBinary|Native|Parquet|Arrow|ORC|Avro|Protobuf|CapnProto|MsgPack|BSON|Npy)/i;

// Same mapping as ClickHouse's exceptionCodeToHTTPStatus, except authentication
// failures, which answer 401 here as the local stack expects.
const HTTP_STATUS_BY_CODE = new Map<number, number>([
  ...[
    6, 8, 15, 25, 26, 27, 36, 37, 38, 41, 44, 53, 62, 117, 123, 167, 168, 223, 321, 376, 427, 441, 675, 676,
  ].map((code): [number, number] => [code, 400]),
  ...[46, 47, 50, 56, 60, 63, 73, 78, 81, 115, 152, 336].map((code): [number, number] => [code, 404]),
  [194, 401],
  [516, 401],
  [497, 403],
  [159, 408],
  [229, 413],
  [48, 501],
]);

const DECODERS: Record<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress> = {
  gzip: () => zlib.createGunzip(),
  "x-gzip": () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

// chdb binds one data directory per process, so a second server could only
// ever share (and fight over) the first one's engine.
let activeDataDir: string | undefined;

class ClickHouseHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    readonly type: string,
    message: string,
  ) {
    super(`Code: ${code}. DB::Exception: ${message}. (${type})`);
  }
}

function badRequest(code: number, type: string, message: string): ClickHouseHttpError {
  return new ClickHouseHttpError(400, code, type, message);
}

function notImplemented(message: string): ClickHouseHttpError {
  return badRequest(48, "NOT_IMPLEMENTED", `${message} is not supported by the local chdb server`);
}

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
    const server = http.createServer((req, res) => {
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

// One chdb connection executes one query at a time, but several connections on
// the same data directory run in parallel and share its tables, so each query
// checks out a connection of its own and waits when all are busy.
class SessionPool {
  private readonly idle: Session[];
  private readonly waiting: Array<(session: Session) => void> = [];
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly dataDir: string,
    size: number,
  ) {
    this.idle = Array.from({ length: size }, () => new Session(dataDir));
  }

  async run<T>(task: (session: Session) => Promise<T>): Promise<T> {
    let session = await this.checkout();
    try {
      return await task(session);
    } catch (err) {
      session = this.replace(session);
      throw err;
    } finally {
      this.release(session);
    }
  }

  track(work: Promise<unknown>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    for (const session of this.idle.splice(0)) {
      session.close();
    }
    await drainPending();
  }

  private checkout(): Promise<Session> {
    const session = this.idle.pop();
    if (session !== undefined) {
      return Promise.resolve(session);
    }
    return new Promise((resolveSession) => this.waiting.push(resolveSession));
  }

  private release(session: Session): void {
    const next = this.waiting.shift();
    if (next === undefined) {
      this.idle.push(session);
    } else {
      next(session);
    }
  }

  // chdb quirk: when a query fails after producing output (a timeout, a result
  // limit, throwIf), that partial output stays buffered in the connection and
  // is prepended to the next result it returns. A fresh connection costs well
  // under a millisecond, so any failure retires the one it ran on.
  private replace(session: Session): Session {
    session.close();
    return new Session(this.dataDir);
  }
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
    const body = req.method === "POST" ? await readBody(req) : "";
    const sql = joinQuery(request.urlQuery, body);
    const result = await execute(pool, sql, request);
    sendResult(res, queryId, result.format, result.result);
  } catch (err) {
    sendError(res, queryId, err);
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

function authenticate(req: http.IncomingMessage, url: URL, opts: ClickHouseHttpOptions): void {
  const given = presentedCredentials(req, url);
  if (!sameSecret(given.user, opts.user) || !sameSecret(given.password, opts.password)) {
    throw new ClickHouseHttpError(
      401,
      516,
      "AUTHENTICATION_FAILED",
      `${given.user}: Authentication failed: password is incorrect, or there is no user with such name`,
    );
  }
}

function presentedCredentials(req: http.IncomingMessage, url: URL): { user: string; password: string } {
  const authorization = req.headers.authorization ?? "";
  if (authorization.startsWith("Basic ")) {
    const decoded = Buffer.from(authorization.slice(6), "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon < 0
      ? { user: decoded, password: "" }
      : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  const headerUser = singleHeader(req, "x-clickhouse-user");
  if (headerUser !== undefined) {
    return { user: headerUser, password: singleHeader(req, "x-clickhouse-key") ?? "" };
  }
  const urlUser = url.searchParams.get("user");
  if (urlUser !== null) {
    return { user: urlUser, password: url.searchParams.get("password") ?? "" };
  }
  return { user: "default", password: "" };
}

function singleHeader(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

// Hashing first makes the comparison constant-time regardless of length.
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

interface RequestParams {
  urlQuery: string | undefined;
  params: Record<string, string>;
  settings: Map<string, string>;
  defaultFormat: string | undefined;
}

function parseRequestParams(req: http.IncomingMessage, url: URL): RequestParams {
  const request: RequestParams = {
    urlQuery: undefined,
    params: {},
    settings: new Map(),
    defaultFormat: singleHeader(req, "x-clickhouse-format"),
  };
  checkDatabase(singleHeader(req, "x-clickhouse-database"));
  for (const [key, value] of url.searchParams) {
    applyUrlParam(request, key, value);
  }
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
function readBody(req: http.IncomingMessage): Promise<string> {
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
    source.once("end", () => resolveBody(Buffer.concat(chunks).toString("utf8")));
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
function joinQuery(urlQuery: string | undefined, body: string): string {
  if (urlQuery === undefined) {
    return body;
  }
  return body === "" ? urlQuery : `${urlQuery}\n${body}`;
}

async function execute(
  pool: SessionPool,
  sql: string,
  request: RequestParams,
): Promise<{ result: ChdbResult; format: string }> {
  const statement = analyzeStatement(sql);
  const format = statement.format ?? request.defaultFormat ?? "TabSeparated";
  // chdb's API treats the lowercase name 'arrow' as a request to run a
  // session-wide SET first, which must never reach a pooled connection.
  if (format === "arrow") {
    throw badRequest(73, "UNKNOWN_FORMAT", "Unknown format 'arrow'");
  }
  const finalSql = withSettings(sql, statement, request.settings, format);
  const params = toChdbParams(request.params, sql.slice(0, statement.headEnd));
  const hasParams = Object.keys(params).length > 0;
  const result = await pool.run((session) =>
    hasParams
      ? session.queryBindAsync(finalSql, params, { format })
      : session.queryAsync(finalSql, { format }),
  );
  return { result, format };
}

interface Token {
  text: string;
  upper: string;
  start: number;
  end: number;
  depth: number;
}

interface Statement {
  kind: string;
  /** The FORMAT named in the statement itself, if any. */
  format: string | undefined;
  /** Where URL settings go: before `FORMAT` in an INSERT, else the cut point for `FORMAT x SETTINGS ...`. */
  settingsAt: number;
  hasOwnSettings: boolean;
  /** End of the SQL text proper; for INSERT ... FORMAT the rows follow. */
  headEnd: number;
}

// Strings, quoted identifiers, heredocs and comments are matched whole so that
// keywords inside them are never mistaken for clauses. (Nested /* */ comments
// are rare enough to be read as their first level only.)
const TOKEN_SOURCE =
  String.raw`\s+|--[^\n]*|#[ !][^\n]*|/\*[\s\S]*?\*/|'(?:[^'\\]|\\[\s\S]|'')*'|"(?:[^"\\]|\\[\s\S]|"")*"|` +
  String.raw`\x60(?:[^\x60\\]|\\[\s\S]|\x60\x60)*\x60|\$([A-Za-z0-9_]*)\$[\s\S]*?\$\1\$|[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|[\s\S]`;
const SKIPPED_TOKEN = /^(\s|--|#[ !]|\/\*)/;

function* tokenize(sql: string): Generator<Token> {
  const re = new RegExp(TOKEN_SOURCE, "y");
  let depth = 0;
  while (re.lastIndex < sql.length) {
    const start = re.lastIndex;
    const text = (re.exec(sql) as RegExpExecArray)[0];
    if (SKIPPED_TOKEN.test(text)) {
      continue;
    }
    if (text === ")") {
      depth--;
    }
    yield { text, upper: text.toUpperCase(), start, end: re.lastIndex, depth };
    if (text === "(") {
      depth++;
    }
  }
}

function analyzeStatement(sql: string): Statement {
  const tokens = tokenize(sql);
  const first = tokens.next();
  if (first.done) {
    throw badRequest(62, "SYNTAX_ERROR", "Empty query");
  }
  const kind = first.value.upper;
  if (CONNECTION_STATE_STATEMENTS.has(kind)) {
    throw notImplemented(`${kind} (it would leak into other requests on the shared engine)`);
  }
  return kind === "INSERT" ? analyzeInsert(sql, tokens) : analyzeQuery(sql, kind, [first.value, ...tokens]);
}

// INSERT INTO [TABLE] (FUNCTION f(...) | name[.name]) [(columns)] <clause>:
// the insert's own SETTINGS sit right before <clause>.
function analyzeInsert(sql: string, tokens: Generator<Token>): Statement {
  const next = () => tokens.next().value as Token | undefined;
  let token = next();
  token = token?.upper === "INTO" ? next() : token;
  token = token?.upper === "TABLE" ? next() : token;
  if (token?.upper === "FUNCTION") {
    next();
    token = skipGroup(next(), next);
  } else {
    token = next();
    while (token?.text === ".") {
      next();
      token = next();
    }
  }
  token = skipGroup(token, next);
  const statement: Statement = {
    kind: "INSERT",
    format: undefined,
    settingsAt: token?.start ?? sql.length,
    hasOwnSettings: token?.upper === "SETTINGS",
    headEnd: sql.length,
  };
  if (token?.upper === "FORMAT") {
    const name = next();
    checkInsertFormat(name?.text);
    statement.headEnd = name?.end ?? sql.length;
    return statement;
  }
  // VALUES or SELECT: the rest is SQL, so look for a second statement or
  // a SETTINGS clause of the SELECT.
  const rest = token === undefined ? [] : [token, ...tokens];
  rejectMultiStatement(rest);
  statement.hasOwnSettings ||= rest.some((t) => t.depth === 0 && t.upper === "SETTINGS");
  return statement;
}

function checkInsertFormat(format: string | undefined): void {
  if (format !== undefined && BINARY_FORMAT.test(format)) {
    throw notImplemented(`Inserting binary format ${format} over HTTP`);
  }
}

/** If `open` is '(', consumes through its matching ')' and returns the token after it. */
function skipGroup(open: Token | undefined, next: () => Token | undefined): Token | undefined {
  if (open?.text !== "(") {
    return open;
  }
  let token = next();
  while (token !== undefined && !(token.text === ")" && token.depth === open.depth)) {
    token = next();
  }
  return next();
}

function analyzeQuery(sql: string, kind: string, tokens: Token[]): Statement {
  const statementTokens = rejectMultiStatement(tokens);
  const last = statementTokens[statementTokens.length - 1] as Token;
  const formatIndex = trailingFormatIndex(statementTokens);
  const formatToken = statementTokens[formatIndex];
  const ownSettingsFrom = ownSettingsStart(kind, formatIndex, statementTokens.length);
  return {
    kind,
    format: formatIndex < 0 ? undefined : statementTokens[formatIndex + 1]?.text,
    settingsAt: formatToken?.start ?? last.end,
    hasOwnSettings: statementTokens
      .slice(ownSettingsFrom)
      .some((t) => t.depth === 0 && t.upper === "SETTINGS"),
    headEnd: sql.length,
  };
}

// In a SELECT any top-level SETTINGS is the query's own; in DDL such as CREATE
// TABLE it is storage settings, and only one after a trailing FORMAT counts.
function ownSettingsStart(kind: string, formatIndex: number, tokenCount: number): number {
  if (QUERY_STATEMENTS.has(kind)) {
    return 0;
  }
  return formatIndex < 0 ? tokenCount : formatIndex;
}

/** Returns the tokens before the first top-level ';', refusing a second statement after it. */
function rejectMultiStatement(tokens: Token[]): Token[] {
  const semicolon = tokens.findIndex((t) => t.depth === 0 && t.text === ";");
  if (semicolon < 0) {
    return tokens;
  }
  if (tokens.slice(semicolon).some((t) => t.text !== ";")) {
    throw badRequest(62, "SYNTAX_ERROR", "Multi-statements are not allowed");
  }
  return tokens.slice(0, semicolon);
}

/** Index of a top-level `FORMAT name` that ends the statement (optionally followed by SETTINGS), or -1. */
function trailingFormatIndex(tokens: Token[]): number {
  for (let i = tokens.length - 2; i >= 0; i--) {
    const token = tokens[i] as Token;
    const after = tokens[i + 2];
    const endsStatement = after === undefined || (after.depth === 0 && after.upper === "SETTINGS");
    if (token.depth === 0 && token.upper === "FORMAT" && tokens[i + 1]?.text !== "(" && endsStatement) {
      return i;
    }
  }
  return -1;
}

// URL settings become a SETTINGS clause of the statement itself, because chdb
// connections are shared and a session-wide SET would leak into other requests.
// For INSERT the clause goes before FORMAT/VALUES/SELECT; for everything else it
// follows a FORMAT clause (added if missing), which the parser reads as
// query-level settings — that keeps them apart from a CREATE TABLE's storage
// SETTINGS and covers every SELECT of a UNION.
function withSettings(
  sql: string,
  statement: Statement,
  settings: Map<string, string>,
  format: string,
): string {
  if (settings.size === 0) {
    return sql;
  }
  if (statement.hasOwnSettings) {
    throw badRequest(
      36,
      "BAD_ARGUMENTS",
      "The statement has its own SETTINGS clause and settings were also given as URL parameters; use one or the other",
    );
  }
  if (statement.kind === "SYSTEM") {
    throw notImplemented("Applying URL settings to a SYSTEM statement");
  }
  const clause = `SETTINGS ${renderSettings(settings)}`;
  const head = sql.slice(0, statement.settingsAt);
  if (statement.kind === "INSERT") {
    return `${head} ${clause} ${sql.slice(statement.settingsAt)}`;
  }
  return `${head} FORMAT ${format} ${clause}`;
}

// Every value is sent as a string literal, as the real server receives it:
// ClickHouse parses a string into numeric, bool, seconds and map settings,
// whereas a bare numeric literal is rejected for String settings such as
// insert_deduplication_token (BAD_GET).
function renderSettings(settings: Map<string, string>): string {
  return [...settings].map(([name, value]) => `${name} = ${quoteString(value)}`).join(", ");
}

function quoteString(value: string): string {
  return `'${value.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

const PLACEHOLDER = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}/g;
const COMPOSITE_TYPE = /\b(Array|Map|Tuple|Nested)\s*\(/i;
const SIMPLE_ESCAPES: Record<string, string> = {
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  "0": "\0",
  a: "\x07",
  v: "\v",
  e: "\x1b",
};

// The HTTP interface carries param_* values in ClickHouse's escaped text form,
// but chdb's queryBindAsync escapes string arguments itself. To make the engine
// see the same value the real server would, each value is decoded first:
// scalars completely, composite literals (Array/Map/Tuple) only inside their
// quoted strings, where a quote is re-spelled '' because chdb's escaping would
// turn \' into \\' and end the string early.
function toChdbParams(params: Record<string, string>, sqlHead: string): Record<string, string | null> {
  const composite = new Set<string>();
  for (const match of sqlHead.matchAll(PLACEHOLDER)) {
    if (COMPOSITE_TYPE.test(match[2] as string)) {
      composite.add(match[1] as string);
    }
  }
  const bound: Record<string, string | null> = {};
  for (const [name, value] of Object.entries(params)) {
    if (composite.has(name)) {
      bound[name] = respellCompositeLiteral(value);
    } else {
      bound[name] = value === "\\N" ? null : unescapeText(value);
    }
  }
  return bound;
}

function unescapeText(value: string): string {
  let out = "";
  for (let i = 0; i < value.length; ) {
    const [char, next] = readChar(value, i);
    out += char;
    i = next;
  }
  return out;
}

function respellCompositeLiteral(value: string): string {
  let out = "";
  let quoted = false;
  for (let i = 0; i < value.length; ) {
    const raw = value[i] as string;
    if (quoted && raw === "'" && value[i + 1] === "'") {
      out += "''";
      i += 2;
    } else if (raw === "'") {
      quoted = !quoted;
      out += raw;
      i += 1;
    } else if (quoted) {
      const [char, next] = readChar(value, i);
      out += char === "'" ? "''" : char;
      i = next;
    } else {
      out += raw;
      i += 1;
    }
  }
  return out;
}

/** Reads one possibly backslash-escaped character; returns it and the next index. */
function readChar(value: string, i: number): [string, number] {
  const char = value[i] as string;
  const escaped = value[i + 1];
  if (char !== "\\" || escaped === undefined) {
    return [char, i + 1];
  }
  const hex = value.slice(i + 2, i + 4);
  if (escaped === "x" && /^[0-7][0-9a-fA-F]$/.test(hex)) {
    return [String.fromCharCode(Number.parseInt(hex, 16)), i + 4];
  }
  return [SIMPLE_ESCAPES[escaped] ?? escaped, i + 2];
}

function sendResult(res: http.ServerResponse, queryId: string, format: string, result: ChdbResult): void {
  const body = result.bytes();
  res.writeHead(200, {
    "Content-Type": contentTypeFor(format),
    "Content-Length": body.byteLength,
    "X-ClickHouse-Query-Id": queryId,
    "X-ClickHouse-Format": format,
    "X-ClickHouse-Summary": summaryOf(result, body.byteLength),
  });
  res.end(body);
}

function contentTypeFor(format: string): string {
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

function sendError(res: http.ServerResponse, queryId: string, err: unknown): void {
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

function describeError(err: unknown): { status: number; code: number; message: string } {
  if (err instanceof ClickHouseHttpError) {
    return { status: err.status, code: err.code, message: err.message };
  }
  const engineCode = (err as { clickhouseCode?: unknown } | null)?.clickhouseCode;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof engineCode === "number" && message.startsWith("Code: ")) {
    return { status: HTTP_STATUS_BY_CODE.get(engineCode) ?? 500, code: engineCode, message };
  }
  return { status: 500, code: 1001, message: `Code: 1001. DB::Exception: ${message}. (STD_EXCEPTION)` };
}

/**
 * POSTs one statement to a ClickHouse HTTP endpoint and returns the response
 * body. `params` fill `{name:Type}` placeholders and must already be in
 * ClickHouse's escaped text form (plain values without \, tab or newline are).
 */
export async function clickhouseQuery(
  url: string,
  auth: { user: string; password: string },
  sql: string,
  params: Record<string, string> = {},
): Promise<string> {
  const target = new URL(url);
  for (const [name, value] of Object.entries(params)) {
    target.searchParams.set(`param_${name}`, value);
  }
  const response = await fetch(target, {
    method: "POST",
    body: sql,
    headers: { Authorization: `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString("base64")}` },
  });
  const text = await response.text();
  if (!response.ok || response.headers.has("x-clickhouse-exception-code")) {
    throw new Error(text.trim() || `ClickHouse HTTP ${response.status}`);
  }
  return text;
}
