import type { Hono } from "hono";
import { isMembershipRole } from "../../../../../schema/pg/schema.js";
import { changeRole } from "../../../accounts/team.js";
import { audit, userLabel } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";
import { renderMembers } from "./get.js";
import { changeMember } from "./member-change.js";
import { membersPath } from "./view.js";

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
        await audit(c, {
          action: "member.role_changed",
          outcome: "denied",
          tenantId: membership.tenantId,
          target: { type: "user", id: userId, label: await userLabel(c.get("db"), userId) },
        });
        return errorPage(c, 403, "Role not changed", "Only an owner of the studio can change roles.");
      }
      const role = c.get("form").role ?? "";
      if (!isMembershipRole(role)) {
        return renderMembers(c, { status: 400, error: "Role: choose Owner or Member." });
      }
      const refused = await changeMember(c, userId, (db, tenantId, id) =>
        changeRole(db, tenantId, id, role, async (tx, previous) =>
          audit(
            c,
            {
              action: "member.role_changed",
              tenantId,
              target: { type: "user", id, label: await userLabel(tx, id) },
              detail: { from: previous, to: role },
            },
            tx,
          ),
        ),
      );
      if (refused) {
        return refused;
      }
      return c.redirect(`${membersPath(membership.tenantId)}?done=role`, 303);
    },
  );
}
