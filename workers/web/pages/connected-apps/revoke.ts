import type { Hono } from "hono";
import { revokeGrantOfUser } from "../../../accounts/oauth/grants.js";
import type { AppEnv } from "../../../api/context.js";
import { readForm } from "../../form.js";
import { errorPage, FORM_EXPIRED, signedIn } from "../../respond.js";
import { csrfValid } from "../../session.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function register(app: Hono<AppEnv>) {
  app.post("/settings/connected-apps/:grantId/revoke", async (c) => {
    const v = await signedIn(c);
    if (v instanceof Response) {
      return v;
    }
    const form = await readForm(c);
    if (!form || !(await csrfValid(c, form.csrf))) {
      return errorPage(c, 403, "Not revoked", FORM_EXPIRED);
    }
    const grantId = c.req.param("grantId");
    if (!UUID.test(grantId) || !(await revokeGrantOfUser(c.get("db"), v.user.userId, grantId))) {
      return errorPage(c, 404, "Not found", "No such connected app.");
    }
    return c.redirect("/settings/connected-apps?revoked=1", 303);
  });
}
