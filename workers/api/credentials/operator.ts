import type { Config } from "../../shared/config.js";
import { changedBuckets } from "../../shared/credentials/cache.js";
import { syncKeyReplica } from "../../shared/credentials/key-replica.js";
import { sha256Hex, timingSafeEqual } from "../../shared/credentials/secrets.js";
import { ApiError } from "../../shared/errors.js";
import { httpSql } from "../../shared/pg.js";
import { bumpGenerations } from "../../shared/rate-limit.js";

// Changes made outside the Workers (the admin CLI, an operator's SQL) cannot bump the RateLimiter
// generations the credential caches are confirmed against (cache.ts), so on their own they take effect
// only when cached entries expire. The API Worker therefore serves one operator-only route that
// announces such a change; the CLI calls it after committing (scripts/admin/announce.ts). It is
// authenticated by the OPERATOR_SECRET Worker secret, not by any API key, token or session.

/** The operator route, on the API Worker's host. */
export const OPERATOR_CHANGES_PATH = "/api/operator/credential-changes";

/**
 * Whether an Authorization header carries the operator secret as a Bearer token. Digests are compared,
 * in constant time, so neither the secret's content nor its length shows in the timing; with no secret
 * configured nothing matches.
 */
export async function isOperator(config: Config, authorization: string | null): Promise<boolean> {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
  if (!config.OPERATOR_SECRET || presented === undefined) {
    return false;
  }
  const [a, b] = await Promise.all([sha256Hex(presented), sha256Hex(config.OPERATOR_SECRET)]);
  const enc = new TextEncoder();
  return timingSafeEqual(enc.encode(a), enc.encode(b));
}

const TENANT_PROJECTS_SQL = "SELECT id FROM projects WHERE tenant_id = $1";

/**
 * Announces a change to everything of the tenant: the key replica of each of its keys, its plan and
 * whoami buckets and the ingest bucket of
 * each of its projects (those in Postgres now, and `projectIds`, for projects already deleted), so every
 * cached key, token and project list of the tenant is read again on its next use. Unlike cache.ts
 * announceChange, a failure is thrown: the operator must learn that the change is bounded only by the TTL.
 */
export async function announceTenantChange(
  env: Env,
  config: Config,
  tenantId: string,
  projectIds: string[] = [],
): Promise<{ buckets: number }> {
  const rows = await httpSql(config).query(TENANT_PROJECTS_SQL, [tenantId]);
  const current = rows.flatMap((r) => (typeof r.id === "string" ? [r.id] : []));
  const names = changedBuckets({ tenantId, projectIds: [...new Set([...current, ...projectIds])] });
  try {
    // Every key of the tenant as Postgres has it now (a plan change reaches all of them), before the
    // generations move: see key-replica.ts announceKeyChange.
    await syncKeyReplica(env, config, { tenantId });
    await bumpGenerations(env, names);
  } catch (err) {
    console.error("credential change not announced", err instanceof Error ? err.message : String(err));
    throw new ApiError("UNAVAILABLE", "The change could not be announced; retry the request.", {
      retryAfter: 5,
    });
  }
  return { buckets: names.length };
}
