import type { Hono } from "hono";
import { membershipsOf } from "../../../accounts/users.js";
import { audit } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { currentUser } from "../../../credentials/session-cookie.js";
import { issueCode } from "../../../credentials/tokens.js";
import { readForm } from "../../form.js";
import { errorPage, FORM_EXPIRED } from "../../respond.js";
import { csrfValid, signInRedirect } from "../../session.js";
import { AUTHORIZE_PARAMS, type AuthorizeParams, checkAuthorize, clientRedirect } from "./request.js";

/** POST /oauth/authorize: the consent page's answer. Allow issues a code; Deny says access_denied. */
export function register(app: Hono<AppEnv>) {
  app.post("/oauth/authorize", async (c) => {
    const form = await readForm(c);
    if (!form || !(await csrfValid(c, form.csrf))) {
      return errorPage(c, 403, "Authorization not given", FORM_EXPIRED);
    }
    const params: AuthorizeParams = {};
    for (const name of AUTHORIZE_PARAMS) {
      params[name] = form[name];
    }
    const issuer = new URL(c.req.url).origin;
    const user = await currentUser(c);
    if (!user) {
      // Signed out in between: start over from the request itself once signed in again.
      const query = new URLSearchParams(
        Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined),
      );
      return signInRedirect(c, `/oauth/authorize?${query}`);
    }
    const checked = await checkAuthorize(c.get("db"), params, issuer);
    if (checked.kind === "page") {
      return errorPage(c, 400, "Authorization request refused", checked.message);
    }
    if (checked.kind === "redirect") {
      return c.redirect(checked.location, 303);
    }
    const { request } = checked;
    if (form.decision !== "allow") {
      return c.redirect(
        clientRedirect(request.redirectUri, {
          error: "access_denied",
          error_description: "The user denied the request.",
          state: request.state,
          iss: issuer,
        }),
        303,
      );
    }
    const tenants = await membershipsOf(c.get("db"), user.userId);
    const tenant = tenants.find((t) => t.tenantId === form.tenant);
    if (!tenant) {
      return errorPage(c, 400, "Authorization not given", "Choose one of your studios.");
    }
    const code = await issueCode(
      c.get("db"),
      {
        clientId: request.client.id,
        userId: user.userId,
        tenantId: tenant.tenantId,
        scopes: request.scopes,
        redirectUri: request.redirectUri,
        codeChallenge: request.codeChallenge,
      },
      new Date(c.get("now")),
    );
    await audit(c, {
      action: "oauth.consent_granted",
      tenantId: tenant.tenantId,
      target: { type: "oauth_client", id: request.client.id, label: request.client.name },
      detail: { scope: request.scopes.join(" ") },
    });
    return c.redirect(clientRedirect(request.redirectUri, { code, state: request.state, iss: issuer }), 303);
  });
}
