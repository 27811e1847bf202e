import { asc, eq } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { RateLimitResult } from "../../../durable-objects/rate-limiter.js";
import { projects } from "../../../schema/pg/schema.js";
import {
  type Credential,
  type CredentialPrincipal,
  credentialHash,
  credentialOf,
  type Principal,
  resolveHashed,
  type SessionPrincipal,
} from "../../shared/auth.js";
import {
  type Charged,
  CredentialCache,
  chargeCredential,
  credentialTtlMs,
} from "../../shared/credential-cache.js";
import { httpDb } from "../../shared/db.js";
import { ApiError } from "../../shared/errors.js";
import { noteUse } from "../../shared/last-used.js";
import { planOf, UNAUTHENTICATED_REQUESTS_PER_HOUR, WHOAMI_REQUESTS_PER_HOUR } from "../../shared/plans.js";
import { buckets, clientIp, consume, consumeIfCurrent } from "../../shared/rate-limit.js";
import type { Scope } from "../../shared/scopes.js";
import { sessionPrincipal } from "../accounts/session-principal.js";
import type { AppEnv } from "../context.js";
import { currentUser, hasSessionCookie } from "../web/session.js";

type Bucket = "plan" | "whoami";

function rateLimited(max: number, result: RateLimitResult): ApiError {
  return new ApiError("RATE_LIMITED", `Rate limit of ${max} requests per hour exceeded.`, {
    retryAfter: result.retryAfter,
  });
}

async function limit(c: Context<AppEnv>, bucket: string, max: number): Promise<void> {
  const result = await consume(c.env, bucket, max);
  c.set("rateLimit", result);
  if (!result.allowed) {
    throw rateLimited(max, result);
  }
}

/** Requests without valid credentials still count, per client IP, so keys cannot be guessed at speed. */
export async function limitAnonymous(c: Context<AppEnv>): Promise<void> {
  await limit(c, buckets.anonymous(clientIp(c.req.raw.headers)), UNAUTHENTICATED_REQUESTS_PER_HOUR);
}

/** Resolved keys and tokens of this isolate (workers/shared/credential-cache.ts). */
const principals = new CredentialCache<CredentialPrincipal>();

function chargeOf(principal: Principal, bucket: Bucket): { name: string; max: number } {
  return bucket === "whoami"
    ? { name: buckets.whoami(principal.tenantId), max: WHOAMI_REQUESTS_PER_HOUR }
    : { name: buckets.plan(principal.tenantId), max: planOf(principal.planId).requestsPerHour };
}

/**
 * The principal behind the credential with one request charged to its bucket, or null when the
 * credential is invalid (nothing charged then): shared/credential-cache.ts chargeCredential.
 */
async function authenticate(
  c: Context<AppEnv>,
  cred: NonNullable<Credential>,
  bucket: Bucket,
): Promise<Charged<CredentialPrincipal> | null> {
  const hashed = await credentialHash(cred);
  if (hashed === null) {
    return null;
  }
  const charged = await chargeCredential({
    cache: principals,
    key: hashed,
    bucketOf: (p) => chargeOf(p, bucket).name,
    limitOf: (p) => chargeOf(p, bucket).max,
    read: () => resolveHashed(httpDb(c.get("config")), hashed),
    onRead: (p) => noteUse(c.env, c.executionCtx, p),
    admit: () => {},
    charge: (name, expected, max) => consumeIfCurrent(c.env, name, expected, max),
    ttlMs: credentialTtlMs(c.get("config")),
    notAfter: (p) => (p.kind === "token" ? p.expiresAt.getTime() : undefined),
  });
  if (charged) {
    // projectsOf() compares against this, taken before it reads Postgres itself.
    c.set("generation", { bucket: charged.bucket, generation: charged.generation });
  }
  return charged;
}

/** The project a request names, in its path or X-Project-Id, if it looks like one. */
function namedProject(c: Context<AppEnv>): string | null {
  const m =
    /^\/api\/v1\/projects\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\/|$)/i.exec(
      c.req.path,
    );
  const header = c.req.header("x-project-id")?.trim() ?? "";
  return (
    m?.[1] ?? (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(header) ? header : null)
  );
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The dashboard's own pages call the Web API with the browser's session cookie (docs/dashboard.md).
 * A cookie is sent by the browser whoever made the page, so a change (any unsafe method) made with a
 * session must come from this origin: Origin present and equal to ours, and Sec-Fetch-Site, where the
 * browser sends it, same-origin. SameSite=Lax already keeps the cookie off cross-site fetches; this is
 * the check that does not depend on the browser's cookie policy. Reads need no such check: without CORS
 * headers another site cannot read the answer.
 */
