import type { Hono } from "hono";
import { auditSsoChange } from "../../../audit/sso.js";
import type { AppEnv } from "../../../context.js";
import { removeConnections } from "../../../sso/config.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { ownersOnly, renderSso } from "./get.js";

/** Removes single sign-on: sign-in by password again for those who have one. */
export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/studios/:tenantId/sso/remove",
    visitor,
    userTenant,
    csrfForm("Single sign-on"),
    ownersOnly,
    async (c) => {
      const { user } = c.get("visitor");
      const tenantId = c.get("membership").tenantId;
      const actor = { type: "user" as const, id: user.userId, label: user.email, userId: user.userId };
      const removed = await c.get("db").transaction(async (tx) => {
        const rows = await removeConnections(tx, tenantId);
        for (const row of rows) {
          await auditSsoChange(c, actor, tenantId, "sso.removed", row, { state: row.state }, tx);
        }
        return rows;
      });
      return renderSso(
        c,
        removed.length > 0
          ? { notice: "Single sign-on removed: members sign in with their passwords." }
          : { error: "Single sign-on was not set up." },
      );
    },
  );
}
