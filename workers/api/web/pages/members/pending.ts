import type { Context } from "hono";
import { invitationOf, mayInvite } from "../../../accounts/team.js";
import type { PageEnv } from "../../access.js";
import { errorPage } from "../../respond.js";

type Invitation = NonNullable<Awaited<ReturnType<typeof invitationOf>>> & { role: string };

/**
 * The pending invitation named by the URL, when the signed-in member may act on it (resend or revoke):
 * otherwise the error page to answer, 404 for none of the studio's own, 403 for an owner's invitation a
 * member may not touch.
 */
export async function pendingInvitation(
  c: Context<PageEnv>,
  title: string,
  forbidden: string,
): Promise<{ invitation: Invitation } | { refused: Response }> {
  const membership = c.get("membership");
  const invitation = await invitationOf(c.get("db"), membership.tenantId, c.req.param("invitationId") ?? "");
  if (!invitation?.role) {
    return { refused: await errorPage(c, 404, "Not found", "No such pending invitation.") };
  }
  if (!mayInvite(membership.role, invitation.role)) {
    return { refused: await errorPage(c, 403, title, forbidden) };
  }
  return { invitation: { ...invitation, role: invitation.role } };
}