function sameOriginChange(c: Context<AppEnv>): boolean {
  if (SAFE_METHODS.has(c.req.method)) {
    return true;
  }
  const origin = c.req.header("origin");
  const site = c.req.header("sec-fetch-site");
  return origin === new URL(c.req.url).origin && (site === undefined || site === "same-origin");
}

/**
 * A signed-in user's request, charged to their tenant's bucket as a key or token of it would be. Null
 * when the cookie is not a live session (the request is then treated as one without credentials).
 */
async function authenticateSession(
  c: Context<AppEnv>,
  bucket: Bucket,
): Promise<{ principal: SessionPrincipal; rate: RateLimitResult; limit: number } | null> {
  const user = await currentUser(c);
  if (!user) {
    return null;
  }
  if (!sameOriginChange(c)) {
    throw new ApiError(
      "FORBIDDEN",
      "A browser session may change data only from this site's own pages (Origin must be this origin).",
    );
  }
  const principal = await sessionPrincipal(c.get("db"), user, namedProject(c));
  if (!principal) {
    throw new ApiError("FORBIDDEN", "This account does not belong to any studio.");
  }
  const charge = chargeOf(principal, bucket);
  return { principal, rate: await consume(c.env, charge.name, charge.max), limit: charge.max };
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
      const session = await authenticateSession(c, bucket);
      if (session) {
        c.set("principal", session.principal);
        c.set("rateLimit", session.rate);
        if (!session.rate.allowed) {
          throw rateLimited(session.limit, session.rate);
        }
        return next();
      }
    }
    const auth = cred ? await authenticate(c, cred, bucket) : null;
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

export function requireScope(scope: Scope) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!principalOf(c).scopes.includes(scope)) {
      throw new ApiError("FORBIDDEN", `This operation requires the scope ${scope}.`);
    }
    return next();
  });
}

type ProjectRow = typeof projects.$inferSelect;

/** Each tenant's projects, oldest first, as confirmed at a generation of the bucket the request was charged to. */
const tenantProjects = new Map<
  string,
  { rows: ProjectRow[]; bucket: string; generation: number; expires: number }
>();

/**
 * The tenant's projects, oldest first. Cached per isolate like the principal and under the same
 * check: valid while the generation the gate just confirmed is the one they were read at, and the TTL
 * has not run out.
 */
export async function projectsOf(c: Context<AppEnv>): Promise<ProjectRow[]> {
  const tenantId = principalOf(c).tenantId;
  const confirmed = c.get("generation");
  const now = Date.now();
  const entry = tenantProjects.get(tenantId);
  if (
    entry &&
    confirmed &&
    entry.expires > now &&
    entry.bucket === confirmed.bucket &&
    entry.generation === confirmed.generation
  ) {
    return entry.rows;
  }
  const rows = await httpDb(c.get("config"))
    .select()
    .from(projects)
    .where(eq(projects.tenantId, tenantId))
    .orderBy(asc(projects.createdAt), asc(projects.id));
  const ttl = credentialTtlMs(c.get("config"));
  if (confirmed && ttl > 0) {
    if (tenantProjects.size >= 10_000) {
      tenantProjects.clear();
    }
    tenantProjects.set(tenantId, { rows, ...confirmed, expires: now + ttl });
  }
  return rows;
}

/**
 * The project if the caller may reach it: a key reaches only its own project, a token every project
 * of its tenant. Anything else is indistinguishable from a project that does not exist.
 */
export async function projectFor(c: Context<AppEnv>, projectId: string): Promise<ProjectRow> {
  const p = principalOf(c);
  if (p.kind === "key" && p.projectId !== projectId) {
    throw notFound();
  }
  const row = (await projectsOf(c)).find((r) => r.id === projectId);
  if (!row || row.tenantId !== p.tenantId) {
    throw notFound();
  }
  return row;
}

function notFound(): ApiError {
  return new ApiError("NOT_FOUND", "Project not found.");
}
