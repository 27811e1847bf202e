import { asc, eq } from "drizzle-orm";
import type { RateLimitResult } from "../../../durable-objects/rate-limiter.js";
import { type ProjectRow, projects } from "../../../schema/pg/schema.js";
import type { Config } from "../../shared/config.js";
import {
  type Charged,
  CredentialCache,
  chargeCredential,
  credentialTtlMs,
} from "../../shared/credentials/cache.js";
import { readReplica } from "../../shared/credentials/key-replica.js";
import { findKey } from "../../shared/credentials/keys.js";
import { noteUse } from "../../shared/credentials/last-used.js";
import {
  type Credential,
  type CredentialPrincipal,
  credentialHash,
  type Principal,
  type SessionPrincipal,
} from "../../shared/credentials/principal.js";
import type { Scope } from "../../shared/credentials/scopes.js";
import { ApiError, dependencyDownIn } from "../../shared/errors.js";
import { planOf, UNAUTHENTICATED_REQUESTS_PER_HOUR, WHOAMI_REQUESTS_PER_HOUR } from "../../shared/plans.js";
import { buckets, charge, chargeIfCurrent, clientIp } from "../../shared/rate-limit.js";
import { type Db, httpDb } from "../db.js";
import { sessionPrincipal } from "./session-principal.js";
import type { SessionUser } from "./sessions.js";
import { findToken } from "./tokens.js";

// The Web API's gate, without the web framework: a request's credential (key, token or session) to a
// principal with one request charged to its bucket, scope checks and project access. The Hono
// middleware (workers/api/middleware/auth.ts) only reads the request and sets what these return.

/** The bucket a gate charges: the tenant's plan quota, or whoami's own. */
export type Bucket = "plan" | "whoami";

/** What the gate confirmed: the bucket it charged and that bucket's credentials generation. */
export type Confirmed = { bucket: string; generation: number };

export function rateLimited(max: number, result: RateLimitResult): ApiError {
  return new ApiError("RATE_LIMITED", `Rate limit of ${max} requests per hour exceeded.`, {
    retryAfter: result.retryAfter,
  });
}

/** Requests without valid credentials still count, per client IP, so keys cannot be guessed at speed. */
export async function chargeAnonymous(env: Env, headers: Headers): Promise<RateLimitResult> {
  return charge(env, buckets.anonymous(clientIp(headers)), UNAUTHENTICATED_REQUESTS_PER_HOUR);
}

/** Resolved keys and tokens of this isolate (cache.ts). */
const principals = new CredentialCache<CredentialPrincipal>();

function chargeOf(principal: Principal, bucket: Bucket): { name: string; max: number } {
  return bucket === "whoami"
    ? { name: buckets.whoami(principal.tenantId), max: WHOAMI_REQUESTS_PER_HOUR }
    : { name: buckets.plan(principal.tenantId), max: planOf(principal.planId).requestsPerHour };
}

/**
 * The principal behind a credentialHash(), or null when it is unknown, revoked or expired. A key is
 * looked up by the same statement the ingest Worker uses (keys.ts findKey).
 */
export async function resolveHashed(
  config: Config,
  hashed: string,
  now?: number,
): Promise<CredentialPrincipal | null> {
  const [kind, hash = ""] = hashed.split(":");
  return kind === "key"
    ? findKey(config, hash)
    : findToken(httpDb(config), hash, now === undefined ? undefined : new Date(now));
}

/**
 * The principal behind a key or token with one request charged to its bucket, or null when the
 * credential is invalid (nothing charged then): cache.ts chargeCredential.
 */
export async function chargeKeyOrToken(
  env: Env,
  config: Config,
  ctx: { waitUntil(promise: Promise<unknown>): void },
  cred: NonNullable<Credential>,
  bucket: Bucket,
  now?: number,
): Promise<Charged<CredentialPrincipal> | null> {
  const hashed = await credentialHash(cred);
  if (hashed === null) {
    return null;
  }
  return chargeCredential({
    cache: principals,
    key: hashed,
    bucketOf: (p) => chargeOf(p, bucket).name,
    limitOf: (p) => chargeOf(p, bucket).max,
    read: () => resolveHashed(config, hashed, now),
    // Postgres down and nothing cached: a key can still be read from the ingest edge's replica.
    fallback: hashed.startsWith("key:") ? () => readReplica(env, hashed.slice("key:".length)) : undefined,
    onRead: (p) => noteUse(env, ctx, p),
    admit: () => {},
    charge: (name, expected, max) => chargeIfCurrent(env, name, expected, max),
    ttlMs: credentialTtlMs(config),
    notAfter: (p) => (p.kind === "token" ? p.expiresAt.getTime() : undefined),
    now,
  });
}

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

