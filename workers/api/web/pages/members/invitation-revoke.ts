import type { Hono } from "hono";
import { revokeInvitation } from "../../../accounts/team.js";
import type { AppEnv } from "../../../context.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { pendingInvitation } from "./pending.js";
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
      const found = await pendingInvitation(
        c,
        "Invitation not revoked",
        "Only an owner can revoke an owner's invitation.",
      );
      if ("refused" in found) {
        return found.refused;
      }
      await revokeInvitation(db, membership.tenantId, found.invitation.id);
      return c.redirect(`${membersPath(membership.tenantId)}?done=revoked`, 303);
    },
  );
}
