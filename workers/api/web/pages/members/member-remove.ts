import type { Hono } from "hono";
import { removeMember } from "../../../accounts/team.js";
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
        return errorPage(c, 403, "Member not removed", "Only an owner of the studio can remove members.");
      }
      const refused = await changeMember(c, userId, removeMember);
      if (refused) {
        return refused;
      }
      return c.redirect(self ? "/" : `${membersPath(membership.tenantId)}?done=removed`, 303);
    },
  );
}
