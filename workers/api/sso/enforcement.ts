import { and, eq, gt, inArray, isNull, ne, notInArray, or, sql } from "drizzle-orm";
import {
  accountLinks,
  memberships,
  type SsoConnectionRow,
  sessions,
  ssoConnections,
  tenants,
  users,
} from "../../../schema/pg/schema.js";
import { ApiError } from "../../shared/errors.js";
import type { Db, Tx } from "../db.js";
import { emailDomain } from "./config.js";

// Requiring single sign-on (docs/accounts.md, "Single sign-on: requiring it"). An owner of a studio
// with an active (tested) connection can require it: then the studio's members cannot sign in with a
// password, reset one, or be joined by an invitation to an address outside the studio's domains; one
// owner the owner names (the break-glass account) keeps password sign-in for the day the provider is
// down. Turning it on ends the members' sessions that did not come from this studio's provider and
// revokes pending invitations outside its domains; turning it off restores password sign-in for
// everyone who has a password (nothing else is undone).

/** A studio that requires single sign-on of a person. */
export type SsoRequirement = { tenantId: string; tenantName: string; issuer: string; domains: string[] };

/**
 * The studios requiring single sign-on that the user belongs to and is not the break-glass owner of (a
 * break-glass account counts only while it is an owner of that studio). Empty: password sign-in,
 * reset and the like are allowed.
 */
export async function ssoRequiredFor(db: Db | Tx, userId: string): Promise<SsoRequirement[]> {
  return db
    .select({
      tenantId: tenants.id,
      tenantName: tenants.name,
      issuer: ssoConnections.issuer,
      domains: ssoConnections.domains,
    })
    .from(memberships)
    .innerJoin(tenants, eq(tenants.id, memberships.tenantId))
    .innerJoin(
      ssoConnections,
      and(
        eq(ssoConnections.tenantId, memberships.tenantId),
        eq(ssoConnections.state, "active"),
        eq(ssoConnections.requireSso, true),
      ),
    )
    .where(
      and(
        eq(memberships.userId, userId),
        or(
          isNull(ssoConnections.breakGlassUserId),
          ne(ssoConnections.breakGlassUserId, memberships.userId),
          ne(memberships.role, "owner"),
        ),
      ),
    )
    .orderBy(tenants.name);
}

/** The same by email (lower-cased); the user's id too, null for an unknown address. */
export async function ssoRequiredForEmail(
  db: Db,
  email: string,
): Promise<{ userId: string | null; requirements: SsoRequirement[] }> {
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, email)).limit(1);
  return user
    ? { userId: user.id, requirements: await ssoRequiredFor(db, user.id) }
    : { userId: null, requirements: [] };
}

/** The studio's owners, for the break-glass choice: only one with a password can be named. */
export async function breakGlassCandidates(
  db: Db,
  tenantId: string,
): Promise<{ userId: string; email: string; hasPassword: boolean }[]> {
  const rows = await db
    .select({ userId: users.id, email: users.email, passwordHash: users.passwordHash })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.tenantId, tenantId), eq(memberships.role, "owner")))
    .orderBy(users.email);
  return rows.map((r) => ({ userId: r.userId, email: r.email, hasPassword: r.passwordHash !== "" }));
}

/** What the sign-in and reset pages say to such a person. */
export function ssoRequiredMessage(requirements: SsoRequirement[]): string {
  const names = requirements.map((r) => r.tenantName).join(", ");
  return `${names} requires single sign-on: password sign-in and password reset are turned off for its members. Sign in with your organization's account: enter your work email and choose "Continue with single sign-on", or ask an owner of the studio.`;
}

/**
 * Why an invitation of `email` to the studio is refused under single sign-on, or null when it may be
 * sent: a studio requiring SSO invites only addresses in its domains (who then sign in with its provider).
 */
export async function invitationRefusal(
  db: Db | Tx,
  tenantId: string,
  email: string,
): Promise<string | null> {
  const [connection] = await db
    .select({ domains: ssoConnections.domains })
    .from(ssoConnections)
    .where(
      and(
        eq(ssoConnections.tenantId, tenantId),
        eq(ssoConnections.state, "active"),
        eq(ssoConnections.requireSso, true),
      ),
    )
    .limit(1);
  if (!connection || connection.domains.includes(emailDomain(email.trim().toLowerCase()))) {
    return null;
  }
  return `Email: this studio requires single sign-on, so it invites only addresses in its domains (${connection.domains.join(", ")}).`;
}

