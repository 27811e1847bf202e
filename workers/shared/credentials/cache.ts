import type { CheckedCharge, RateLimitResult } from "../../../durable-objects/rate-limiter.js";
import type { Config } from "../config.js";
import { dependencyDownIn } from "../errors.js";
import { buckets, bumpGenerations } from "../rate-limit.js";

// Authentication without Postgres on the hot path. Each isolate keeps what a credential resolved to
// (keyed by the credential's SHA-256, never the secret) for a short TTL. Every authenticated request
// already makes one call to the RateLimiter object of the bucket it is charged to; that call also
// compares the generation the cached principal was read at with the bucket's current one
// (RateLimiter.chargeWindowIfCurrent), and counts the request only when they match. A change made through the
// Workers (a key, token or grant revoked; a plan or project changed) bumps the generation of every
// bucket the tenant's credentials are charged to (announceChange), so the next request on any isolate
// anywhere reads Postgres again. A change made outside the Workers cannot bump anything itself: the
// admin CLI announces its changes through the API Worker's operator route (operator.ts), and one made
// by plain SQL can be announced the same way; one never announced takes effect within the TTL.
//
// When Postgres cannot answer, an expired entry is still served as long as its generation is confirmed
// current (stale-if-error): an announced change still takes effect at once, and Postgres being down
// costs a known credential nothing. A credential without such an entry falls back to the path's
// replica, if it has one (key-replica.ts); failing that, the request is a retryable 503, never a 401.

export const DEFAULT_CREDENTIAL_TTL_MS = 15_000;
/**
 * A principal read from Postgres is cached only if its bucket's generation last changed at least this
 * long before the read began: the RateLimiter object's clock and the isolate's may differ by that much,
 * and a change committed while the read was in flight must not be cached as current.
 */
const CLOCK_SKEW_MS = 2_000;
const MAX_ENTRIES = 10_000;

export function credentialTtlMs(config: Config): number {
  return config.CREDENTIAL_CACHE_TTL_MS === ""
    ? DEFAULT_CREDENTIAL_TTL_MS
    : Number(config.CREDENTIAL_CACHE_TTL_MS);
}

type Entry<P> = {
  principal: P;
  expires: number;
  /** Bucket name → the generation the principal was confirmed at through that bucket's object. */
  generations: Map<string, number>;
};

export class CredentialCache<P> {
  private readonly entries = new Map<string, Entry<P>>();

  /**
   * The cached principal and the generation of `bucket` it was confirmed at (undefined when it has not
   * been confirmed through that bucket: the caller must read Postgres), or undefined when absent.
   * An expired entry is returned too, `expired` set: it is served only when Postgres cannot answer.
   */
  lookup(
    key: string,
    bucketOf: (principal: P) => string,
    now = Date.now(),
  ): { principal: P; bucket: string; expected: number | undefined; expired: boolean } | undefined {
    const entry = this.entries.get(key);
    if (!entry) {
      return undefined;
    }
    const bucket = bucketOf(entry.principal);
    return {
      principal: entry.principal,
      bucket,
      expected: entry.generations.get(bucket),
      expired: entry.expires <= now,
    };
  }

