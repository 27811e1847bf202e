import { eq } from "drizzle-orm";
import type { Context, Hono } from "hono";
import { tenants } from "../../../../../schema/pg/schema.js";
import { liveLink } from "../../../accounts/links.js";
import { userByEmail } from "../../../accounts/team.js";
import type { AppEnv } from "../../../context.js";
import { currentUser } from "../../../credentials/session-cookie.js";
import { csrfToken } from "../../session.js";
import { acceptPage, dead, type Invitation, type OtherUser } from "./view.js";

export async function invitationFor(c: Context<AppEnv>, token: string): Promise<Invitation | null> {
  const db = c.get("db");
  const link = await liveLink(db, "invitation", token);
  if (!link?.tenantId || !link.role) {
    return null;
  }
  const [tenant] = await db.select({ name: tenants.name }).from(tenants).where(eq(tenants.id, link.tenantId));
  return {
    token,
    email: link.email,
    studio: tenant?.name ?? "",
    role: link.role,
    newUser: !(await userByEmail(db, link.email)),
  };
}

/** Who this browser is signed in as, when that is someone other than the invited email. */
export async function otherUser(c: Context<AppEnv>, inv: Invitation): Promise<OtherUser | null> {
  const user = await currentUser(c);
  return user && user.email !== inv.email ? { userId: user.userId, email: user.email } : null;
}

export function register(app: Hono<AppEnv>) {
  app.get("/invitations/accept", async (c) => {
    const inv = await invitationFor(c, c.req.query("token") ?? "");
    return inv ? c.html(acceptPage(await csrfToken(c), inv, undefined, await otherUser(c, inv))) : dead(c);
  });
}
