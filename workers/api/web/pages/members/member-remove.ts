import type { Hono } from "hono";
import { announceChange } from "../../../../shared/credentials/cache.js";
import { removeMember } from "../../../accounts/team.js";
import { AccountError } from "../../../accounts/users.js";
import type { AppEnv } from "../../../context.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";
import { renderMembers } from "./get.js";
import { membersPath } from "./view.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
      try {
        if (!UUID.test(userId) || !(await removeMember(c.get("db"), membership.tenantId, userId))) {
          return errorPage(c, 404, "Not found", "No such member of this studio.");
        }
      } catch (err) {
        if (err instanceof AccountError) {
          return renderMembers(c, { status: 409, error: err.message });
        }
        throw err;
      }
      // Before answering: their cached OAuth tokens are refused from the next request, on every isolate.
      await announceChange(c.env, { tenantId: membership.tenantId });
      return c.redirect(self ? "/" : `${membersPath(membership.tenantId)}?done=removed`, 303);
    },
  );
}
