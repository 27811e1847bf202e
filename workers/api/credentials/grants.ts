import { and, desc, eq, inArray, isNull } from "drizzle-orm";
import {
  oauthClients,
  oauthGrants,
  oauthRefreshTokens,
  oauthTokens,
  tenants,
  users,
} from "../../../schema/pg/schema.js";
import { TOKEN_SCOPES } from "../../shared/credentials/scopes.js";
import { sha256Hex } from "../../shared/credentials/secrets.js";
import type { Db, Tx } from "../db.js";

export type GrantScope = (typeof TOKEN_SCOPES)[number];

/**
 * The scope parameter as a set of grantable scopes. Absent means analytics:read (what the CLI asks
 * for by default); anything outside analytics:read and resources:write is refused whole.
 */
export function parseScope(
  scope: string | undefined,
): { ok: true; scopes: GrantScope[] } | { ok: false; refused: string[] } {
  const words = (scope ?? "analytics:read").split(" ").filter(Boolean);
  const refused = words.filter((w) => !(TOKEN_SCOPES as readonly string[]).includes(w));
  if (refused.length || !words.length) {
    return { ok: false, refused: refused.length ? refused : ["(empty)"] };
  }
  return { ok: true, scopes: TOKEN_SCOPES.filter((s) => words.includes(s)) };
}

/**
 * Revokes a grant and, in the same transaction, every access and refresh token issued under it. Returns
 * the grant's tenant (whose cached credentials the caller announces as changed), or null when the
 * grant was already revoked or does not exist.
 */
export async function revokeGrant(db: Db, grantId: string, now = new Date()): Promise<string | null> {
  return db.transaction(async (tx) => {
    const revoked = await tx
      .update(oauthGrants)
      .set({ revokedAt: now })
      .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt)))
      .returning({ tenantId: oauthGrants.tenantId });
    await tx
      .update(oauthTokens)
      .set({ revokedAt: now })
      .where(and(eq(oauthTokens.grantId, grantId), isNull(oauthTokens.revokedAt)));
    await tx
      .update(oauthRefreshTokens)
      .set({ revokedAt: now })
      .where(and(eq(oauthRefreshTokens.grantId, grantId), isNull(oauthRefreshTokens.revokedAt)));
    return revoked[0]?.tenantId ?? null;
  });
}

/** The user's live grants (Connected apps), newest first. */
export async function grantsOfUser(db: Db, userId: string) {
  return db
    .select({
      id: oauthGrants.id,
      clientId: oauthClients.id,
      clientName: oauthClients.name,
      tenantName: tenants.name,
      scopes: oauthGrants.scopes,
      createdAt: oauthGrants.createdAt,
      lastUsedAt: oauthGrants.lastUsedAt,
    })
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .innerJoin(tenants, eq(tenants.id, oauthGrants.tenantId))
    .where(and(eq(oauthGrants.userId, userId), isNull(oauthGrants.revokedAt)))
    .orderBy(desc(oauthGrants.createdAt), oauthGrants.id);
}

/** Revokes the user's own grant: its tenant, or null when it is not theirs or already revoked. */
export async function revokeGrantOfUser(db: Db, userId: string, grantId: string): Promise<string | null> {
  const [grant] = await db
    .select({ id: oauthGrants.id })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.id, grantId), eq(oauthGrants.userId, userId), isNull(oauthGrants.revokedAt)))
    .limit(1);
  return grant ? revokeGrant(db, grant.id) : null;
}

/**
 * Revokes, inside the caller's transaction, every live grant of the user (only those on `tenantId` when
 * given) with all their access and refresh tokens: a removal from a studio, a password reset, a deleted
 * account. Returns the tenants whose cached credentials the caller announces as changed.
 */
export async function revokeGrantsOfUser(
  tx: Db | Tx,
  userId: string,
  tenantId?: string,
  now = new Date(),
): Promise<string[]> {
  const revoked = await tx
    .update(oauthGrants)
    .set({ revokedAt: now })
    .where(
      and(
        eq(oauthGrants.userId, userId),
        isNull(oauthGrants.revokedAt),
        tenantId ? eq(oauthGrants.tenantId, tenantId) : undefined,
      ),
    )
    .returning({ id: oauthGrants.id, tenantId: oauthGrants.tenantId });
  const ids = revoked.map((g) => g.id);
  if (ids.length) {
    await tx
      .update(oauthTokens)
      .set({ revokedAt: now })
      .where(and(inArray(oauthTokens.grantId, ids), isNull(oauthTokens.revokedAt)));
    await tx
      .update(oauthRefreshTokens)
      .set({ revokedAt: now })
      .where(and(inArray(oauthRefreshTokens.grantId, ids), isNull(oauthRefreshTokens.revokedAt)));
  }
  return [...new Set(revoked.map((g) => g.tenantId))];
}

/** A grant's parties: its client acting for its user, in its studio (the audit log names them). */
export type GrantHolder = {
  grantId: string;
  tenantId: string;
  clientId: string;
  clientName: string;
  userId: string;
  email: string;
};

const holderColumns = {
  grantId: oauthGrants.id,
  tenantId: oauthGrants.tenantId,
  clientId: oauthClients.id,
  clientName: oauthClients.name,
  userId: users.id,
  email: users.email,
};

/** The grant a token (access `gto_…` or refresh `gtr_…`) belongs to, by the token's hash; null if none. */
export async function grantOfToken(db: Db, token: string): Promise<GrantHolder | null> {
  const hash = await sha256Hex(token);
  const [access] = await db
    .select({ grantId: oauthTokens.grantId })
    .from(oauthTokens)
    .where(eq(oauthTokens.tokenHash, hash))
    .limit(1);
  const [refresh] = access?.grantId
    ? []
    : await db
        .select({ grantId: oauthRefreshTokens.grantId })
        .from(oauthRefreshTokens)
        .where(eq(oauthRefreshTokens.tokenHash, hash))
        .limit(1);
  const grantId = access?.grantId ?? refresh?.grantId;
  return grantId ? grantById(db, grantId) : null;
}

/** The grant by id (revoked or not); null if none. */
export async function grantById(db: Db, grantId: string): Promise<GrantHolder | null> {
  const [row] = await db
    .select(holderColumns)
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .innerJoin(users, eq(users.id, oauthGrants.userId))
    .where(eq(oauthGrants.id, grantId))
    .limit(1);
  return row ?? null;
}
