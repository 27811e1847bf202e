import type { BudgetResult, CheckedHit, RateLimitResult } from "../../durable-objects/rate-limiter.js";

export const HOUR_SECONDS = 3600;

/** The buckets authenticated requests are charged to; each also carries its credentials generation. */
export const buckets = {
  plan: (tenantId: string) => `tenant:${tenantId}`,
  whoami: (tenantId: string) => `whoami:${tenantId}`,
  ingest: (projectId: string) => `ingest:${projectId}`,
};

/** consume() for a cached principal: counted only if `expected` is still the bucket's generation. */
export function consumeIfCurrent(
  env: Env,
  bucket: string,
  expected: number | null,
  limit: number,
): Promise<CheckedHit> {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(bucket)).hitIfCurrent(
    expected,
    limit,
    HOUR_SECONDS,
  );
}

/** Bumps the credentials generation of each bucket; resolves once every one has taken it. */
export async function bumpGenerations(env: Env, names: string[]): Promise<void> {
  await Promise.all(names.map((name) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name)).bump()));
}

/** One RateLimiter object per bucket name; see durable-objects/rate-limiter.ts. */
export function consume(env: Env, bucket: string, limit: number, cost = 1): Promise<RateLimitResult> {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(bucket)).hit(limit, HOUR_SECONDS, cost);
}

/** Charges `events` to the tenant's budget of the current UTC month. */
export function chargeMonthlyEvents(
  env: Env,
  tenantId: string,
  limit: number | null,
  events: number,
  now = new Date(),
): Promise<BudgetResult> {
  const month = now.toISOString().slice(0, 7);
  const periodEnd = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`budget:${tenantId}:${month}`)).charge(
    limit,
    events,
    periodEnd,
  );
}

export function rateLimitHeaders(r: RateLimitResult): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(r.limit),
    "X-RateLimit-Remaining": String(r.remaining),
    "X-RateLimit-Reset": String(r.reset),
  };
}

/** The client's address as Cloudflare reports it; one shared bucket when it is absent (local tools). */
export function clientIp(headers: Headers): string {
  return headers.get("cf-connecting-ip") ?? "unknown";
}
