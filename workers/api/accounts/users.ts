import { and, eq } from "drizzle-orm";
import { type MembershipRole, memberships, projects, tenants, users } from "../../../schema/pg/schema.js";
import type { Db } from "../db.js";
import { burnVerification, hashPassword, passwordProblem, verifyPassword } from "./password.js";

export class AccountError extends Error {}

const EMAIL_MAX = 254;

/** Emails are compared trimmed and in lower case; the stored form is this one. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function emailProblem(email: string): string | null {
  if (email.length > EMAIL_MAX) {
    return `must be at most ${EMAIL_MAX} characters`;
  }
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) {
    return "must be an email address";
  }
  return null;
}

/**
 * A new user who belongs to `tenantId` with `role`. One email is one person: an email already in use
 * is refused (add it to another tenant with addMembership).
 */
export async function createUser(
  db: Db,
  input: { tenantId: string; email: string; password: string; role: MembershipRole },
): Promise<{ id: string }> {
  const email = normalizeEmail(input.email);
  const problem = emailProblem(email);
  if (problem) {
    throw new AccountError(`email ${problem}`);
  }
  const pwProblem = passwordProblem(input.password);
  if (pwProblem) {
    throw new AccountError(`password ${pwProblem}`);
  }
  await mustHaveTenant(db, input.tenantId);
  const passwordHash = hashPassword(input.password);
  return db.transaction(async (tx) => {
    const [user] = await tx
      .insert(users)
      .values({ email, passwordHash })
      .onConflictDoNothing({ target: users.email })
      .returning({ id: users.id });
    if (!user) {
      throw new AccountError(`a user with the email ${email} already exists`);
    }
    await tx.insert(memberships).values({ userId: user.id, tenantId: input.tenantId, role: input.role });
    return { id: user.id };
  });
}

/** Adds an existing user to a tenant, or changes their role there. */
export async function addMembership(
  db: Db,
  input: { tenantId: string; email: string; role: MembershipRole },
): Promise<{ userId: string; tenantId: string; role: MembershipRole }> {
  await mustHaveTenant(db, input.tenantId);
  const [user] = await db
    .select({ id: users.id })
    .from(users)
    .where(eq(users.email, normalizeEmail(input.email)))
    .limit(1);
  if (!user) {
    throw new AccountError(`no user with the email ${normalizeEmail(input.email)}`);
  }
  await db
    .insert(memberships)
    .values({ userId: user.id, tenantId: input.tenantId, role: input.role })
    .onConflictDoUpdate({ target: [memberships.userId, memberships.tenantId], set: { role: input.role } });
  return { userId: user.id, tenantId: input.tenantId, role: input.role };
}

async function mustHaveTenant(db: Db, tenantId: string): Promise<void> {
  if (!/^[0-9a-f-]{36}$/i.test(tenantId)) {
    throw new AccountError(`no tenant ${tenantId}`);
  }
  const [tenant] = await db.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)).limit(1);
  if (!tenant) {
    throw new AccountError(`no tenant ${tenantId}`);
  }
}

export type Membership = { tenantId: string; tenantName: string; role: MembershipRole };

/** The tenants a user belongs to, by name. */
export async function membershipsOf(db: Db, userId: string): Promise<Membership[]> {
  return db
    .select({ tenantId: tenants.id, tenantName: tenants.name, role: memberships.role })
    .from(memberships)
    .innerJoin(tenants, eq(tenants.id, memberships.tenantId))
    .where(eq(memberships.userId, userId))
    .orderBy(tenants.name, tenants.id);
}

/** The user's role in the project's tenant, with the project, or null when they cannot reach it. */
export async function projectForUser(db: Db, userId: string, projectId: string) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(projectId)) {
    return null;
  }
  const [row] = await db
    .select({
      id: projects.id,
      name: projects.name,
      tenantId: projects.tenantId,
      tenantName: tenants.name,
      role: memberships.role,
    })
    .from(projects)
    .innerJoin(tenants, eq(tenants.id, projects.tenantId))
    .innerJoin(memberships, and(eq(memberships.tenantId, projects.tenantId), eq(memberships.userId, userId)))
    .where(eq(projects.id, projectId))
    .limit(1);
  return row ?? null;
}

/** Projects of the tenants the user belongs to, grouped by tenant in tenant-name order. */
export async function projectsOfUser(db: Db, userId: string) {
  return db
    .select({
      id: projects.id,
      name: projects.name,
      tenantId: tenants.id,
      tenantName: tenants.name,
      role: memberships.role,
    })
    .from(memberships)
    .innerJoin(tenants, eq(tenants.id, memberships.tenantId))
    .innerJoin(projects, eq(projects.tenantId, tenants.id))
    .where(eq(memberships.userId, userId))
    .orderBy(tenants.name, tenants.id, projects.name, projects.id);
}

/**
 * The user behind an email and password, or null. An unknown email costs the same key derivation as a
 * known one, so neither the answer nor its timing tells whether an account exists.
 */
export async function checkPassword(
  db: Db,
  email: string,
  password: string,
): Promise<{ id: string; email: string } | null> {
  const [user] = await db
    .select({ id: users.id, email: users.email, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.email, normalizeEmail(email)))
    .limit(1);
  if (!user?.passwordHash) {
    // Unknown, or an account without a password (made by single sign-on): the same work either way.
    burnVerification(password);
    return null;
  }
  return verifyPassword(password, user.passwordHash) ? { id: user.id, email: user.email } : null;
}
