import type { Hono } from "hono";
import { membersOf } from "../../../accounts/team.js";
import { audit, userLabel } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { endSessionsOfUser } from "../../../credentials/sessions.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";
import { UUID } from "./member-change.js";
import { membersPath } from "./view.js";

// An owner ends every session of a member of the studio (members page, "End sessions"): each browser
// they are signed in with is signed out on its next request. Sessions are a person's, not a studio's,
// so this signs them out of every studio; their connected apps and API keys are untouched. An owner
// naming themselves keeps the session making the request.
export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/studios/:tenantId/members/:userId/sessions/end",
    visitor,
    userTenant,
    csrfForm("Sessions not ended"),
    async (c) => {
      const membership = c.get("membership");
      const { user } = c.get("visitor");
      const db = c.get("db");
      const userId = c.req.param("userId");
      if (membership.role !== "owner") {
        await audit(c, {
          action: "session.ended",
          outcome: "denied",
          tenantId: membership.tenantId,
          target: {
            type: "user",
            id: userId,
            label: UUID.test(userId) ? await userLabel(db, userId) : userId,
          },
          detail: { how: "ended_by_owner" },
        });
        return errorPage(
          c,
          403,
          "Sessions not ended",
          "Only an owner of the studio can end a member's sessions.",
        );
      }
      const member = (await membersOf(db, membership.tenantId)).find((m) => m.userId === userId);
      if (!member) {
        return errorPage(c, 404, "Not found", "No such member of this studio.");
      }
      await db.transaction(async (tx) => {
        const keep = member.userId === user.userId ? user.sessionId : undefined;
        const count = await endSessionsOfUser(tx, member.userId, keep);
        await audit(
          c,
          {
            action: "session.ended",
            tenantId: membership.tenantId,
            target: { type: "user", id: member.userId, label: member.email },
            detail: { how: "ended_by_owner", count },
          },
          tx,
        );
      });
      return c.redirect(`${membersPath(membership.tenantId)}?done=sessions-ended`, 303);
    },
  );
}
