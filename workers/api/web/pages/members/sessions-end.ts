import type { Hono } from "hono";
import { membersOf } from "../../../accounts/team.js";
import type { AppEnv } from "../../../context.js";
import { endSessionsOfUser } from "../../../credentials/sessions.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";
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
      if (membership.role !== "owner") {
        return errorPage(
          c,
          403,
          "Sessions not ended",
          "Only an owner of the studio can end a member's sessions.",
        );
      }
      const db = c.get("db");
      const userId = c.req.param("userId");
      const member = (await membersOf(db, membership.tenantId)).find((m) => m.userId === userId);
      if (!member) {
        return errorPage(c, 404, "Not found", "No such member of this studio.");
      }
      await endSessionsOfUser(db, member.userId, member.userId === user.userId ? user.sessionId : undefined);
      return c.redirect(`${membersPath(membership.tenantId)}?done=sessions-ended`, 303);
    },
  );
}
