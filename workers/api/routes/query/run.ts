import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { openQueryClickHouse } from "../../../shared/clickhouse.js";
import type { AppEnv } from "../../context.js";
import { readerRetention } from "../../data-retention/horizon.js";
import { projectFor, readerOf } from "../../middleware/auth.js";
import { envelope, errorResponses, ProblemSchema, policy } from "../../openapi.js";
import { QUERY_LIMITS, runUserQuery } from "../../query/run.js";
import { QueryBodySchema, QueryResultSchema } from "./schema.js";

export const route = createRoute({
  method: "post",
  path: "/v1/query",
  operationId: "runQuery",
  tags: ["Query"],
  summary: "Run a SELECT over the project's events",
  description:
    "The only table is `events` (the project's rows, wire-contract column names). The statement is " +
    "parsed by ClickHouse and checked against an allow-list (400 when refused), then run read-only " +
    "with the project filter enforced by the engine and bounds on time, memory, bytes read and rows. " +
    "An execution failure answers 422; a timeout says so. Needs data:admin (API key only).",
  ...policy({ scope: "data:admin", project: "body" }),
  request: {
    body: { required: true, content: { "application/json": { schema: QueryBodySchema } } },
  },
  responses: {
    200: envelope(QueryResultSchema, "Columns, rows and statistics."),
    ...errorResponses,
    422: {
      description: "The query failed while running: a timeout, a limit, an unknown column, a type error.",
      content: { "application/problem+json": { schema: ProblemSchema } },
    },
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const project = await projectFor(c, body.project_id);
    const retention = await readerRetention(readerOf(c));
    const data = await runUserQuery(
      openQueryClickHouse(c.get("config")),
      project.id,
      body.sql,
      body.limit,
      QUERY_LIMITS,
      retention.fromMs,
    );
    return c.json({ success: true as const, data }, 200);
  });
}
