import { and, eq, isNull } from "drizzle-orm";
import { accountLinks, memberships, users } from "../../../schema/pg/schema.js";
import { createProject, createTenant } from "../bootstrap.js";
import { revokeGrantsOfUser } from "../credentials/grants.js";
import { endSessionsOfUser } from "../credentials/sessions.js";
import type { Db, Tx } from "../db.js";
import { createLink, liveLink, spendLink } from "./links.js";
import { hashPassword, passwordProblem, verifyPassword } from "./password.js";
import { NAME_MAX } from "./team.js";
import { AccountError } from "./users.js";

// A person's own account: sign-up and its verification, password change and reset, name, deletion.

export const TENANT_NAME_MAX = 100;
/** The project a new studio starts with, so the sign-up ends on a dashboard with a key to make. */
export const FIRST_PROJECT_NAME = "My first game";

/**
 * Records a sign-up waiting for its email to be verified (the password already hashed) and returns its
 * link's token for the mail. One live link per email: the newest; earlier ones are revoked.
 */
export async function recordSignup(
  db: Db,
  input: { email: string; passwordHash: string; tenantName: string },
): Promise<{ id: string; token: string }> {
  await db
    .update(accountLinks)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(accountLinks.email, input.email),
        eq(accountLinks.purpose, "signup"),
        isNull(accountLinks.usedAt),
        isNull(accountLinks.revokedAt),
      ),
    );
  return createLink(db, { purpose: "signup", ...input });
}

/**
 * Completes a sign-up from its verification link, once: the user (with the password chosen at sign-up),
 * their studio on the free plan with them as owner, and a first project. Null when the link is not live
 * or the email got an account meanwhile (through an invitation, say).
 */
export async function verifySignup(
  db: Db,
  token: string,
): Promise<{ userId: string; tenantId: string } | null> {
  const link = await liveLink(db, "signup", token);
  if (!link?.passwordHash) {
    return null;
  }
  const { passwordHash } = link;
  return db.transaction(async (tx) => {
    if (!(await spendLink(tx, link.id))) {
      return null;
    }
    const [user] = await tx
      .insert(users)
      .values({ email: link.email, passwordHash })
      .onConflictDoNothing({ target: users.email })
      .returning({ id: users.id });
    if (!user) {
      return null;
    }
    const tenant = await createTenant(tx, link.tenantName || `${link.email.split("@")[0]}'s studio`, "free");
    await tx.insert(memberships).values({ userId: user.id, tenantId: tenant.id, role: "owner" });
    await createProject(tx, tenant.id, FIRST_PROJECT_NAME);
    // The password waits in the link only until the account exists.
    await tx.update(accountLinks).set({ passwordHash: null }).where(eq(accountLinks.id, link.id));
    return { userId: user.id, tenantId: tenant.id };
  });
}

/**
 * Sets a new password from a reset link, once, and ends everything the old one opened: every session
 * of the user and every OAuth grant (its refresh and access tokens). Returns the tenants whose cached
 * credentials changed, or null when the link is not live.
 */
export async function completeReset(
  db: Db,
  token: string,
  password: string,
  record?: (tx: Tx, userId: string) => Promise<void>,
): Promise<string[] | null> {
  const problem = passwordProblem(password);
  if (problem) {
    throw new AccountError(`Password ${problem}.`);
  }
  const link = await liveLink(db, "reset", token);
  if (!link?.userId) {
    return null;
  }
  const userId = link.userId;
  const passwordHash = hashPassword(password);
  return db.transaction(async (tx) => {
    if (!(await spendLink(tx, link.id))) {
      return null;
    }
    await tx.update(users).set({ passwordHash, updatedAt: new Date() }).where(eq(users.id, userId));
    await endSessionsOfUser(tx, userId);
    // Other reset links of the user die with this one: the password they would replace is gone.
    await tx
      .update(accountLinks)
      .set({ revokedAt: new Date() })
      .where(
        and(
          eq(accountLinks.userId, userId),
          eq(accountLinks.purpose, "reset"),
          isNull(accountLinks.usedAt),
          isNull(accountLinks.revokedAt),
        ),
      );
    const tenantIds = await revokeGrantsOfUser(tx, userId);
    await record?.(tx, userId);
    return tenantIds;
  });
}

/**
 * Changes the password when `current` is right, and ends the user's other sessions; `record` writes
 * the audit entry in the same transaction.
 */
