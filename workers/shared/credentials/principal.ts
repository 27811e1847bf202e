import type { PlanId } from "../plans.js";
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
  /** As stored: written at most every few minutes (last-used.ts). */
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
 * role there (session-principal.ts). Like a token it reaches the tenant's projects.
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
