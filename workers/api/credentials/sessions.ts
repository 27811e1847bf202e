import { and, desc, eq, gt, isNull, lt, ne, or } from "drizzle-orm";
import { sessions, users } from "../../../schema/pg/schema.js";
import { looksLikeSecret, newSecret, sha256Hex } from "../../shared/credentials/secrets.js";
import type { Db, Tx } from "../db.js";

export const SESSION_PREFIX = "gts_";
/** A session lasts this long from sign-in, then the user signs in again. */
export const SESSION_TTL_SECONDS = 14 * 24 * 3600;
/**
 * A session signed in by a studio's identity provider lasts this long, then the person goes through the
 * provider again: a person disabled at the provider keeps no session longer (docs/accounts.md).
 */
export const SSO_SESSION_TTL_SECONDS = 12 * 3600;

/** How long a new session lasts: shorter when the studio's provider signed it in. */
export function sessionTtlSeconds(origin: { ssoTenantId?: string | null }): number {
  return origin.ssoTenantId ? SSO_SESSION_TTL_SECONDS : SESSION_TTL_SECONDS;
}

/**
 * "Last seen" of a session without a write per request: the lookup that authenticates already reads
 * the stored value, and only when it is older than this is an UPDATE sent, after the response,
 * conditional on the row still being that old (noteSessionSeen). Shown accurate to this window.
 */
export const SESSION_LAST_SEEN_RESOLUTION_MS = 5 * 60 * 1000;
/** A user agent is kept to this many characters (shown as words, never trusted for anything). */
export const USER_AGENT_MAX = 512;

export type SessionUser = { sessionId: string; userId: string; email: string; lastSeenAt?: Date | null };

/**
 * Where a session signs in from, as the request said (CF-Connecting-IP, User-Agent), and for a single
 * sign-on the studio whose provider signed it in.
 */
export type SessionOrigin = { ip: string | null; userAgent: string | null; ssoTenantId?: string | null };

/** A new session; the token is returned once for the cookie and only its hash is stored. */
export async function startSession(
  db: Db,
  userId: string,
  now = new Date(),
  origin: SessionOrigin = { ip: null, userAgent: null },
): Promise<string> {
  const token = newSecret(SESSION_PREFIX);
  await db.insert(sessions).values({
    userId,
    tokenHash: await sha256Hex(token),
    createdAt: now,
    expiresAt: new Date(now.getTime() + sessionTtlSeconds(origin) * 1000),
    ip: origin.ip,
    userAgent: origin.userAgent?.slice(0, USER_AGENT_MAX) ?? null,
    lastSeenAt: now,
    ssoTenantId: origin.ssoTenantId ?? null,
  });
  return token;
}

/** Whether the stored last-seen time is old enough to be written again. */
export function lastSeenIsStale(lastSeenAt: Date | null | undefined, now: Date): boolean {
  return !lastSeenAt || now.getTime() - lastSeenAt.getTime() >= SESSION_LAST_SEEN_RESOLUTION_MS;
}

/** Records that the session was seen at `now`, unless another request did within the window. */
export async function noteSessionSeen(db: Db, sessionId: string, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - SESSION_LAST_SEEN_RESOLUTION_MS);
  await db
    .update(sessions)
    .set({ lastSeenAt: now })
    .where(and(eq(sessions.id, sessionId), or(isNull(sessions.lastSeenAt), lt(sessions.lastSeenAt, cutoff))));
}

/** The user's live sessions (not ended, not expired), the most recently seen first. */
export async function sessionsOfUser(db: Db, userId: string, now = new Date()) {
  return db
    .select({
      id: sessions.id,
      createdAt: sessions.createdAt,
      lastSeenAt: sessions.lastSeenAt,
      ip: sessions.ip,
      userAgent: sessions.userAgent,
    })
    .from(sessions)
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
    .orderBy(desc(sessions.lastSeenAt), desc(sessions.createdAt), sessions.id);
}

/** Ends one live session of the user; false when the user has none by that id (another's, ended, malformed). */
export async function endSessionOfUser(db: Db, userId: string, sessionId: string): Promise<boolean> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(sessionId)) {
    return false;
  }
  const ended = await db
    .update(sessions)
    .set({ revokedAt: new Date() })
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), isNull(sessions.revokedAt)))
    .returning({ id: sessions.id });
  return ended.length === 1;
}

export async function sessionUser(
  db: Db,
  token: string | undefined,
  now = new Date(),
): Promise<SessionUser | null> {
  if (!token || !looksLikeSecret(token, SESSION_PREFIX)) {
    return null;
  }
  const [row] = await db
    .select({ sessionId: sessions.id, userId: users.id, email: users.email, lastSeenAt: sessions.lastSeenAt })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(
      and(
        eq(sessions.tokenHash, await sha256Hex(token)),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, now),
      ),
    )
    .limit(1);
  return row ?? null;
}

export async function endSession(db: Db, sessionId: string): Promise<void> {
  await db
    .update(sessions)
    .set({ revokedAt: new Date() })
    .where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt)));
}

/**
 * Ends every live session of the user but `keep` (the one making the change, when it stays signed in).
 * Returns how many ended.
 */
export async function endSessionsOfUser(db: Db | Tx, userId: string, keep?: string): Promise<number> {
  const ended = await db
    .update(sessions)
    .set({ revokedAt: new Date() })
    .where(
      and(eq(sessions.userId, userId), isNull(sessions.revokedAt), keep ? ne(sessions.id, keep) : undefined),
    )
    .returning({ id: sessions.id });
  return ended.length;
}
