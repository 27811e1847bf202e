import { and, eq, gt, isNull, ne } from "drizzle-orm";
import { sessions, users } from "../../../schema/pg/schema.js";
import { looksLikeSecret, newSecret, sha256Hex } from "../../shared/credentials/secrets.js";
import type { Db, Tx } from "../db.js";

export const SESSION_PREFIX = "gts_";
/** A session lasts this long from sign-in, then the user signs in again. */
export const SESSION_TTL_SECONDS = 14 * 24 * 3600;

export type SessionUser = { sessionId: string; userId: string; email: string };

/** A new session; the token is returned once for the cookie and only its hash is stored. */
export async function startSession(db: Db, userId: string, now = new Date()): Promise<string> {
  const token = newSecret(SESSION_PREFIX);
  await db.insert(sessions).values({
    userId,
    tokenHash: await sha256Hex(token),
    createdAt: now,
    expiresAt: new Date(now.getTime() + SESSION_TTL_SECONDS * 1000),
  });
  return token;
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
    .select({ sessionId: sessions.id, userId: users.id, email: users.email })
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

/** Ends every live session of the user but `keep` (the one making the change, when it stays signed in). */
export async function endSessionsOfUser(db: Db | Tx, userId: string, keep?: string): Promise<void> {
  await db
    .update(sessions)
    .set({ revokedAt: new Date() })
    .where(
      and(eq(sessions.userId, userId), isNull(sessions.revokedAt), keep ? ne(sessions.id, keep) : undefined),
    );
}
