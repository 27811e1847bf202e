import type { Hono } from "hono";
import { isMembershipRole } from "../../../../../schema/pg/schema.js";
import { announceChange } from "../../../../shared/credentials/cache.js";
import { changeRole } from "../../../accounts/team.js";
import { AccountError } from "../../../accounts/users.js";
import type { AppEnv } from "../../../context.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";
import { renderMembers } from "./get.js";
import { membersPath } from "./view.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/studios/:tenantId/members/:userId/role",
    visitor,
    userTenant,
    csrfForm("Role not changed"),
    async (c) => {
      const membership = c.get("membership");
      const userId = c.req.param("userId");
      if (membership.role !== "owner") {
        return errorPage(c, 403, "Role not changed", "Only an owner of the studio can change roles.");
      }
      const role = c.get("form").role ?? "";
      if (!isMembershipRole(role)) {
        return renderMembers(c, { status: 400, error: "Role: choose Owner or Member." });
      }
      try {
        if (!UUID.test(userId) || !(await changeRole(c.get("db"), membership.tenantId, userId, role))) {
          return errorPage(c, 404, "Not found", "No such member of this studio.");
        }
      } catch (err) {
        if (err instanceof AccountError) {
          return renderMembers(c, { status: 409, error: err.message });
        }
        throw err;
      }
      await announceChange(c.env, { tenantId: membership.tenantId });
      return c.redirect(`${membersPath(membership.tenantId)}?done=role`, 303);
    },
  );
}