  /**
   * Keeps a principal read from Postgres at `readStartedAt`, confirmed through `bucket`'s object by `checked`,
   * unless the bucket changed around the time of the read. `notAfter` caps the entry (a token's expiry).
   */
  remember(
    key: string,
    principal: P,
    bucket: string,
    checked: CheckedCharge,
    readStartedAt: number,
    ttlMs: number,
    notAfter = Number.POSITIVE_INFINITY,
    now = Date.now(),
  ): void {
    if (ttlMs <= 0 || checked.changedAt >= readStartedAt - CLOCK_SKEW_MS) {
      this.entries.delete(key);
      return;
    }
    // Generations confirmed through other buckets stay valid: each is compared again on use, and any
    // change since then makes it differ.
    const generations = this.entries.get(key)?.generations ?? new Map<string, number>();
    generations.set(bucket, checked.generation);
    if (this.entries.size >= MAX_ENTRIES) {
      this.entries.clear();
    }
    this.entries.set(key, { principal, expires: Math.min(now + ttlMs, notAfter), generations });
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}

/** How one Worker resolves and charges its credentials; see chargeCredential. */
export type CredentialPath<P> = {
  cache: CredentialCache<P>;
  /** The credential's cache key (its kind and SHA-256). */
  key: string;
  /** The bucket a principal's requests are charged to, and its limit per window. */
  bucketOf: (principal: P) => string;
  limitOf: (principal: P) => number;
  /** Reads the principal from Postgres; null when unknown, revoked or expired. */
  read: () => Promise<P | null>;
  /**
   * Where to look when read() finds Postgres down (DependencyDown) and no cached entry can stand in:
   * the principal, null when the credential is known to be revoked, undefined when it is not known.
   */
  fallback?: () => Promise<P | null | undefined>;
  /** Called once per Postgres read (the lastUsedAt note). */
  onRead: (principal: P) => void;
  /** Throws to refuse the request before anything is charged (a missing scope, say). */
  admit: (principal: P) => void;
  /** RateLimiter.chargeWindowIfCurrent on the bucket's object (shared/rate-limit.ts chargeIfCurrent). */
  charge: (bucket: string, expected: number | null, limit: number) => Promise<CheckedCharge>;
  ttlMs: number;
  /** When the credential itself expires (a token), if it does. */
  notAfter?: (principal: P) => number | undefined;
  /** The request's now (ms), against which the cached entry and the credential's expiry are judged. */
  now?: number;
};

export type Charged<P> = {
  principal: P;
  bucket: string;
  /** The bucket's credentials generation the principal is confirmed at. */
  generation: number;
  limit: number;
  rate: RateLimitResult;
};

/**
 * The principal behind a credential with one request charged to its bucket, or null when the
 * credential is invalid (nothing charged then). On a warm cache this is one RateLimiter call, which
 * also confirms the cached principal is current; a stale or missing entry is read from Postgres,
 * admitted, charged, and cached unless its bucket changed around the read. With Postgres down, an
 * expired entry still current by generation, else the path's fallback (chargeWithoutSource). Both
 * Workers' hot paths.
 */
export async function chargeCredential<P>(path: CredentialPath<P>): Promise<Charged<P> | null> {
  const { cache, key, bucketOf } = path;
  const cached = cache.lookup(key, bucketOf, path.now);
  let current = cached?.expected !== undefined ? cached : undefined;
  if (current && !current.expired) {
    const charged = await chargeCached(path, current);
    if (charged) {
      return charged;
    }
    // Stale: something changed since it was cached; read it again below.
    current = undefined;
  }
  const readStartedAt = Date.now();
  let principal: P | null;
  try {
    principal = await path.read();
  } catch (err) {
    if (!dependencyDownIn(err)) {
      throw err;
    }
    return chargeWithoutSource(path, current, err);
  }
  if (!principal) {
    cache.forget(key);
    return null;
  }
  path.onRead(principal);
  return chargeRead(path, principal, readStartedAt);
}

type Cached<P> = { principal: P; bucket: string; expected: number | undefined };

/** A cached principal charged at the generation it was confirmed at; null when that is no longer current. */
async function chargeCached<P>(path: CredentialPath<P>, cached: Cached<P>): Promise<Charged<P> | null> {
  if (cached.expected === undefined) {
    return null;
  }
  path.admit(cached.principal);
  const limit = path.limitOf(cached.principal);
  const checked = await path.charge(cached.bucket, cached.expected, limit);
  if (!checked.result) {
    return null;
  }
  return {
    principal: cached.principal,
    bucket: cached.bucket,
    generation: checked.generation,
    limit,
    rate: checked.result,
  };
}

/** A principal just read (from Postgres or the replica at `readStartedAt`), admitted, charged and cached. */
async function chargeRead<P>(
  path: CredentialPath<P>,
  principal: P,
  readStartedAt: number,
): Promise<Charged<P>> {
  path.admit(principal);
  const bucket = path.bucketOf(principal);
  const limit = path.limitOf(principal);
  const checked = await path.charge(bucket, null, limit);
  path.cache.remember(
    path.key,
    principal,
    bucket,
    checked,
    readStartedAt,
    path.ttlMs,
    path.notAfter?.(principal),
  );
  if (!checked.result) {
    // chargeWindowIfCurrent counts whenever no generation is expected; a RateLimiter that did not is a fault.
    throw new Error(`rate limiter ${bucket} did not count an unconditional hit`);
  }
  return { principal, bucket, generation: checked.generation, limit, rate: checked.result };
}

/**
 * Postgres is down: the expired entry if its generation is still current, else the replica's answer,
 * else the DependencyDown (a retryable 503). A credential is never refused for want of Postgres.
 */
async function chargeWithoutSource<P>(
  path: CredentialPath<P>,
  expired: Cached<P> | undefined,
  down: unknown,
): Promise<Charged<P> | null> {
  // A token past its own expiry is never served, Postgres or not.
  if (
    expired &&
    (path.notAfter?.(expired.principal) ?? Number.POSITIVE_INFINITY) > (path.now ?? Date.now())
  ) {
    const charged = await chargeCached(path, expired);
    if (charged) {
      return charged;
    }
  }
  if (!path.fallback) {
    throw down;
  }
  const readStartedAt = Date.now();
  let principal: P | null | undefined;
  try {
    principal = await path.fallback();
  } catch (err) {
    console.error("credential fallback failed", err instanceof Error ? err.message : String(err));
    throw down;
  }
  if (principal === undefined) {
    throw down;
  }
  if (principal === null) {
    path.cache.forget(path.key);
    return null;
  }
  return chargeRead(path, principal, readStartedAt);
}

/** A committed change to a tenant's credentials, plan or projects (see announceChange). */
export type CredentialChange = { tenantId: string; projectIds?: string[] };

/**
 * The buckets whose generation a change bumps: the tenant's plan and whoami buckets, and the ingest
 * bucket of each of `projectIds` (the projects whose ingest buckets a changed API key may be charged to).
 */
export function changedBuckets(change: CredentialChange): string[] {
  return [
    buckets.plan(change.tenantId),
    buckets.whoami(change.tenantId),
    ...(change.projectIds ?? []).map(buckets.ingest),
  ];
}

/**
 * Announces a committed change to a tenant's credentials, plan or projects: every bucket they are
 * charged to gets a new generation, so cached principals and project lists are read again on their next
 * use. A failure is logged, not thrown: the change is already committed, and the TTL still bounds it.
 */
export async function announceChange(env: Env, change: CredentialChange): Promise<void> {
  await bumpGenerations(env, changedBuckets(change)).catch((err) =>
    console.error("credential change not announced", err instanceof Error ? err.message : String(err)),
  );
}
