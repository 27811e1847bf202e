import { asc, eq } from "drizzle-orm";
import { type MembershipRole, memberships, projects, tenants } from "../../../schema/pg/schema.js";
import type { SessionPrincipal } from "../../shared/credentials/principal.js";
import type { Scope } from "../../shared/credentials/scopes.js";
import type { Db } from "../db.js";
import type { SessionUser } from "./sessions.js";

/**
 * What a role may do through the Web API with a browser session. Owners run the studio, so they get the
 * data-administration scope (exports, erasure, SQL) as a full key would; members read and manage
 * resources (maps, profiles, alert rules) as a readwrite key would. Never `events:write`: people do
 * not send telemetry from the dashboard.
 */
export const ROLE_SCOPES: Record<MembershipRole, readonly Scope[]> = {
  owner: ["analytics:read", "resources:write", "data:admin"],
  member: ["analytics:read", "resources:write"],
};

/**
 * The principal of a signed-in user for one request. A session is a person, not a tenant: the tenant
 * is the one of the project the request names (path or X-Project-Id) when the user belongs to it,
 * otherwise the user's first studio by name. A project of a studio the user does not belong to then
 * answers 404 in projectFor, exactly as it does for a token of another tenant. Null when the user
 * belongs to no studio at all.
 */
export async function sessionPrincipal(
  db: Db,
  user: SessionUser,
  projectId: string | null,
): Promise<SessionPrincipal | null> {
  const rows = await db
    .select({
      tenantId: tenants.id,
      tenantName: tenants.name,
      planId: tenants.planId,
      role: memberships.role,
    })
    .from(memberships)
    .innerJoin(tenants, eq(tenants.id, memberships.tenantId))
    .where(eq(memberships.userId, user.userId))
    .orderBy(asc(tenants.name), asc(tenants.id));
  if (rows.length === 0) {
    return null;
  }
  let chosen = rows[0];
  if (projectId && rows.length > 1) {
    const [project] = await db
      .select({ tenantId: projects.tenantId })
      .from(projects)
      .where(eq(projects.id, projectId))
      .limit(1);
    chosen = rows.find((r) => r.tenantId === project?.tenantId) ?? chosen;
  }
  if (!chosen) {
    return null;
  }
  return {
    kind: "session",
    sessionId: user.sessionId,
    userId: user.userId,
    tenantId: chosen.tenantId,
    planId: chosen.planId,
    scopes: [...ROLE_SCOPES[chosen.role]],
  };
}
