import { and, eq, gt, isNull } from "drizzle-orm";
import { type AccountLinkPurpose, accountLinks, type MembershipRole } from "../../../schema/pg/schema.js";
import { looksLikeSecret, newSecret, sha256Hex } from "../../shared/credentials/secrets.js";
import type { Db } from "../db.js";
import { type Mail, sendMail } from "../mail/smtp.js";

// Single-use links sent by mail (schema: account_links). The token is random (240 bits), shown only in
// the mail, and stored as its SHA-256. A link is spent by the POST of the page it opens, never by the GET:
// mail scanners that fetch links must not use them up.
export const LINK_PREFIX = "gtl_";

/** How long each kind of link works. */
export const LINK_TTL_SECONDS: Record<AccountLinkPurpose, number> = {
  signup: 24 * 3600,
  invitation: 7 * 24 * 3600,
  reset: 3600,
};

export type AccountLink = typeof accountLinks.$inferSelect;

export type NewLink = {
  purpose: AccountLinkPurpose;
  email: string;
  userId?: string;
  tenantId?: string;
  role?: MembershipRole;
  invitedBy?: string;
  passwordHash?: string;
  tenantName?: string;
};

/** Records a link; the token is returned once, for the mail. */
export async function createLink(
  db: Db,
  link: NewLink,
  now = new Date(),
): Promise<{ id: string; token: string }> {
  const token = newSecret(LINK_PREFIX);
  const [row] = await db
    .insert(accountLinks)
    .values({
      ...link,
      tokenHash: await sha256Hex(token),
      createdAt: now,
      expiresAt: new Date(now.getTime() + LINK_TTL_SECONDS[link.purpose] * 1000),
    })
    .returning({ id: accountLinks.id });
  if (!row) {
    throw new Error("account link insert returned no row");
  }
  return { id: row.id, token };
}

/**
 * A new token for a live link (the mail is sent again): the old token stops working, and the link's
 * lifetime starts again. Null when the link is spent, revoked or gone.
 */
export async function renewLink(db: Db, id: string, now = new Date()): Promise<{ token: string } | null> {
  const token = newSecret(LINK_PREFIX);
  const [row] = await db
    .select({ purpose: accountLinks.purpose })
    .from(accountLinks)
    .where(and(eq(accountLinks.id, id), isNull(accountLinks.usedAt), isNull(accountLinks.revokedAt)))
    .limit(1);
  if (!row) {
    return null;
  }
  const renewed = await db
    .update(accountLinks)
    .set({
      tokenHash: await sha256Hex(token),
      expiresAt: new Date(now.getTime() + LINK_TTL_SECONDS[row.purpose] * 1000),
      mailStatus: "pending",
    })
    .where(and(eq(accountLinks.id, id), isNull(accountLinks.usedAt), isNull(accountLinks.revokedAt)))
    .returning({ id: accountLinks.id });
  return renewed.length ? { token } : null;
}

/** The live link of this purpose behind a token: not spent, not revoked, not expired. */
export async function liveLink(
  db: Db,
  purpose: AccountLinkPurpose,
  token: string,
  now = new Date(),
): Promise<AccountLink | null> {
  if (!looksLikeSecret(token, LINK_PREFIX)) {
    return null;
  }
  const [row] = await db
    .select()
    .from(accountLinks)
    .where(
      and(
        eq(accountLinks.tokenHash, await sha256Hex(token)),
        eq(accountLinks.purpose, purpose),
        isNull(accountLinks.usedAt),
        isNull(accountLinks.revokedAt),
        gt(accountLinks.expiresAt, now),
      ),
    )
    .limit(1);
  return row ?? null;
}

/**
 * Spends a live link inside the caller's transaction: true for exactly one of any number of concurrent
 * attempts, so a link works once.
 */
export async function spendLink(db: Db, id: string, now = new Date()): Promise<boolean> {
  const spent = await db
    .update(accountLinks)
    .set({ usedAt: now })
    .where(
      and(
        eq(accountLinks.id, id),
        isNull(accountLinks.usedAt),
        isNull(accountLinks.revokedAt),
        gt(accountLinks.expiresAt, now),
      ),
    )
    .returning({ id: accountLinks.id });
  return spent.length === 1;
}

/** Sends the link's mail and records how it went on the link. */
export async function mailLink(env: Env, db: Db, linkId: string, mail: Mail): Promise<boolean> {
  const outcome = await sendMail(env, mail);
  await db
    .update(accountLinks)
    .set(outcome.sent ? { mailStatus: "sent", mailedAt: new Date() } : { mailStatus: "failed" })
    .where(eq(accountLinks.id, linkId));
  return outcome.sent;
}

/** The URL of the page a link opens, on the origin the request came to. */
export function linkUrl(origin: string, path: string, token: string): string {
  return `${origin}${path}?token=${encodeURIComponent(token)}`;
}
