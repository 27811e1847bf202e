import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { projects } from "../../../schema/pg/schema.js";
import { credentialOf, type Principal, resolveCredential } from "../../shared/auth.js";
import { ApiError } from "../../shared/errors.js";
import { noteUse } from "../../shared/last-used.js";
import { planOf, UNAUTHENTICATED_REQUESTS_PER_HOUR, WHOAMI_REQUESTS_PER_HOUR } from "../../shared/plans.js";
import { clientIp, consume } from "../../shared/rate-limit.js";
import type { Scope } from "../../shared/scopes.js";
import type { AppEnv } from "../context.js";

type Bucket = "plan" | "whoami";

async function limit(c: Context<AppEnv>, bucket: string, max: number): Promise<void> {
  const result = await consume(c.env, bucket, max);
  c.set("rateLimit", result);
  if (!result.allowed) {
    throw new ApiError("RATE_LIMITED", `Rate limit of ${max} requests per hour exceeded.`, {
      retryAfter: result.retryAfter,
    });
  }
}

/** Requests without valid credentials still count, per client IP, so keys cannot be guessed at speed. */
export async function limitAnonymous(c: Context<AppEnv>): Promise<void> {
  await limit(c, `ip:${clientIp(c.req.raw.headers)}`, UNAUTHENTICATED_REQUESTS_PER_HOUR);
}

/**
 * Authenticates and charges the request to a bucket: the tenant's plan quota, or whoami's own bucket.
 * The first gate a request passes wins, so a route can be given its own bucket by a gate mounted
 * before the general one.
 */
export function gate(bucket: Bucket) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (c.get("principal")) {
      return next();
    }
    const cred = credentialOf(c.req.raw.headers);
    const principal = cred ? await resolveCredential(c.get("db"), cred) : null;
    if (!principal) {
      await limitAnonymous(c);
      throw new ApiError(
        "UNAUTHORIZED",
        cred
          ? "The API key or access token is invalid, revoked or expired."
          : "Missing credentials: send X-API-Key.",
      );
    }
    c.set("principal", principal);
    noteUse(c.env, c.executionCtx, principal);
    if (bucket === "whoami") {
      await limit(c, `whoami:${principal.tenantId}`, WHOAMI_REQUESTS_PER_HOUR);
    } else {
      await limit(c, `tenant:${principal.tenantId}`, planOf(principal.planId).requestsPerHour);
    }
    return next();
  });
}

export function principalOf(c: Context<AppEnv>): Principal {
  const p = c.get("principal");
  if (!p) {
    throw new ApiError("UNAUTHORIZED", "Missing credentials: send X-API-Key.");
  }
  return p;
}

export function requireScope(scope: Scope) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!principalOf(c).scopes.includes(scope)) {
      throw new ApiError("FORBIDDEN", `This operation requires the scope ${scope}.`);
    }
    return next();
  });
}

/**
 * The project if the caller may reach it: a key reaches only its own project, a token every project
 * of its tenant. Anything else is indistinguishable from a project that does not exist.
 */
export async function projectFor(c: Context<AppEnv>, projectId: string) {
  const p = principalOf(c);
  if (p.kind === "key" && p.projectId !== projectId) {
    throw notFound();
  }
  const [row] = await c.get("db").select().from(projects).where(eq(projects.id, projectId)).limit(1);
  if (!row || row.tenantId !== p.tenantId) {
    throw notFound();
  }
  return row;
}

function notFound(): ApiError {
  return new ApiError("NOT_FOUND", "Project not found.");
}
