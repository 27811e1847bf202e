import type { Hook } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { type Scope, TOKEN_SCOPES } from "../shared/credentials/scopes.js";
import { ApiError } from "../shared/errors.js";
import type { AppEnv } from "./context.js";
import { ROLE_SCOPES } from "./credentials/session-principal.js";
import { requireScope } from "./middleware/auth.js";
import { projectFromHeader } from "./middleware/project-header.js";
import { projectFromPath } from "./middleware/project-path.js";

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    error_category: z
      .enum([
        "authentication",
        "authorization",
        "validation",
        "rate_limit",
        "not_found",
        "conflict",
        "payload",
        "internal",
      ])
      .optional(),
    retryable: z.boolean().optional(),
    retry_after: z.number().int().optional(),
    success: z.literal(false),
    error: z.string(),
  })
  .openapi("Problem");

const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: ProblemSchema } },
});

/** A problem+json response for statuses beyond the shared set (413, 415, 409...). */
export const problemDoc = problem;

/** Spread into every route's responses. */
export const errorResponses = {
  400: problem("Invalid parameters or body; `detail` names the field and the rule."),
  401: problem("Missing, invalid, revoked or expired credentials."),
  403: problem("The credential lacks the required scope, or the plan does not allow it."),
  404: problem("Not found, or not reachable with this credential."),
  429: problem("Rate limit exceeded; wait `Retry-After` seconds."),
} as const;

export const rateLimitHeaderDocs = {
  "X-RateLimit-Limit": {
    schema: { type: "integer" as const },
    description: "Requests allowed per sliding hour.",
  },
  "X-RateLimit-Remaining": {
    schema: { type: "integer" as const },
    description: "Requests left in the window.",
  },
  "X-RateLimit-Reset": {
    schema: { type: "integer" as const },
    description: "Unix time when the oldest counted request leaves the window.",
  },
};

/**
 * How an operation names the project it acts on: the path's {id}, the X-Project-Id header, or a field
 * of its body (POST /v1/query). Published as the operation's `x-project`.
 */
export type ProjectFrom = "path" | "header" | "body";

/**
 * The security requirement of an operation needing `scope`: tokens carry only TOKEN_SCOPES, so any other
 * scope (and key validation, which needs none) declares the API key as its only scheme. The scope is
 * listed in each requirement, as OpenAPI 3.1 allows for any scheme type.
 */
export function securityFor(scope: Scope | null): Array<Record<string, string[]>> {
  const scopes = scope ? [scope] : [];
  const tokens = scope !== null && (TOKEN_SCOPES as readonly Scope[]).includes(scope);
  // The dashboard's session cookie reaches what an owner's role may do (never events:write).
  const session = scope === null || ROLE_SCOPES.owner.includes(scope);
  return [
    { ApiKey: scopes },
    ...(tokens ? [{ BearerAuth: scopes }] : []),
    ...(session ? [{ Session: scopes }] : []),
  ];
}

type Later = MiddlewareHandler<AppEnv>[];
type ScopeGate = ReturnType<typeof requireScope>;

/**
 * An operation's access policy, spread into its createRoute: the documented security requirement (with
 * the scope) and `x-project`, and the middleware enforcing them, so each is written once per route.
 * Order: the scope (403) before the project (404), both before `after` (body limits) and the
 * validators. A "body" project is authorized by the handler, once the body is validated.
 */
export function policy<const M extends Later>(
  p: { scope: Scope; project: "path" },
  ...after: M
): {
  security: Array<Record<string, string[]>>;
  "x-project": "path";
  middleware: [ScopeGate, typeof projectFromPath, ...M];
};
export function policy<const M extends Later>(
  p: { scope: Scope; project: "header" },
  ...after: M
): {
  security: Array<Record<string, string[]>>;
  "x-project": "header";
  middleware: [ScopeGate, typeof projectFromHeader, ...M];
};
export function policy<const M extends Later>(
  p: { scope: Scope; project?: "body" },
  ...after: M
): {
  security: Array<Record<string, string[]>>;
  "x-project"?: "body";
  middleware: [ScopeGate, ...M];
};
export function policy(p: { scope: Scope; project?: ProjectFrom }, ...after: Later) {
  const project =
    p.project === "path" ? [projectFromPath] : p.project === "header" ? [projectFromHeader] : [];
  return {
    security: securityFor(p.scope),
    ...(p.project ? { "x-project": p.project } : {}),
    middleware: [requireScope(p.scope), ...project, ...after],
  };
}

export const ProjectIdParam = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" }, description: "Project UUID" }),
});

export function envelope<T extends z.ZodType>(data: T, description: string) {
  return {
    description,
    headers: rateLimitHeaderDocs,
    content: { "application/json": { schema: z.object({ success: z.literal(true), data }) } },
  };
}

/** zod failures take the one error door: a 400 naming the field and the rule. */
export const defaultHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = [result.target, ...(issue?.path ?? [])].join(".");
    throw new ApiError("BAD_REQUEST", `${where}: ${issue?.message ?? "invalid"}`, {
      extensions: { field: where },
    });
  }
};
