import type { AstNode } from "./ast.js";
import { IN_FUNCTIONS, isAllowedFunction } from "./functions.js";

/** A statement refused by the allow-list; the message is shown to the caller as is. */
export class QueryRefused extends Error {}

// Plain SELECT forms and the expressions inside them. Everything else, a SETTINGS clause (`Set`), a
// query parameter, an APPLY transformer (it names a function to call), is refused by its absence.
const ALLOWED_NODES = new Set([
  "SelectWithUnionQuery",
  "SelectIntersectExceptQuery",
  "SelectQuery",
  "ExpressionList",
  "TablesInSelectQuery",
  "TablesInSelectQueryElement",
  "TableExpression",
  "TableIdentifier",
  "TableJoin",
  "ArrayJoin",
  "Subquery",
  "WithElement",
  "Identifier",
  "Literal",
  "Function",
  "Asterisk",
  "QualifiedAsterisk",
  "ColumnsRegexpMatcher",
  "ColumnsListMatcher",
  "QualifiedColumnsRegexpMatcher",
  "QualifiedColumnsListMatcher",
  "ColumnsTransformerList",
  "ColumnsExceptTransformer",
  "ColumnsReplaceTransformer",
  "ColumnsReplaceTransformer::Replacement",
  "OrderByElement",
  "WindowDefinition",
  "WindowListElement",
  "SampleRatio",
]);

const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const NODE_HINTS: Record<string, string> = {
  Set: "a SETTINGS clause is not allowed",
  ColumnsApplyTransformer: "APPLY is not allowed",
  QueryParameter: "query parameters are not allowed",
};

/**
 * The statement we run is `WITH events AS (<project's rows>) SELECT * FROM (<user sql>)`. Its parse
 * tree must have exactly that shape, or the user's text escaped its parentheses; the user's part is
 * returned for the allow-list walk.
 */
export function userPartOf(root: AstNode, outputFormat: string): AstNode {
  if (root.type !== "SelectWithUnionQuery") {
    throw new QueryRefused("sql: must be a single SELECT statement");
  }
  // The FORMAT the client library appends to the EXPLAIN shows as a last child of the root, and
  // nothing else may.
  const [body, format, ...more] = root.children;
  const formatIsOurs = format === undefined || (format.type === "Identifier" && format.text === outputFormat);
  if (body?.type !== "ExpressionList" || !formatIsOurs || more.length) {
    throw new QueryRefused("sql: must be a single SELECT statement");
  }
  const select = only(body, "SelectQuery");
  const [withList, projection, tables] = select.children;
  if (
    select.children.length !== 3 ||
    withList?.type !== "ExpressionList" ||
    withList.children.length !== 1 ||
    withList.children[0]?.type !== "WithElement" ||
    projection?.type !== "ExpressionList" ||
    projection.children.length !== 1 ||
    projection.children[0]?.type !== "Asterisk" ||
    projection.children[0].children.length !== 0 ||
    tables?.type !== "TablesInSelectQuery"
  ) {
    throw new QueryRefused("sql: must be a single SELECT statement");
  }
  const element = only(tables, "TablesInSelectQueryElement");
  const subquery = only(only(element, "TableExpression"), "Subquery");
  return only(subquery, "SelectWithUnionQuery");
}

function only(node: AstNode, type: string): AstNode {
  const [child] = node.children;
  if (node.children.length !== 1 || child?.type !== type) {
    throw new QueryRefused("sql: must be a single SELECT statement");
  }
  return child;
}

/** Walks the user's part of the tree; throws QueryRefused at the first node outside the allow-list. */
export function checkAllowed(node: AstNode): void {
  if (!ALLOWED_NODES.has(node.type)) {
    throw new QueryRefused(`sql: ${NODE_HINTS[node.type] ?? `${node.type} is not allowed`}`);
  }
  switch (node.type) {
    case "SelectWithUnionQuery":
      // A second child is INTO OUTFILE or FORMAT.
      if (node.children.length !== 1) {
        throw new QueryRefused("sql: FORMAT and INTO OUTFILE are not allowed");
      }
      break;
    case "TableExpression":
      checkTableExpression(node);
      break;
    case "TableIdentifier":
      checkTableName(node.text);
      break;
    case "Function":
      checkFunction(node);
      break;
  }
  for (const child of node.children) {
    checkAllowed(child);
  }
}

function checkTableExpression(node: AstNode): void {
  const [source, ...rest] = node.children;
  if (source?.type === "Function") {
    throw new QueryRefused(`sql: table function ${source.text}() is not allowed; read the events table`);
  }
  if (source?.type !== "TableIdentifier" && source?.type !== "Subquery") {
    throw new QueryRefused("sql: FROM must name the events table, a WITH name, or a subquery");
  }
  if (rest.some((r) => r.type !== "SampleRatio")) {
    throw new QueryRefused("sql: unsupported table expression");
  }
}

// A bare name is `events` or one of the statement's own WITH names; what each really resolves to is
// checked again on the analyzed query tree, where a name that reached any other table is refused.
function checkTableName(name: string): void {
  if (!PLAIN_NAME.test(name)) {
    throw new QueryRefused(
      `sql: table ${name} is not allowed; the only table is events (no database qualifier)`,
    );
  }
}

function checkFunction(node: AstNode): void {
  const name = node.text;
  if (!isAllowedFunction(name)) {
    throw new QueryRefused(`sql: function ${name} is not allowed`);
  }
  if (IN_FUNCTIONS.has(name.toLowerCase())) {
    const right = node.children[0]?.children[1];
    if (right?.type === "Identifier" || right?.type === "TableIdentifier") {
      throw new QueryRefused("sql: IN takes a list or a subquery, not a table name");
    }
  }
}

/**
 * Second look, after ClickHouse's analyzer resolved every name (`EXPLAIN QUERY TREE`): every table
 * actually read must be telemetry.events (only our own WITH reads it; the user's text cannot name it),
 * and no table function may appear.
 */
export function checkResolvedTables(lines: string[], allowedTable: string): void {
  for (const line of lines) {
    const trimmed = line.trimStart();
    if (trimmed.startsWith("TABLE_FUNCTION id:")) {
      throw new QueryRefused("sql: table functions are not allowed; read the events table");
    }
    if (trimmed.startsWith("TABLE id:")) {
      const table = /table_name: (.*)$/.exec(trimmed)?.[1];
      if (table !== allowedTable) {
        throw new QueryRefused(`sql: table ${table ?? "?"} is not allowed; the only table is events`);
      }
    }
  }
}
