// Just enough SQL analysis to find a statement's kind, FORMAT and SETTINGS,
// and to add URL settings to it without a session-wide SET.

import { badRequest, notImplemented } from "./errors.js";

// These change state of the chdb connection itself, which later requests on the
// same pooled connection would inherit; over real HTTP they die with the query.
const CONNECTION_STATE_STATEMENTS = new Set(["SET", "USE", "BEGIN", "COMMIT", "ROLLBACK"]);

// Statements whose SETTINGS clause (at top level) is the query's own settings.
const QUERY_STATEMENTS = new Set(["SELECT", "WITH", "(", "EXPLAIN", "SHOW", "DESCRIBE", "DESC", "EXISTS"]);

// Request bodies in these formats are bytes, not text, and would be mangled by
// the string-only chdb query API: an INSERT in one must name it in the URL's
// query, so the body is its rows alone (server.ts: executeBinaryInsert).
export const BINARY_FORMAT =
  /^(RowBinary|Native|Parquet|Arrow|ORC|Avro|Protobuf|CapnProto|MsgPack|BSON|Npy)/i;

interface Token {
  text: string;
  upper: string;
  start: number;
  end: number;
  depth: number;
}

export interface Statement {
  kind: string;
  /** The FORMAT named in the statement itself, if any. */
  format: string | undefined;
  /** The format of an INSERT's rows (`INSERT … FORMAT x`), if named. */
  insertFormat?: string;
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

/** `binaryRows`: the rows come apart from the SQL (server.ts: executeBinaryInsert), so a binary FORMAT is fine. */
export function analyzeStatement(sql: string, binaryRows = false): Statement {
  const tokens = tokenize(sql);
  const first = tokens.next();
  if (first.done) {
    throw badRequest(62, "SYNTAX_ERROR", "Empty query");
  }
  const kind = first.value.upper;
  if (CONNECTION_STATE_STATEMENTS.has(kind)) {
    throw notImplemented(`${kind} (it would leak into other requests on the shared engine)`);
  }
  return kind === "INSERT"
    ? analyzeInsert(sql, tokens, binaryRows)
    : analyzeQuery(sql, kind, [first.value, ...tokens]);
}

// INSERT INTO [TABLE] (FUNCTION f(...) | name[.name]) [(columns)] <clause>:
// the insert's own SETTINGS sit right before <clause>.
function analyzeInsert(sql: string, tokens: Generator<Token>, binaryRows: boolean): Statement {
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
    if (!binaryRows) {
      checkInsertFormat(name?.text);
    }
    statement.insertFormat = name?.text;
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
export function withSettings(
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
export function renderSettings(settings: Map<string, string>): string {
  return [...settings].map(([name, value]) => `${name} = ${quoteString(value)}`).join(", ");
}

function quoteString(value: string): string {
  return `'${value.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}
