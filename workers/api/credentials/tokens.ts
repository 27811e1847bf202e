import { and, eq, gt, isNull, or } from "drizzle-orm";
import {
  memberships,
  oauthCodes,
  oauthGrants,
  oauthRefreshTokens,
  oauthTokens,
  tenants,
} from "../../../schema/pg/schema.js";
import type { TokenPrincipal } from "../../shared/credentials/principal.js";
import {
  base64url,
  looksLikeSecret,
  newSecret,
  sha256Hex,
  TOKEN_PREFIX,
  timingSafeEqual,
} from "../../shared/credentials/secrets.js";
import type { Db, Tx } from "../db.js";
import { type GrantScope, parseScope, revokeGrant } from "./grants.js";

export const CODE_PREFIX = "gtc_";
export const REFRESH_PREFIX = "gtr_";
/** Lifetimes, in seconds. */
export const CODE_TTL = 60;
export const ACCESS_TOKEN_TTL = 3600;
export const REFRESH_TOKEN_TTL = 30 * 24 * 3600;

/** An RFC 6749 section 5.2 error: the token endpoint answers it as {error, error_description}. */
export class OAuthError extends Error {
  constructor(
    readonly error:
      | "invalid_request"
      | "invalid_client"
      | "invalid_grant"
      | "unsupported_grant_type"
      | "invalid_scope",
    readonly description: string,
  ) {
    super(description);
  }

  get status(): 400 | 401 {
    return this.error === "invalid_client" ? 401 : 400;
  }
}

export type TokenSet = {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
};

/** A single-use code for the consented request; only its hash is stored. */
export async function issueCode(
  db: Db,
  input: {
    clientId: string;
    userId: string;
    tenantId: string;
    scopes: GrantScope[];
    redirectUri: string;
    codeChallenge: string;
  },
  now = new Date(),
): Promise<string> {
  const code = newSecret(CODE_PREFIX);
  await db.insert(oauthCodes).values({
    ...input,
    codeHash: await sha256Hex(code),
    createdAt: now,
    expiresAt: new Date(now.getTime() + CODE_TTL * 1000),
  });
  return code;
}

/** RFC 7636: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

async function pkceMatches(verifier: string, challenge: string): Promise<boolean> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  const enc = new TextEncoder();
  return timingSafeEqual(enc.encode(base64url(digest)), enc.encode(challenge));
}

async function mintTokens(
  tx: Tx,
  grant: { id: string; tenantId: string },
  scopes: GrantScope[],
  now: Date,
): Promise<TokenSet> {
  const access = newSecret(TOKEN_PREFIX);
  const refresh = newSecret(REFRESH_PREFIX);
  await tx.insert(oauthTokens).values({
    tenantId: grant.tenantId,
    grantId: grant.id,
    tokenHash: await sha256Hex(access),
    scopes,
    createdAt: now,
    expiresAt: new Date(now.getTime() + ACCESS_TOKEN_TTL * 1000),
  });
  await tx.insert(oauthRefreshTokens).values({
    grantId: grant.id,
    tokenHash: await sha256Hex(refresh),
    createdAt: now,
    expiresAt: new Date(now.getTime() + REFRESH_TOKEN_TTL * 1000),
  });
  return {
    access_token: access,
    token_type: "Bearer",
    expires_in: ACCESS_TOKEN_TTL,
    refresh_token: refresh,
    scope: scopes.join(" "),
  };
}

async function isMember(db: Db, userId: string, tenantId: string): Promise<boolean> {
  const [row] = await db
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.userId, userId), eq(memberships.tenantId, tenantId)))
    .limit(1);
  return row !== undefined;
}

/**
 * Told the tenant whose credentials a revocation changed, after it committed, so cached principals are
 * dropped everywhere (cache.ts announceChange).
 */
export type AnnounceRevocation = (tenantId: string) => Promise<void>;

async function revokeAndAnnounce(db: Db, grantId: string, announce: AnnounceRevocation, now = new Date()) {
  const tenantId = await revokeGrant(db, grantId, now);
  if (tenantId) {
    await announce(tenantId);
  }
}

