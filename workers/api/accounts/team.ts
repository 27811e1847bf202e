import { and, asc, desc, eq, gt, isNull } from "drizzle-orm";
import { accountLinks, type MembershipRole, memberships, tenants, users } from "../../../schema/pg/schema.js";
import { revokeGrantsOfUser } from "../credentials/grants.js";
import { type RevokedKey, revokeKeysCreatedBy } from "../credentials/key-management.js";
import type { Db, Tx } from "../db.js";
import { createLink, liveLink, spendLink } from "./links.js";
import { hashPassword, passwordProblem } from "./password.js";
import { AccountError, emailProblem, normalizeEmail } from "./users.js";

// A studio's team: its members and roles, invitations by mail, and removal. A studio always keeps at
// least one owner: every change that could take the last one away locks the studio's owner rows first,
// so two owners demoting each other at once cannot both succeed.

export const NAME_MAX = 100;

export type TenantMembership = { tenantId: string; tenantName: string; role: MembershipRole };

/** The user's membership of the studio, or null (the members page is then a 404, as for another studio). */
export async function membershipOf(
  db: Db,
  userId: string,
  tenantId: string,
): Promise<TenantMembership | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tenantId)) {
    return null;
  }
  const [row] = await db
    .select({ tenantId: tenants.id, tenantName: tenants.name, role: memberships.role })
    .from(memberships)
    .innerJoin(tenants, eq(tenants.id, memberships.tenantId))
    .where(and(eq(memberships.userId, userId), eq(memberships.tenantId, tenantId)))
    .limit(1);
  return row ?? null;
}

export async function membersOf(db: Db, tenantId: string) {
  return db
    .select({
      userId: users.id,
      name: users.name,
      email: users.email,
      role: memberships.role,
      joinedAt: memberships.createdAt,
      lastSignInAt: users.lastSignInAt,
    })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.tenantId, tenantId))
    .orderBy(asc(users.email));
}

/** Invitations not yet accepted, revoked or expired, newest first. */
export async function pendingInvitations(db: Db, tenantId: string, now = new Date()) {
  return db
    .select({
      id: accountLinks.id,
      email: accountLinks.email,
      role: accountLinks.role,
      createdAt: accountLinks.createdAt,
      expiresAt: accountLinks.expiresAt,
      mailStatus: accountLinks.mailStatus,
    })
    .from(accountLinks)
    .where(
      and(
        eq(accountLinks.tenantId, tenantId),
        eq(accountLinks.purpose, "invitation"),
        isNull(accountLinks.usedAt),
        isNull(accountLinks.revokedAt),
        gt(accountLinks.expiresAt, now),
      ),
    )
    .orderBy(desc(accountLinks.createdAt));
}

/** Owners invite either role; members invite members only. */
export function mayInvite(inviter: MembershipRole, role: MembershipRole): boolean {
  return inviter === "owner" || role === "member";
}

/**
 * Records an invitation of `email` to the studio with `role` and returns its link's token (for the mail).
 * An earlier pending invitation of the same email to the studio is revoked: one live link per person.
 */
export async function invite(
  db: Db,
  input: { tenantId: string; email: string; role: MembershipRole; invitedBy: string },
): Promise<{ id: string; token: string; email: string }> {
  const email = normalizeEmail(input.email);
  const problem = emailProblem(email);
  if (problem) {
    throw new AccountError(`Email ${problem}.`);
  }
  const [member] = await db
    .select({ userId: memberships.userId })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.tenantId, input.tenantId), eq(users.email, email)))
    .limit(1);
  if (member) {
    throw new AccountError(`Email: ${email} is already a member of this studio.`);
  }
  await db
    .update(accountLinks)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(accountLinks.tenantId, input.tenantId),
        eq(accountLinks.purpose, "invitation"),
        eq(accountLinks.email, email),
        isNull(accountLinks.usedAt),
        isNull(accountLinks.revokedAt),
      ),
    );
  const link = await createLink(db, {
    purpose: "invitation",
    email,
    tenantId: input.tenantId,
    role: input.role,
    invitedBy: input.invitedBy,
  });
  return { ...link, email };
}

/** A pending invitation of the studio, for resending or revoking; null when not one of its own. */
export async function invitationOf(db: Db, tenantId: string, id: string) {
  if (!/^[0-9a-f-]{36}$/i.test(id)) {
    return null;
  }
  const [row] = await db
    .select()
    .from(accountLinks)
    .where(
      and(
        eq(accountLinks.id, id),
        eq(accountLinks.tenantId, tenantId),
        eq(accountLinks.purpose, "invitation"),
        isNull(accountLinks.usedAt),
        isNull(accountLinks.revokedAt),
      ),
    )
    .limit(1);
  return row ?? null;
}

export async function revokeInvitation(db: Db, tenantId: string, id: string): Promise<boolean> {
  const revoked = await db
    .update(accountLinks)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(accountLinks.id, id),
        eq(accountLinks.tenantId, tenantId),
        eq(accountLinks.purpose, "invitation"),
        isNull(accountLinks.usedAt),
        isNull(accountLinks.revokedAt),
      ),
    )
    .returning({ id: accountLinks.id });
  return revoked.length === 1;
}