export type EnforcementInput = { requireSso: boolean; breakGlassUserId: string | null };

export type EnforcementChange = {
  before: SsoConnectionRow;
  after: SsoConnectionRow;
  breakGlassEmail: string | null;
  /** Sessions ended because they did not come from this studio's provider (turning it on). */
  sessionsEnded: number;
  /** Pending invitations to addresses outside the studio's domains, revoked (turning it on). */
  invitationsRevoked: number;
};

function bad(field: string, rule: string): ApiError {
  return new ApiError("BAD_REQUEST", `${field}: ${rule}`, { extensions: { field } });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Sets the studio's enforcement, in the caller's transaction (write the audit entry in it too).
 * Requires an active (tested) connection. Requiring SSO needs a break-glass owner: an owner of the
 * studio with a password. Turning it on ends, for every member but the break-glass owner, each live
 * session not signed in by this studio's provider (`keepSessionId`, the owner's own request, stays),
 * and revokes pending invitations outside the studio's domains. Throws 400/409 ApiErrors naming the field.
 */
export async function setEnforcement(
  tx: Tx,
  tenantId: string,
  input: EnforcementInput,
  keepSessionId: string | null,
  now: Date,
): Promise<EnforcementChange> {
  const [before] = await tx
    .select()
    .from(ssoConnections)
    .where(and(eq(ssoConnections.tenantId, tenantId), eq(ssoConnections.state, "active")))
    .for("update");
  if (!before) {
    throw new ApiError(
      "CONFLICT",
      "requireSso: single sign-on is not set up for this studio yet: save its configuration and pass a test sign-in first",
      { extensions: { field: "requireSso" } },
    );
  }
  let breakGlassEmail: string | null = null;
  const breakGlassUserId = input.breakGlassUserId === "" ? null : input.breakGlassUserId;
  if (breakGlassUserId !== null) {
    if (!UUID.test(breakGlassUserId)) {
      throw bad("breakGlassUserId", "must be the id of an owner of this studio");
    }
    const [owner] = await tx
      .select({ email: users.email, passwordHash: users.passwordHash, role: memberships.role })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.tenantId, tenantId), eq(memberships.userId, breakGlassUserId)))
      .limit(1);
    if (owner?.role !== "owner") {
      throw bad("breakGlassUserId", "must be an owner of this studio");
    }
    if (!owner.passwordHash) {
      throw bad(
        "breakGlassUserId",
        "must be an owner who has a password (the account that signs in when the provider cannot)",
      );
    }
    breakGlassEmail = owner.email;
  } else if (input.requireSso) {
    throw bad(
      "breakGlassUserId",
      "name one owner who keeps password sign-in (break-glass), for when the provider cannot sign anyone in",
    );
  }
  const [after] = await tx
    .update(ssoConnections)
    .set({ requireSso: input.requireSso, breakGlassUserId, updatedAt: now })
    .where(eq(ssoConnections.id, before.id))
    .returning();
  if (!after) {
    throw new Error("sso: the enforcement was not stored");
  }
  let sessionsEnded = 0;
  let invitationsRevoked = 0;
  if (input.requireSso && !before.requireSso) {
    const members = tx
      .select({ userId: memberships.userId })
      .from(memberships)
      .where(
        and(
          eq(memberships.tenantId, tenantId),
          breakGlassUserId ? ne(memberships.userId, breakGlassUserId) : undefined,
        ),
      );
    const ended = await tx
      .update(sessions)
      .set({ revokedAt: now })
      .where(
        and(
          inArray(sessions.userId, members),
          isNull(sessions.revokedAt),
          gt(sessions.expiresAt, now),
          sql`${sessions.ssoTenantId} is distinct from ${tenantId}`,
          keepSessionId ? ne(sessions.id, keepSessionId) : undefined,
        ),
      )
      .returning({ id: sessions.id });
    sessionsEnded = ended.length;
    const revoked = await tx
      .update(accountLinks)
      .set({ revokedAt: now })
      .where(
        and(
          eq(accountLinks.tenantId, tenantId),
          eq(accountLinks.purpose, "invitation"),
          isNull(accountLinks.usedAt),
          isNull(accountLinks.revokedAt),
          notInArray(sql`lower(split_part(${accountLinks.email}, '@', 2))`, after.domains),
        ),
      )
      .returning({ id: accountLinks.id });
    invitationsRevoked = revoked.length;
  }
  return { before, after, breakGlassEmail, sessionsEnded, invitationsRevoked };
}
