import { and, eq, gt, isNull } from "drizzle-orm";
import { apiKeys, oauthGrants, oauthTokens, projects, tenants } from "../../schema/pg/schema.js";
import type { Db } from "./db.js";
import type { PlanId } from "./plans.js";
import type { Scope } from "./scopes.js";
import { KEY_PREFIX, looksLikeSecret, sha256Hex, TOKEN_PREFIX } from "./secrets.js";

export type KeyPrincipal = {
  kind: "key";
  keyId: string;
  projectId: string;
  projectName: string;
  tenantId: string;
  planId: PlanId;
  scopes: Scope[];
  /** As stored: written at most every few minutes (workers/shared/last-used.ts). */
  lastUsedAt: Date | null;
};

export type TokenPrincipal = {
  kind: "token";
  tokenId: string;
  tenantId: string;
  planId: PlanId;
  scopes: Scope[];
  /** The OAuth grant behind the token, and when it was last used; null for admin-made tokens. */
  grantId: string | null;
  lastUsedAt: Date | null;
  /** A cached token is never trusted past this. */
  expiresAt: Date;
};

/**
 * A signed-in person using the dashboard: their membership in one tenant, with the scopes of their
 * role there (workers/api/accounts/session-principal.ts). Like a token it reaches the tenant's projects.
 */
export type SessionPrincipal = {
  kind: "session";
  sessionId: string;
  userId: string;
  tenantId: string;
  planId: PlanId;
  scopes: Scope[];
};

/** What a key or token resolves to (what the credential caches hold). */
export type CredentialPrincipal = KeyPrincipal | TokenPrincipal;

export type Principal = CredentialPrincipal | SessionPrincipal;

export type Credential = { kind: "key"; secret: string } | { kind: "token"; secret: string } | null;

/** X-API-Key takes precedence over a Bearer token when both are sent. */
export function credentialOf(headers: Headers, allowBearer = true): Credential {
  const key = headers.get("x-api-key");
  if (key !== null) {
    return { kind: "key", secret: key.trim() };
  }
  const authz = headers.get("authorization");
  if (allowBearer && authz) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
    return { kind: "token", secret: m?.[1] ?? "" };
  }
  return null;
}

/**
 * The SHA-256 of a well-formed credential, namespaced by kind: what it is looked up and cached by.
 * Null for a malformed one, which can never match.
 */
export async function credentialHash(cred: NonNullable<Credential>): Promise<string | null> {
  if (!looksLikeSecret(cred.secret, cred.kind === "key" ? KEY_PREFIX : TOKEN_PREFIX)) {
    return null;
  }
  return `${cred.kind}:${await sha256Hex(cred.secret)}`;
}

/** The principal behind a credentialHash(), or null when it is unknown, revoked or expired. */
export async function resolveHashed(db: Db, hashed: string): Promise<CredentialPrincipal | null> {
  const [kind, hash = ""] = hashed.split(":");
  return kind === "key" ? findKey(db, hash) : findToken(db, hash);
}

/** The principal behind a credential, or null when it is unknown, revoked or expired. */
export async function resolveCredential(
  db: Db,
  cred: NonNullable<Credential>,
): Promise<CredentialPrincipal | null> {
  const hashed = await credentialHash(cred);
  return hashed === null ? null : resolveHashed(db, hashed);
}

async function findKey(db: Db, keyHash: string): Promise<KeyPrincipal | null> {
  const [row] = await db
    .select({
      keyId: apiKeys.id,
      scopes: apiKeys.scopes,
      projectId: projects.id,
      projectName: projects.name,
      tenantId: tenants.id,
      planId: tenants.planId,
      lastUsedAt: apiKeys.lastUsedAt,
    })
    .from(apiKeys)
    .innerJoin(projects, eq(projects.id, apiKeys.projectId))
    .innerJoin(tenants, eq(tenants.id, projects.tenantId))
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .limit(1);
  return row ? { kind: "key", ...row } : null;
}

async function findToken(db: Db, tokenHash: string): Promise<TokenPrincipal | null> {
  const [row] = await db
    .select({
      tokenId: oauthTokens.id,
      scopes: oauthTokens.scopes,
      tenantId: tenants.id,
      planId: tenants.planId,
      grantId: oauthGrants.id,
      lastUsedAt: oauthGrants.lastUsedAt,
      expiresAt: oauthTokens.expiresAt,
    })
    .from(oauthTokens)
    .innerJoin(tenants, eq(tenants.id, oauthTokens.tenantId))
    // Revoking a grant revokes its tokens in the same transaction; the join is a second lock.
    .leftJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(
      and(
        eq(oauthTokens.tokenHash, tokenHash),
        isNull(oauthTokens.revokedAt),
        gt(oauthTokens.expiresAt, new Date()),
        isNull(oauthGrants.revokedAt),
      ),
    )
    .limit(1);
  return row ? { kind: "token", ...row } : null;
}
