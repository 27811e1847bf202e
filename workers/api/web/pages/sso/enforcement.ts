import type { Hono } from "hono";
import { ApiError } from "../../../../shared/errors.js";
import { auditEnforcementChange } from "../../../audit/sso-enforcement.js";
import type { AppEnv } from "../../../context.js";
import { setEnforcement } from "../../../sso/enforcement.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { ownersOnly, renderSso } from "./get.js";
import { ssoPath } from "./view.js";

/**
 * "Require single sign-on" (owners): the switch and the break-glass owner. Refusals re-render the page
 * with the reason (400 a field's rule, 409 no tested configuration); nothing changes then.
 */
export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/studios/:tenantId/sso/enforcement",
    visitor,
    userTenant,
    csrfForm("Single sign-on"),
    ownersOnly,
    async (c) => {
      const form = c.get("form");
      const tenantId = c.get("membership").tenantId;
      const { user } = c.get("visitor");
      const requireSso = form.requireSso === "1";
      try {
        const change = await c.get("db").transaction(async (tx) => {
          const made = await setEnforcement(
            tx,
            tenantId,
            { requireSso, breakGlassUserId: (form.breakGlassUserId ?? "").trim() || null },
            user.sessionId,
            new Date(c.get("now")),
          );
          await auditEnforcementChange(c, tenantId, made, tx);
          return made;
        });
        const done = change.after.requireSso ? "required" : "not-required";
        return c.redirect(`${ssoPath(tenantId)}?enforcement=${done}`, 303);
      } catch (err) {
        if (err instanceof ApiError && (err.status === 400 || err.status === 409)) {
          return renderSso(c, { error: err.message }, err.status);
        }
        throw err;
      }
    },
  );
}