/** grant_type=authorization_code: the code once, for its client, redirect URI and PKCE verifier. */
export async function exchangeCode(
  db: Db,
  input: { clientId: string; code?: string; redirectUri?: string; codeVerifier?: string },
  announce: AnnounceRevocation,
  now = new Date(),
): Promise<TokenSet> {
  const { code, redirectUri, codeVerifier } = input;
  if (!code || !redirectUri || !codeVerifier) {
    const missing = ["code", "redirect_uri", "code_verifier"].filter(
      (_, i) => ![code, redirectUri, codeVerifier][i],
    );
    throw new OAuthError("invalid_request", `Missing ${missing.join(", ")}.`);
  }
  if (!VERIFIER.test(codeVerifier)) {
    throw new OAuthError("invalid_request", "code_verifier must be 43 to 128 unreserved characters.");
  }
  const [row] = looksLikeSecret(code, CODE_PREFIX)
    ? await db
        .select()
        .from(oauthCodes)
        .where(eq(oauthCodes.codeHash, await sha256Hex(code)))
        .limit(1)
    : [];
  if (!row || row.clientId !== input.clientId) {
    throw new OAuthError("invalid_grant", "The authorization code is invalid.");
  }
  if (row.usedAt) {
    // RFC 6749 section 4.1.2: a replayed code revokes what it was exchanged for.
    if (row.grantId) {
      await revokeAndAnnounce(db, row.grantId, announce, now);
    }
    throw new OAuthError(
      "invalid_grant",
      "The authorization code was already used; tokens issued for it are revoked.",
    );
  }
  if (row.expiresAt <= now) {
    throw new OAuthError("invalid_grant", "The authorization code has expired.");
  }
  if (row.redirectUri !== redirectUri) {
    throw new OAuthError("invalid_grant", "redirect_uri does not match the authorization request.");
  }
  if (!(await pkceMatches(codeVerifier, row.codeChallenge))) {
    throw new OAuthError("invalid_grant", "code_verifier does not match the code_challenge.");
  }
  if (!(await isMember(db, row.userId, row.tenantId))) {
    throw new OAuthError("invalid_grant", "The user no longer belongs to the studio of this authorization.");
  }
  return db.transaction(async (tx) => {
    const claimed = await tx
      .update(oauthCodes)
      .set({ usedAt: now })
      .where(and(eq(oauthCodes.id, row.id), isNull(oauthCodes.usedAt)))
      .returning({ id: oauthCodes.id });
    if (!claimed.length) {
      throw new OAuthError("invalid_grant", "The authorization code was already used.");
    }
    const [grant] = await tx
      .insert(oauthGrants)
      .values({
        clientId: row.clientId,
        userId: row.userId,
        tenantId: row.tenantId,
        scopes: row.scopes,
        createdAt: now,
        lastUsedAt: now,
      })
      .returning({ id: oauthGrants.id, tenantId: oauthGrants.tenantId });
    if (!grant) {
      throw new Error("grant insert returned no row");
    }
    await tx.update(oauthCodes).set({ grantId: grant.id }).where(eq(oauthCodes.id, row.id));
    return mintTokens(tx, grant, row.scopes, now);
  });
}

/**
 * grant_type=refresh_token: rotates. The presented token is spent and a new pair issued; a spent token
 * presented again is reuse, and revokes the whole grant.
 */
