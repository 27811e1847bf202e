import type { Hono } from "hono";
import { membershipsOf } from "../../../accounts/users.js";
import type { AppEnv } from "../../../context.js";
import { errorPage, signedIn } from "../../respond.js";
import { AUTHORIZE_PARAMS, type AuthorizeParams, checkAuthorize } from "./request.js";
import { consentPage } from "./view.js";

/** GET /oauth/authorize: check the request, have the visitor sign in, then ask for consent. */
export function register(app: Hono<AppEnv>) {
  app.get("/oauth/authorize", async (c) => {
    const params: AuthorizeParams = {};
    const duplicated: string[] = [];
    for (const name of AUTHORIZE_PARAMS) {
      const values = c.req.queries(name);
      params[name] = values?.[0];
      if ((values?.length ?? 0) > 1) {
        duplicated.push(name);
      }
    }
    const checked = await checkAuthorize(c.get("db"), params, new URL(c.req.url).origin, duplicated);
    if (checked.kind === "page") {
      return errorPage(c, 400, "Authorization request refused", checked.message);
    }
    if (checked.kind === "redirect") {
      return c.redirect(checked.location, 303);
    }
    const v = await signedIn(c);
    if (v instanceof Response) {
      return v;
    }
    const tenants = await membershipsOf(c.get("db"), v.user.userId);
    if (!tenants.length) {
      return errorPage(
        c,
        403,
        "No studio",
        "Your account does not belong to any studio, so it cannot grant access.",
      );
    }
    return c.html(consentPage({ nav: v.nav, csrf: v.csrf, request: checked.request, params, tenants }));
  });
}
