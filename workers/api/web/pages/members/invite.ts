import type { Hono } from "hono";
import { isMembershipRole, type MembershipRole } from "../../../../../schema/pg/schema.js";
import { linkUrl, mailLink } from "../../../accounts/links.js";
import { invite, mayInvite } from "../../../accounts/team.js";
import { AccountError } from "../../../accounts/users.js";
import { audit } from "../../../audit/record.js";
import { auditInvitationRefused } from "../../../audit/sso-enforcement.js";
import type { AppEnv } from "../../../context.js";
import type { Db } from "../../../db.js";
import { invitationMail } from "../../../mail/messages.js";
import { invitationRefusal } from "../../../sso/enforcement.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { chargeTenantInvitation } from "../../mail-throttle.js";
import { renderMembers } from "./get.js";
import { membersPath } from "./view.js";

// Invitations: recorded first, mailed after. A mail that fails leaves the invitation pending with
// "Mail failed" beside it and a Resend button; resending issues a new link (only hashes are stored, so
// the old one cannot be mailed again) and the old link stops working.
export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/studios/:tenantId/invitations",
    visitor,
    userTenant,
    csrfForm("Invitation not sent"),
    async (c) => {
      const membership = c.get("membership");
      const form = c.get("form");
      const email = (form.email ?? "").trim().slice(0, 320);
      const role = form.role ?? "";
      const draft = { email, role };
      if (!isMembershipRole(role)) {
        return renderMembers(c, { status: 400, error: "Role: choose Owner or Member.", draft });
      }
      if (!mayInvite(membership.role, role)) {
        return renderMembers(c, { status: 403, error: "Role: only an owner can invite owners.", draft });
      }
      const outside = await invitationRefusal(c.get("db"), membership.tenantId, email);
      if (outside) {
        await auditInvitationRefused(c, membership.tenantId, email, role);
        return renderMembers(c, { status: 400, error: outside, draft });
      }
      const throttle = await chargeTenantInvitation(c, membership.tenantId);
      if (!throttle.allowed) {
        c.header("Retry-After", String(throttle.retryAfter));
        return renderMembers(c, {
          status: 429,
          error: "Too many invitations this hour. Try again later.",
          draft,
        });
      }
      let created: Awaited<ReturnType<typeof invite>>;
      try {
        created = await c.get("db").transaction(async (tx) => {
          const made = await invite(tx, {
            tenantId: membership.tenantId,
            email,
            role,
            invitedBy: c.get("visitor").user.userId,
          });
          await audit(
            c,
            {
              action: "invitation.sent",
              tenantId: membership.tenantId,
              target: { type: "invitation", id: made.id, label: made.email },
              detail: { role },
            },
            tx,
          );
          return made;
        });
      } catch (err) {
        if (err instanceof AccountError) {
          return renderMembers(c, { status: 400, error: err.message, draft });
        }
        throw err;
      }
      const back = await mailInvitation(
        c.env,
        c.get("db"),
        c.req.url,
        membership,
        { id: created.id, email: created.email, role, token: created.token },
        ["invited", "invite-mail-failed"],
      );
      return c.redirect(back, 303);
    },
  );
}

/**
 * Mails an invitation's link (already recorded) and answers where to go back: the members page, its
 * `done` naming the outcome, sent or failed.
 */
export async function mailInvitation(
  env: Env,
  db: Db,
  requestUrl: string,
  membership: { tenantId: string; tenantName: string },
  invitation: { id: string; email: string; role: MembershipRole; token: string },
  [sent, failed]: [string, string],
): Promise<string> {
  const link = linkUrl(new URL(requestUrl).origin, "/invitations/accept", invitation.token);
  const ok = await mailLink(
    env,
    db,
    invitation.id,
    invitationMail(invitation.email, membership.tenantName, invitation.role, link),
  );
  return `${membersPath(membership.tenantId)}?done=${ok ? sent : failed}`;
}