/** Locks the studio's owner rows and returns their user ids (see the note at the top). */
async function lockOwners(tx: Tx, tenantId: string): Promise<string[]> {
  const rows = await tx
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.tenantId, tenantId), eq(memberships.role, "owner")))
    .orderBy(asc(memberships.userId))
    .for("update");
  return rows.map((r) => r.userId);
}

export class LastOwnerError extends AccountError {
  constructor() {
    super("A studio keeps at least one owner: make another member an owner first.");
  }
}

/**
 * Changes a member's role; false when they are not a member. `record` (the audit entry) runs in the
 * same transaction once the role changed, with the role they had.
 */
export async function changeRole(
  db: Db,
  tenantId: string,
  userId: string,
  role: MembershipRole,
  record?: (tx: Tx, previous: MembershipRole) => Promise<void>,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const owners = await lockOwners(tx, tenantId);
    if (role !== "owner" && owners.length === 1 && owners[0] === userId) {
      throw new LastOwnerError();
    }
    const changed = await tx
      .update(memberships)
      .set({ role })
      .where(and(eq(memberships.tenantId, tenantId), eq(memberships.userId, userId)))
      .returning({ userId: memberships.userId });
    if (changed.length === 1) {
      await record?.(tx, owners.includes(userId) ? "owner" : "member");
    }
    return changed.length === 1;
  });
}

/**
 * Removes a member from the studio and, in the same transaction, revokes every OAuth grant they hold on
 * it (with its access and refresh tokens) and the API keys of `keyIds` (keys they created in the
 * studio, ticked by the owner: key-management.ts revokeKeysCreatedBy). Their sessions reach the studio
 * no more from the next request: a session's principal is read from the memberships on every request.
 * The caller announces the change (with the projects of the revoked keys) so cached tokens and keys are
 * dropped everywhere. Null when they were not a member (nothing changed).
 */
export async function removeMember(
  db: Db,
  tenantId: string,
  userId: string,
  keyIds: string[] = [],
  record?: (tx: Tx, revokedKeys: RevokedKey[]) => Promise<void>,
): Promise<{ keyProjectIds: string[]; keysRevoked: number } | null> {
  return db.transaction(async (tx) => {
    const owners = await lockOwners(tx, tenantId);
    if (owners.length === 1 && owners[0] === userId) {
      throw new LastOwnerError();
    }
    const removed = await tx
      .delete(memberships)
      .where(and(eq(memberships.tenantId, tenantId), eq(memberships.userId, userId)))
      .returning({ userId: memberships.userId });
    if (removed.length !== 1) {
      return null;
    }
    await revokeGrantsOfUser(tx, userId, tenantId);
    const keys = await revokeKeysCreatedBy(tx, tenantId, userId, keyIds);
    await record?.(tx, keys.keys);
    return { keyProjectIds: keys.projectIds, keysRevoked: keys.keys.length };
  });
}

export type Accepted = { userId: string; tenantId: string; created: boolean };

/** The user an invitation's email belongs to, if any (the accept page asks a new person for a password). */
export async function userByEmail(db: Db, email: string) {
  const [user] = await db
    .select({ id: users.id, email: users.email })
    .from(users)
    .where(eq(users.email, normalizeEmail(email)))
    .limit(1);
  return user ?? null;
}

/**
 * Accepts an invitation once. The link proves the email: an existing user joins the studio; someone
 * new becomes a user with `password` (and `name`). Null when the link is no longer live.
 */
export async function acceptInvitation(
  db: Db,
  token: string,
  newUser?: { password: string; name: string },
): Promise<Accepted | null> {
  const link = await liveLink(db, "invitation", token);
  if (!link?.tenantId || !link.role) {
    return null;
  }
  const { tenantId, role } = link;
  const existing = await userByEmail(db, link.email);
  if (!existing) {
    const problem = newUser ? passwordProblem(newUser.password) : "is required";
    if (problem) {
      throw new AccountError(`Password ${problem}.`);
    }
  }
  // Hashed before the transaction: the key derivation takes a third of a second of CPU.
  const passwordHash = !existing && newUser ? hashPassword(newUser.password) : null;
  return db.transaction(async (tx) => {
    if (!(await spendLink(tx, link.id))) {
      return null;
    }
    let userId = existing?.id;
    let created = false;
    if (!userId) {
      const [user] = await tx
        .insert(users)
        .values({
          email: link.email,
          passwordHash: passwordHash ?? "",
          name: (newUser?.name ?? "").slice(0, NAME_MAX),
        })
        .onConflictDoNothing({ target: users.email })
        .returning({ id: users.id });
      if (!user) {
        throw new AccountError("An account with this email was created meanwhile: open the link again.");
      }
      userId = user.id;
      created = true;
    }
    await tx.insert(memberships).values({ userId, tenantId, role }).onConflictDoNothing();
    return { userId, tenantId, created };
  });
}
