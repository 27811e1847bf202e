import type { Hono } from "hono";
import { removeMember } from "../../../accounts/team.js";
import { audit, userLabel } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";
import { changeMember } from "./member-change.js";
import { membersPath } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/studios/:tenantId/members/:userId/remove",
    visitor,
    userTenant,
    csrfForm("Member not removed"),
    async (c) => {
      const membership = c.get("membership");
      const userId = c.req.param("userId");
      const self = userId === c.get("visitor").user.userId;
      // Owners remove anyone; a member may only leave.
      if (membership.role !== "owner" && !self) {
        await audit(c, {
          action: "member.removed",
          outcome: "denied",
          tenantId: membership.tenantId,
          target: { type: "user", id: userId, label: await userLabel(c.get("db"), userId) },
        });
        return errorPage(c, 403, "Member not removed", "Only an owner of the studio can remove members.");
      }
      const refused = await changeMember(c, userId, (db, tenantId, id) =>
        removeMember(db, tenantId, id, async (tx) =>
          audit(
            c,
            {
              action: "member.removed",
              tenantId,
              target: { type: "user", id, label: await userLabel(tx, id) },
              detail: { left: self },
            },
            tx,
          ),
        ),
      );
      if (refused) {
        return refused;
      }
      return c.redirect(self ? "/" : `${membersPath(membership.tenantId)}?done=removed`, 303);
    },
  );
}
