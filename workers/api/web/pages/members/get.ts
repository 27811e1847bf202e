import type { Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { membersOf, pendingInvitations } from "../../../accounts/team.js";
import type { AppEnv } from "../../../context.js";
import { type PageEnv, userTenant, visitor } from "../../access.js";
import { membersPage, NOTICES } from "./view.js";

/** The members page, with an error and the refused form's values when a POST was refused. */
export async function renderMembers(
  c: Context<PageEnv>,
  opts: { status?: ContentfulStatusCode; error?: string; draft?: { email: string; role: string } } = {},
) {
  const { nav, csrf, user } = c.get("visitor");
  const membership = c.get("membership");
  const db = c.get("db");
  const [members, invitations] = await Promise.all([
    membersOf(db, membership.tenantId),
    pendingInvitations(db, membership.tenantId),
  ]);
  const notice = NOTICES[c.req.query("done") ?? ""];
  return c.html(
    membersPage({ nav, csrf, userId: user.userId, membership, members, invitations, notice, ...opts }),
    opts.status ?? 200,
  );
}

export function register(app: Hono<AppEnv>) {
  app.get("/settings/studios/:tenantId/members", visitor, userTenant, (c) => renderMembers(c));
}
