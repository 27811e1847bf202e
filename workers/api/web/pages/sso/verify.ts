import type { Hono } from "hono";
import { ApiError } from "../../../../shared/errors.js";
import type { AppEnv } from "../../../context.js";
import { verifyAndAudit } from "../../../sso/verify.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { ownersOnly, renderSso } from "./get.js";

/**
 * "Verify" a domain (owners): its TXT record looked up now. The page again with what was found; a
 * resolver that fails is the page with the reason, 503 (nothing changed).
 */
export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/studios/:tenantId/sso/verify",
    visitor,
    userTenant,
    csrfForm("Single sign-on"),
    ownersOnly,
    async (c) => {
      const domain = (c.get("form").domain ?? "").trim().toLowerCase().slice(0, 253);
      const tenantId = c.get("membership").tenantId;
      try {
        const outcome = await verifyAndAudit(c, tenantId, c.get("visitor").user.userId, domain);
        if (outcome.found) {
          return renderSso(c, {
            notice: `${domain} is verified: sign-ins with it go to the studio's provider.`,
          });
        }
        return renderSso(c, {
          error: `The TXT record of ${domain} was not found (${outcome.recordsFound} other TXT record${outcome.recordsFound === 1 ? "" : "s"} at ${outcome.view.record.name}). DNS changes can take a few minutes to show; try again.`,
        });
      } catch (err) {
        if (err instanceof ApiError && (err.status === 404 || err.status === 409 || err.status === 503)) {
          return renderSso(c, { error: err.message }, err.status);
        }
        throw err;
      }
    },
  );
}
