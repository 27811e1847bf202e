import type { Hono } from "hono";
import { invitationOf, mayInvite, revokeInvitation } from "../../../accounts/team.js";
import type { AppEnv } from "../../../context.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";
import { membersPath } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/studios/:tenantId/invitations/:invitationId/revoke",
    visitor,
    userTenant,
    csrfForm("Invitation not revoked"),
    async (c) => {
      const membership = c.get("membership");
      const db = c.get("db");
      const invitation = await invitationOf(db, membership.tenantId, c.req.param("invitationId"));
      if (!invitation?.role) {
        return errorPage(c, 404, "Not found", "No such pending invitation.");
      }
      if (!mayInvite(membership.role, invitation.role)) {
        return errorPage(c, 403, "Invitation not revoked", "Only an owner can revoke an owner's invitation.");
      }
      await revokeInvitation(db, membership.tenantId, invitation.id);
      return c.redirect(`${membersPath(membership.tenantId)}?done=revoked`, 303);
    },
  );
}
