import type { Hono } from "hono";
import { revokeInvitation } from "../../../accounts/team.js";
import { audit } from "../../../audit/record.js";
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
      const { invitation } = found;
      if (await revokeInvitation(db, membership.tenantId, invitation.id)) {
        await audit(c, {
          action: "invitation.revoked",
          tenantId: membership.tenantId,
          target: { type: "invitation", id: invitation.id, label: invitation.email },
          detail: { role: invitation.role },
        });
      }
      return c.redirect(`${membersPath(membership.tenantId)}?done=revoked`, 303);
    },
  );
}
