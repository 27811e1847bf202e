import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { ProjectRow } from "../../../schema/pg/schema.js";
import { credentialOf, type Principal } from "../../shared/credentials/principal.js";
import type { Scope } from "../../shared/credentials/scopes.js";
import { ApiError } from "../../shared/errors.js";
import type { AppEnv } from "../context.js";
import {
  type Bucket,
  chargeAnonymous,
  chargeKeyOrToken,
  chargeSession,
  rateLimited,
  reachableProject,
  requireScopeOf,
  tenantProjectsOf,
} from "../credentials/gate.js";
import { currentUser, hasSessionCookie } from "../credentials/session-cookie.js";
import type { Reader } from "../data-retention/horizon.js";

// The gate as Hono middleware: reads the request, sets what workers/api/credentials/gate.ts decides.

/** Requests without valid credentials still count, per client IP, so keys cannot be guessed at speed. */
export async function limitAnonymous(c: Context<AppEnv>): Promise<void> {
  const result = await chargeAnonymous(c.env, c.req.raw.headers);
  c.set("rateLimit", result);
  if (!result.allowed) {
    throw rateLimited(result.limit, result);
  }
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
    if (!cred && hasSessionCookie(c)) {
      // A cookie that is not a live session is treated as no credentials.
      const user = await currentUser(c);
      if (user) {
        const session = await chargeSession(c.env, c.get("db"), user, c.req.raw, bucket);
        c.set("principal", session.principal);
        c.set("rateLimit", session.rate);
        if (!session.rate.allowed) {
          throw rateLimited(session.limit, session.rate);
        }
        return next();
      }
    }
    const auth = cred
      ? await chargeKeyOrToken(c.env, c.get("config"), c.executionCtx, cred, bucket, c.get("now"))
      : null;
    if (!auth) {
      await limitAnonymous(c);
      throw new ApiError(
        "UNAUTHORIZED",
        cred
          ? "The API key or access token is invalid, revoked or expired."
          : hasSessionCookie(c)
            ? "Your session has ended: sign in again."
            : "Missing credentials: send X-API-Key.",
      );
    }
    c.set("principal", auth.principal);
    c.set("rateLimit", auth.rate);
    // projectsOf() compares against this, taken before it reads Postgres itself.
    c.set("generation", { bucket: auth.bucket, generation: auth.generation });
    if (!auth.rate.allowed) {
      throw rateLimited(auth.limit, auth.rate);
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

/** The caller as the domain's reads take it: the principal's studio and plan, and the request's clock. */
export function readerOf<E extends AppEnv>(c: Context<E>): Reader {
  const ctx = c as unknown as Context<AppEnv>;
  const p = principalOf(ctx);
  return { tenantId: p.tenantId, planId: p.planId, nowMs: ctx.get("now"), config: ctx.get("config") };
}

export function requireScope(scope: Scope) {
  return createMiddleware<AppEnv>(async (c, next) => {
    requireScopeOf(principalOf(c), scope);
    return next();
  });
}

/** The tenant's projects, oldest first (gate.ts tenantProjectsOf). */
export function projectsOf(c: Context<AppEnv>): Promise<ProjectRow[]> {
  return tenantProjectsOf(c.get("config"), principalOf(c).tenantId, c.get("generation"));
}

/** The project if the caller may reach it; otherwise 404 (gate.ts reachableProject). */
export function projectFor(c: Context<AppEnv>, projectId: string): Promise<ProjectRow> {
  return reachableProject(principalOf(c), projectId, () => projectsOf(c));
}