export async function refreshTokens(
  db: Db,
  input: { clientId: string; refreshToken?: string; scope?: string },
  announce: AnnounceRevocation,
  now = new Date(),
): Promise<TokenSet> {
  if (!input.refreshToken) {
    throw new OAuthError("invalid_request", "Missing refresh_token.");
  }
  const [row] = looksLikeSecret(input.refreshToken, REFRESH_PREFIX)
    ? await db
        .select({
          id: oauthRefreshTokens.id,
          usedAt: oauthRefreshTokens.usedAt,
          revokedAt: oauthRefreshTokens.revokedAt,
          expiresAt: oauthRefreshTokens.expiresAt,
          grantId: oauthGrants.id,
          clientId: oauthGrants.clientId,
          tenantId: oauthGrants.tenantId,
          scopes: oauthGrants.scopes,
          grantRevokedAt: oauthGrants.revokedAt,
          userId: oauthGrants.userId,
        })
        .from(oauthRefreshTokens)
        .innerJoin(oauthGrants, eq(oauthGrants.id, oauthRefreshTokens.grantId))
        .where(eq(oauthRefreshTokens.tokenHash, await sha256Hex(input.refreshToken)))
        .limit(1)
    : [];
  if (!row || row.clientId !== input.clientId) {
    throw new OAuthError("invalid_grant", "The refresh token is invalid.");
  }
  if (row.grantRevokedAt || row.revokedAt) {
    throw new OAuthError("invalid_grant", "The refresh token has been revoked.");
  }
  if (row.usedAt) {
    await revokeAndAnnounce(db, row.grantId, announce, now);
    throw new OAuthError(
      "invalid_grant",
      "The refresh token was already used; the grant is revoked. Sign in again.",
    );
  }
  if (row.expiresAt <= now) {
    throw new OAuthError("invalid_grant", "The refresh token has expired.");
  }
  // Removal from the studio revokes the user's grants there; this is the second lock on that door.
  if (!(await isMember(db, row.userId, row.tenantId))) {
    throw new OAuthError("invalid_grant", "The user no longer belongs to the studio of this grant.");
  }
  let scopes = row.scopes;
  if (input.scope !== undefined) {
    const parsed = parseScope(input.scope);
    if (!parsed.ok || parsed.scopes.some((s) => !row.scopes.includes(s))) {
      throw new OAuthError("invalid_scope", "A refresh may only narrow the scopes of the grant.");
    }
    scopes = parsed.scopes;
  }
  const rotated = await db.transaction(async (tx) => {
    const spent = await tx
      .update(oauthRefreshTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(oauthRefreshTokens.id, row.id),
          isNull(oauthRefreshTokens.usedAt),
          isNull(oauthRefreshTokens.revokedAt),
        ),
      )
      .returning({ id: oauthRefreshTokens.id });
    if (!spent.length) {
      return null;
    }
    await tx.update(oauthGrants).set({ lastUsedAt: now }).where(eq(oauthGrants.id, row.grantId));
    return mintTokens(tx, { id: row.grantId, tenantId: row.tenantId }, scopes, now);
  });
  if (!rotated) {
    // Another request spent it between our read and our write: the same reuse, seen late.
    await revokeAndAnnounce(db, row.grantId, announce, now);
    throw new OAuthError("invalid_grant", "The refresh token was already used; the grant is revoked.");
  }
  return rotated;
}

/**
 * RFC 7009. A refresh token revokes its whole grant; an access token only itself. Tokens that are
 * unknown, already revoked, or issued to another client are left alone and still answered 200.
 */
export async function revokeToken(
  db: Db,
  input: { clientId: string; token: string },
  announce: AnnounceRevocation,
): Promise<void> {
  const hash = await sha256Hex(input.token);
  if (looksLikeSecret(input.token, REFRESH_PREFIX)) {
    const [row] = await db
      .select({ grantId: oauthGrants.id, clientId: oauthGrants.clientId })
      .from(oauthRefreshTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthRefreshTokens.grantId))
      .where(eq(oauthRefreshTokens.tokenHash, hash))
      .limit(1);
    if (row && row.clientId === input.clientId) {
      await revokeAndAnnounce(db, row.grantId, announce);
    }
    return;
  }
  if (looksLikeSecret(input.token, TOKEN_PREFIX)) {
    const [row] = await db
      .select({ id: oauthTokens.id, clientId: oauthGrants.clientId, tenantId: oauthTokens.tenantId })
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .where(eq(oauthTokens.tokenHash, hash))
      .limit(1);
    if (row && row.clientId === input.clientId) {
      const revoked = await db
        .update(oauthTokens)
        .set({ revokedAt: new Date() })
        .where(and(eq(oauthTokens.id, row.id), isNull(oauthTokens.revokedAt)))
        .returning({ id: oauthTokens.id });
      if (revoked.length > 0) {
        await announce(row.tenantId);
      }
    }
  }
}

/** The principal of the live access token with this hash, or null when unknown, revoked or expired at `now`. */
export async function findToken(db: Db, tokenHash: string, now = new Date()): Promise<TokenPrincipal | null> {
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
    // A grant's token works only while its user belongs to the studio (removal revokes it as well).
    .leftJoin(
      memberships,
      and(eq(memberships.userId, oauthGrants.userId), eq(memberships.tenantId, oauthTokens.tenantId)),
    )
    .where(
      and(
        eq(oauthTokens.tokenHash, tokenHash),
        isNull(oauthTokens.revokedAt),
        gt(oauthTokens.expiresAt, now),
        isNull(oauthGrants.revokedAt),
        or(isNull(oauthTokens.grantId), eq(memberships.tenantId, oauthTokens.tenantId)),
      ),
    )
    .limit(1);
  return row ? { kind: "token", ...row } : null;
}