/** The project a request names, in its path or X-Project-Id, if it looks like one. */
function namedProject(request: Request): string | null {
  const m = new RegExp(`^/api/v1/projects/(${UUID})(?:/|$)`, "i").exec(new URL(request.url).pathname);
  const header = request.headers.get("x-project-id")?.trim() ?? "";
  return m?.[1] ?? (new RegExp(`^${UUID}$`, "i").test(header) ? header : null);
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
function sameOriginChange(request: Request): boolean {
  if (SAFE_METHODS.has(request.method)) {
    return true;
  }
  const origin = request.headers.get("origin");
  const site = request.headers.get("sec-fetch-site");
  return origin === new URL(request.url).origin && (site === null || site === "same-origin");
}

/**
 * A signed-in user's request, charged to their tenant's bucket as a key or token of it would be: the
 * principal of their membership in the studio the request names (session-principal.ts).
 */
export async function chargeSession(
  env: Env,
  db: Db,
  user: SessionUser,
  request: Request,
  bucket: Bucket,
): Promise<{ principal: SessionPrincipal; rate: RateLimitResult; limit: number }> {
  if (!sameOriginChange(request)) {
    throw new ApiError(
      "FORBIDDEN",
      "A browser session may change data only from this site's own pages (Origin must be this origin).",
    );
  }
  const project = namedProject(request);
  const principal = await sessionPrincipal(db, user, project);
  if (!principal) {
    // Someone removed from their last studio asks for one of its projects: as for any stranger, 404.
    throw project
      ? new ApiError("NOT_FOUND", "Project not found.")
      : new ApiError("FORBIDDEN", "This account does not belong to any studio.");
  }
  const owed = chargeOf(principal, bucket);
  return { principal, rate: await charge(env, owed.name, owed.max), limit: owed.max };
}

export function requireScopeOf(principal: Principal, scope: Scope): void {
  if (!principal.scopes.includes(scope)) {
    throw new ApiError("FORBIDDEN", `This operation requires the scope ${scope}.`);
  }
}

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
export async function tenantProjectsOf(
  config: Config,
  tenantId: string,
  confirmed: Confirmed | undefined,
): Promise<ProjectRow[]> {
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
  const current =
    entry && confirmed && entry.bucket === confirmed.bucket && entry.generation === confirmed.generation;
  let rows: ProjectRow[];
  try {
    rows = await httpDb(config)
      .select()
      .from(projects)
      .where(eq(projects.tenantId, tenantId))
      .orderBy(asc(projects.createdAt), asc(projects.id));
  } catch (err) {
    // Postgres down: an expired list still confirmed at the current generation is served
    // (stale-if-error, as the principal is: cache.ts), so reads that need only ClickHouse keep answering.
    if (current && dependencyDownIn(err)) {
      return entry.rows;
    }
    throw err;
  }
  const ttl = credentialTtlMs(config);
  if (confirmed && ttl > 0) {
    if (tenantProjects.size >= 10_000) {
      tenantProjects.clear();
    }
    tenantProjects.set(tenantId, { rows, ...confirmed, expires: now + ttl });
  }
  return rows;
}

/**
 * The project if the principal may reach it: a key reaches only its own project, a token or session
 * every project of its tenant (`projectsOf` lists them). Anything else is indistinguishable from a
 * project that does not exist.
 */
export async function reachableProject(
  principal: Principal,
  projectId: string,
  projectsOf: () => Promise<ProjectRow[]>,
): Promise<ProjectRow> {
  if (principal.kind === "key" && principal.projectId !== projectId) {
    throw notFound();
  }
  const row = (await projectsOf()).find((r) => r.id === projectId);
  if (!row || row.tenantId !== principal.tenantId) {
    throw notFound();
  }
  return row;
}

function notFound(): ApiError {
  return new ApiError("NOT_FOUND", "Project not found.");
}
