import type { ReplicaEntry } from "../../../durable-objects/key-replica.js";
import type { Config } from "../config.js";
import { httpSql } from "../pg.js";
import { isPlanId } from "../plans.js";
import { announceChange, type CredentialChange } from "./cache.js";
import { principalOf } from "./keys.js";
import type { KeyPrincipal } from "./principal.js";
import { isScope } from "./scopes.js";

// The edge's copy of the API keys (docs/accounts.md: "Ingest through a Postgres outage"). Postgres stays
// the source of truth and is read first; the KeyReplica object of a key (one per key hash) is what an
// isolate that never saw the key falls back to when Postgres cannot answer, so a Postgres outage of any
// length does not refuse a known key. Two writers, ordered by Postgres's clock (durable-objects/
// key-replica.ts): the API Worker after every committed change to a key, its project or its tenant's
// plan (syncKeyReplica, before the change is announced), and the ingest Worker with every lookup it
// made in Postgres (offerToReplica), which fills the replica with keys made before it existed and
// mends an entry whose write after a change failed.

/** How long a revoked key's tombstone is rewritten by syncKeyReplica after its revocation. */
const TOMBSTONE_DAYS = 30;

function replicaOf(env: Env, keyHash: string) {
  return env.KEY_REPLICA.get(env.KEY_REPLICA.idFromName(keyHash));
}

/** The replica's entry as a principal: undefined when it has none, null when the key is revoked. */
export async function readReplica(env: Env, keyHash: string): Promise<KeyPrincipal | null | undefined> {
  const entry = await replicaOf(env, keyHash).get();
  if (!entry) {
    return undefined;
  }
  const p = entry.principal;
  if (p === null) {
    return null;
  }
  if (!isPlanId(p.planId)) {
    throw new Error(`key replica: plan ${p.planId} is no plan`);
  }
  return {
    kind: "key",
    keyId: p.keyId,
    projectId: p.projectId,
    projectName: p.projectName,
    tenantId: p.tenantId,
    planId: p.planId,
    scopes: p.scopes.filter(isScope),
    // Only a Postgres read notes a use (last-used.ts); nothing to compare against here.
    lastUsedAt: null,
  };
}

function entryOf(principal: KeyPrincipal | null, readAt: number): ReplicaEntry {
  if (principal === null) {
    return { readAt, principal: null };
  }
  const { keyId, projectId, projectName, tenantId, planId, scopes } = principal;
  return { readAt, principal: { keyId, projectId, projectName, tenantId, planId, scopes } };
}

/**
 * The ingest Worker's write: what it just read from Postgres. A revocation is written only over an
 * entry the replica holds (an unknown key leaves nothing behind).
 */
export async function offerToReplica(
  env: Env,
  keyHash: string,
  principal: KeyPrincipal | null,
  readAt: number,
): Promise<void> {
  await replicaOf(env, keyHash).put(entryOf(principal, readAt), false);
}

const SCOPE_KEYS_SQL = `
  SELECT (extract(epoch FROM statement_timestamp()) * 1000)::float8 AS read_at, k.key_hash,
         k.revoked_at IS NOT NULL AS revoked, k.id AS key_id, k.scopes, k.last_used_at,
         p.id AS project_id, p.name AS project_name, t.id AS tenant_id, t.plan_id
  FROM api_keys k
  JOIN projects p ON p.id = k.project_id
  JOIN tenants t ON t.id = p.tenant_id
  WHERE t.id = $1
    AND ($2::uuid[] IS NULL OR p.id = ANY($2::uuid[]))
    AND (k.revoked_at IS NULL OR k.revoked_at > statement_timestamp() - make_interval(days => $3))`;

/**
 * The API Worker's write after a committed change: every key of the tenant (or of `projectIds` only)
 * as Postgres has it now, live keys and those revoked in the last TOMBSTONE_DAYS, each to its
 * replica. Read after the commit, so it wins over any lookup that raced the change. Throws when
 * Postgres or a replica cannot be reached; the caller decides what that means.
 */
export async function syncKeyReplica(
  env: Env,
  config: Config,
  change: { tenantId: string; projectIds?: string[] },
): Promise<{ keys: number }> {
  const rows = await httpSql(config).query(SCOPE_KEYS_SQL, [
    change.tenantId,
    change.projectIds ?? null,
    TOMBSTONE_DAYS,
  ]);
  await Promise.all(
    rows.map((row) => {
      const readAt = Number(row.read_at);
      const principal = row.revoked === true ? null : principalOf(row);
      return replicaOf(env, String(row.key_hash)).put(entryOf(principal, readAt), true);
    }),
  );
  return { keys: rows.length };
}

/**
 * announceChange for a committed change to API keys (created, revoked) or to what their principals say
 * (plan, project): the replica is written first, so an isolate that sees the new generation and then
 * finds Postgres down reads the change from the replica. Failures are logged, not thrown, as
 * announceChange's are: the change is committed, and the ingest Worker's next lookup mends the replica.
 */
export async function announceKeyChange(env: Env, config: Config, change: CredentialChange): Promise<void> {
  await syncKeyReplica(env, config, change).catch((err) =>
    console.error("key replica not written", err instanceof Error ? err.message : String(err)),
  );
  await announceChange(env, change);
}
