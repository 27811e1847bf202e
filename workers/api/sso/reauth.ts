import { and, eq, inArray } from "drizzle-orm";
import {
  memberships,
  type SsoConnectionRow,
  ssoConnections,
  ssoIdentities,
} from "../../../schema/pg/schema.js";
import type { Db } from "../db.js";

// Confirming it is the person, for an account without a password (made by single sign-on): a fresh
// sign-in through a provider the person's account is linked to (sso_identities), with the active
// configuration of a studio they belong to that uses that provider. Used to delete the account.

/** How old the provider's sign-in (the ID token's auth_time) may be for a confirmation. */
export const REAUTH_MAX_AGE_SECONDS = 10 * 60;

/** The connection to confirm the user with, or null when no studio's provider can. */
export async function reauthConnectionOf(db: Db, userId: string): Promise<SsoConnectionRow | null> {
  const identities = await db
    .select({ issuer: ssoIdentities.issuer, tenantId: ssoIdentities.tenantId })
    .from(ssoIdentities)
    .where(eq(ssoIdentities.userId, userId));
  if (identities.length === 0) {
    return null;
  }
  const rows = await db
    .select({ connection: ssoConnections })
    .from(ssoConnections)
    .innerJoin(
      memberships,
      and(eq(memberships.tenantId, ssoConnections.tenantId), eq(memberships.userId, userId)),
    )
    .where(
      and(
        eq(ssoConnections.state, "active"),
        inArray(
          ssoConnections.issuer,
          identities.map((i) => i.issuer),
        ),
      ),
    );
  // The studio whose provider first linked the account first, if it is still there.
  const first = rows.find((r) => identities.some((i) => i.tenantId === r.connection.tenantId));
  return (first ?? rows[0])?.connection ?? null;
}

/** Whether the provider's account (issuer + subject) is linked to this user. */
export async function linkedTo(db: Db, issuer: string, subject: string, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ userId: ssoIdentities.userId })
    .from(ssoIdentities)
    .where(and(eq(ssoIdentities.issuer, issuer), eq(ssoIdentities.subject, subject)))
    .limit(1);
  return row?.userId === userId;
}
