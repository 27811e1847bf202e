import type { BudgetResult, CheckedCharge, RateLimitResult } from "../../durable-objects/rate-limiter.js";

export const HOUR_SECONDS = 3600;

/**
 * Every RateLimiter object's name, written once. The first three are the buckets authenticated requests
 * are charged to; each also carries its credentials generation.
 */
export const buckets = {
  plan: (tenantId: string) => `tenant:${tenantId}`,
  whoami: (tenantId: string) => `whoami:${tenantId}`,
  ingest: (projectId: string) => `ingest:${projectId}`,
  /** Requests without valid credentials, per client address. */
  anonymous: (ip: string) => `ip:${ip}`,
  /** The OAuth endpoints, per client address. */
  oauth: (ip: string) => `oauth:ip:${ip}`,
  signInIp: (ip: string) => `sign-in:ip:${ip}`,
  /** Keyed by the email's hash: object names show up in logs and dashboards, an email should not. */
  signInAccount: (emailHash: string) => `sign-in:account:${emailHash}`,
  /** One account's failures from one client address: the refusal a stranger can cause is their own. */
  signInAccountIp: (emailHash: string, ip: string) => `sign-in:account-ip:${emailHash}:${ip}`,
  /** Sign-ups and password-reset requests (each sends a mail), per client address. */
  mailIp: (ip: string) => `mail:ip:${ip}`,
  /** Invitation mails of one studio. */
  mailTenant: (tenantId: string) => `mail:studio:${tenantId}`,
  /** Events accepted in one UTC month (YYYY-MM). */
  monthlyEvents: (tenantId: string, month: string) => `budget:${tenantId}:${month}`,
};

/** The RateLimiter object of a bucket (durable-objects/rate-limiter.ts). */
export function limiter(env: Env, bucket: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(bucket));
}

/** charge() for a cached principal: counted only if `expected` is still the bucket's generation. */
export function chargeIfCurrent(
  env: Env,
  bucket: string,
  expected: number | null,
  limit: number,
): Promise<CheckedCharge> {
  return limiter(env, bucket).chargeWindowIfCurrent(expected, limit, HOUR_SECONDS);
}

/** Bumps the credentials generation of each bucket; resolves once every one has taken it. */
export async function bumpGenerations(env: Env, names: string[]): Promise<void> {
  await Promise.all(names.map((name) => limiter(env, name).bump()));
}

/** One RateLimiter object per bucket name; see durable-objects/rate-limiter.ts. */
export function charge(env: Env, bucket: string, limit: number, cost = 1): Promise<RateLimitResult> {
  return limiter(env, bucket).chargeWindow(limit, HOUR_SECONDS, cost);
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
  return limiter(env, buckets.monthlyEvents(tenantId, month)).chargeBudget(limit, events, periodEnd);
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
