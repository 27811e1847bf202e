import type { Config } from "../config.js";
import { httpSql } from "../pg.js";
import { isPlanId, type PlanId } from "../plans.js";
import type { KeyPrincipal } from "./principal.js";
import { isScope } from "./scopes.js";
import { KEY_PREFIX, looksLikeSecret, sha256Hex } from "./secrets.js";

// The one API key lookup, used by both Workers: the ingest Worker's hot path and the API's gate
// (gate.ts resolveHashed). One plain SQL statement, so the ingest bundle carries no ORM.
// It answers one row even for an unknown key: read_at, Postgres's clock when the statement began, orders
// what the edge's key replica is told (key-replica.ts).
const FIND_KEY_SQL = `
  WITH found AS (
    SELECT k.id AS key_id, k.scopes, k.last_used_at, p.id AS project_id, p.name AS project_name,
           t.id AS tenant_id, t.plan_id
    FROM api_keys k
    JOIN projects p ON p.id = k.project_id
    JOIN tenants t ON t.id = p.tenant_id
    WHERE k.key_hash = $1 AND k.revoked_at IS NULL
    LIMIT 1
  )
  SELECT (extract(epoch FROM statement_timestamp()) * 1000)::float8 AS read_at, found.*
  FROM (VALUES (1)) AS one LEFT JOIN found ON true`;

type KeyRow = {
  key_id: string;
  scopes: string[];
  last_used_at: Date | null;
  project_id: string;
  project_name: string;
  tenant_id: string;
  plan_id: string;
};

/** The X-API-Key of an ingest request (ingest accepts API keys only), or null when absent. */
export function apiKeyOf(headers: Headers): string | null {
  return headers.get("x-api-key")?.trim() ?? null;
}

/** What a key is looked up and cached by (its SHA-256, never the secret); null when malformed. */
export async function ingestKeyHash(secret: string): Promise<string | null> {
  return looksLikeSecret(secret, KEY_PREFIX) ? sha256Hex(secret) : null;
}

/** The principal of the key with this hash, or null when it is unknown or revoked. */
export async function findKey(config: Config, keyHash: string): Promise<KeyPrincipal | null> {
  return (await lookupKey(config, keyHash)).principal;
}

/**
 * findKey, with when Postgres read it (Unix ms, its own clock). Given a `timeoutMs`, a Postgres that
 * does not answer within it counts as down (DependencyDown), as one that refuses does.
 */
export async function lookupKey(
  config: Config,
  keyHash: string,
  timeoutMs?: number,
): Promise<{ principal: KeyPrincipal | null; readAt: number }> {
  // One statement over Neon's HTTP query path: no connection to open or close (shared/pg.ts).
  const options = timeoutMs === undefined ? {} : { fetchOptions: { signal: AbortSignal.timeout(timeoutMs) } };
  const [row] = await httpSql(config).query(FIND_KEY_SQL, [keyHash], options);
  const readAt = Number(row?.read_at);
  if (!row || !Number.isFinite(readAt)) {
    throw new Error("api key lookup: read_at is not a number");
  }
  return { principal: row.key_id === null ? null : principalOf(row), readAt };
}

function plan(v: unknown): PlanId {
  if (!isPlanId(v)) {
    throw new Error(`api key lookup: plan_id ${String(v)} is no plan`);
  }
  return v;
}

/** The row's columns, each checked for the type the schema gives it (the driver's rows are untyped). */
export function principalOf(row: Record<string, unknown>): KeyPrincipal {
  const text = (name: keyof KeyRow): string => {
    const v = row[name];
    if (typeof v !== "string") {
      throw new Error(`api key lookup: ${name} is not text`);
    }
    return v;
  };
  const scopes: unknown = row.scopes;
  const lastUsedAt: unknown = row.last_used_at;
  return {
    kind: "key",
    keyId: text("key_id"),
    scopes: Array.isArray(scopes) ? scopes.filter(isScope) : [],
    projectId: text("project_id"),
    projectName: text("project_name"),
    tenantId: text("tenant_id"),
    planId: plan(row.plan_id),
    lastUsedAt: lastUsedAt instanceof Date ? lastUsedAt : null,
  };
}
