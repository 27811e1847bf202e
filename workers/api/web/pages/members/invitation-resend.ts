import type { Hono } from "hono";
import { renewLink } from "../../../accounts/links.js";
import { audit } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { chargeTenantInvitation } from "../../mail-throttle.js";
import { errorPage } from "../../respond.js";
import { renderMembers } from "./get.js";
import { mailInvitation } from "./invite.js";
import { pendingInvitation } from "./pending.js";

export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/studios/:tenantId/invitations/:invitationId/resend",
    visitor,
    userTenant,
    csrfForm("Invitation not sent"),
    async (c) => {
      const membership = c.get("membership");
      const db = c.get("db");
      const found = await pendingInvitation(c, "Invitation not sent", "Only an owner can invite owners.");
      if ("refused" in found) {
        return found.refused;
      }
      const { invitation } = found;
      const throttle = await chargeTenantInvitation(c, membership.tenantId);
      if (!throttle.allowed) {
        c.header("Retry-After", String(throttle.retryAfter));
        return renderMembers(c, { status: 429, error: "Too many invitations this hour. Try again later." });
      }
      const renewed = await renewLink(db, invitation.id);
      if (!renewed) {
        return errorPage(c, 404, "Not found", "No such pending invitation.");
      }
      await audit(c, {
        action: "invitation.resent",
        tenantId: membership.tenantId,
        target: { type: "invitation", id: invitation.id, label: invitation.email },
        detail: { role: invitation.role },
      });
      const back = await mailInvitation(
        c.env,
        db,
        c.req.url,
        membership,
        { id: invitation.id, email: invitation.email, role: invitation.role, token: renewed.token },
        ["resent", "resend-mail-failed"],
      );
      return c.redirect(back, 303);
    },
  );
}