export async function changePassword(
  db: Db,
  input: { userId: string; sessionId: string; current: string; next: string },
  record?: (tx: Tx) => Promise<void>,
): Promise<void> {
  const [user] = await db
    .select({ passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.id, input.userId))
    .limit(1);
  if (!user || !verifyPassword(input.current, user.passwordHash)) {
    throw new AccountError("Current password: it is not your password.");
  }
  const problem = passwordProblem(input.next);
  if (problem) {
    throw new AccountError(`New password ${problem}.`);
  }
  const passwordHash = hashPassword(input.next);
  await db.transaction(async (tx) => {
    await tx.update(users).set({ passwordHash, updatedAt: new Date() }).where(eq(users.id, input.userId));
    await endSessionsOfUser(tx, input.userId, input.sessionId);
    await record?.(tx);
  });
}

export async function setName(db: Db, userId: string, name: string): Promise<void> {
  const trimmed = name.trim();
  if (trimmed.length > NAME_MAX) {
    throw new AccountError(`Name: at most ${NAME_MAX} characters.`);
  }
  await db.update(users).set({ name: trimmed, updatedAt: new Date() }).where(eq(users.id, userId));
}

export async function accountOf(db: Db, userId: string) {
  const [user] = await db
    .select({ id: users.id, email: users.email, name: users.name })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1);
  return user ?? null;
}

export async function noteSignIn(db: Db, userId: string): Promise<void> {
  await db.update(users).set({ lastSignInAt: new Date() }).where(eq(users.id, userId));
}

/** Whether the user has a password (an account made by single sign-on has none). */
export async function hasPassword(db: Db, userId: string): Promise<boolean> {
  const [user] = await db
    .select({ passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1);
  return Boolean(user?.passwordHash);
}

/** Refuses (AccountError) when the user is the last owner of a studio; checks only, locks nothing. */
export async function checkNotLastOwner(db: Db | Tx, userId: string): Promise<void> {
  const owned = await db
    .select({ tenantId: memberships.tenantId })
    .from(memberships)
    .where(and(eq(memberships.userId, userId), eq(memberships.role, "owner")));
  for (const { tenantId } of owned) {
    const owners = await db
      .select({ userId: memberships.userId })
      .from(memberships)
      .where(and(eq(memberships.tenantId, tenantId), eq(memberships.role, "owner")));
    if (!owners.some((o) => o.userId !== userId)) {
      throw new AccountError(LAST_OWNER);
    }
  }
}

const LAST_OWNER =
  "You are the last owner of a studio: make another member its owner before deleting your account.";

/**
 * Who confirms a deletion: the account's password, or (an account without one, made by single sign-on)
 * a fresh sign-in through the studio's provider that the SSO callback has just checked (sso/flow.ts).
 */
export type DeletionProof = { password: string } | { reauthenticated: "sso" };

/**
 * Deletes the account when the proof holds and the user is not the last owner of a studio (the
 * studio would be left without anyone to run it). Sessions, memberships and grants go with the user
 * (foreign keys); the grants are revoked first so the tenants to announce are known. Returns them.
 */
export async function deleteAccount(
  db: Db,
  userId: string,
  proof: DeletionProof,
  record?: (tx: Tx) => Promise<void>,
): Promise<string[]> {
  const [user] = await db
    .select({ passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1);
  if (!user) {
    throw new AccountError("Password: it is not your password.");
  }
  if ("password" in proof) {
    if (!verifyPassword(proof.password, user.passwordHash)) {
      throw new AccountError("Password: it is not your password.");
    }
  } else if (user.passwordHash) {
    // A provider's sign-in never stands in for a password the account has.
    throw new AccountError("Password: your account has a password; confirm with it.");
  }
  return db.transaction(async (tx) => {
    const owned = await tx
      .select({ tenantId: memberships.tenantId })
      .from(memberships)
      .where(and(eq(memberships.userId, userId), eq(memberships.role, "owner")));
    for (const { tenantId } of owned) {
      // Every owner row locked, in one order: two owners deleting themselves at once cannot both pass.
      const owners = await tx
        .select({ userId: memberships.userId })
        .from(memberships)
        .where(and(eq(memberships.tenantId, tenantId), eq(memberships.role, "owner")))
        .orderBy(memberships.userId)
        .for("update");
      if (!owners.some((o) => o.userId !== userId)) {
        throw new AccountError(LAST_OWNER);
      }
    }
    // While the memberships still say which studios see the entry.
    await record?.(tx);
    const tenantIds = await revokeGrantsOfUser(tx, userId);
    await endSessionsOfUser(tx, userId);
    await tx.delete(users).where(eq(users.id, userId));
    return tenantIds;
  });
}
