import type { Hono } from "hono";
import { announceChange } from "../../../../shared/credentials/cache.js";
import { audit, grantParties } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { grantById, revokeGrantOfUser } from "../../../credentials/grants.js";
import { csrfForm, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function register(app: Hono<AppEnv>) {
  app.post("/settings/connected-apps/:grantId/revoke", visitor, csrfForm("Not revoked"), async (c) => {
    const grantId = c.req.param("grantId");
    const userId = c.get("visitor").user.userId;
    const tenantId = UUID.test(grantId) ? await revokeGrantOfUser(c.get("db"), userId, grantId) : null;
    if (!tenantId) {
      return errorPage(c, 404, "Not found", "No such connected app.");
    }
    const grant = await grantById(c.get("db"), grantId);
    await audit(c, {
      action: "oauth.grant_revoked",
      tenantId,
      target: grant ? grantParties(grant).target : { type: "grant", id: grantId },
    });
    await announceChange(c.env, { tenantId });
    return c.redirect("/settings/connected-apps?revoked=1", 303);
  });
}
