import type { Hook } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { ApiError } from "../shared/errors.js";
import type { AppEnv } from "./context.js";

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

export const security: Record<"keyOrToken" | "keyOnly", Array<Record<string, string[]>>> = {
  keyOrToken: [{ ApiKey: [] }, { BearerAuth: [] }],
  keyOnly: [{ ApiKey: [] }],
};

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
