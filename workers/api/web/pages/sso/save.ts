import type { Hono } from "hono";
import { isMembershipRole } from "../../../../../schema/pg/schema.js";
import { ApiError } from "../../../../shared/errors.js";
import { auditSsoChange } from "../../../audit/sso.js";
import type { AppEnv } from "../../../context.js";
import { parseDomains, submitPending } from "../../../sso/config.js";
import { startFlow } from "../../../sso/flow.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { ownersOnly, renderSso } from "./get.js";

/**
 * "Test sign-in and save": the configuration is checked and discovered, kept as the studio's pending
 * one, and the owner is sent to the provider to sign in with it; only a successful test saves it.
 */
export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/studios/:tenantId/sso",
    visitor,
    userTenant,
    csrfForm("Single sign-on"),
    ownersOnly,
    async (c) => {
      const form = c.get("form");
      const typed = {
        issuer: (form.issuer ?? "").slice(0, 500),
        clientId: (form.clientId ?? "").slice(0, 255),
        domains: (form.domains ?? "").slice(0, 2000),
        defaultRole: form.defaultRole ?? "member",
      };
      if (!isMembershipRole(typed.defaultRole)) {
        return renderSso(c, { error: "Role of new members: choose Member or Owner.", form: typed }, 400);
      }
      const { user } = c.get("visitor");
      const tenantId = c.get("membership").tenantId;
      let pending: Awaited<ReturnType<typeof submitPending>>;
      try {
        pending = await submitPending(c.get("db"), c.get("config").SSO_SECRET_KEY, tenantId, user.userId, {
          issuer: typed.issuer,
          clientId: typed.clientId,
          clientSecret: form.clientSecret ?? "",
          domains: parseDomains(typed.domains),
          defaultRole: typed.defaultRole,
        });
      } catch (err) {
        if (err instanceof ApiError && (err.status === 400 || err.status === 409 || err.status === 503)) {
          return renderSso(c, { error: err.message, form: typed }, err.status);
        }
        throw err;
      }
      const actor = { type: "user" as const, id: user.userId, label: user.email, userId: user.userId };
      await auditSsoChange(c, actor, tenantId, "sso.submitted", pending, {
        secretChanged: Boolean(form.clientSecret),
      });
      const target = await startFlow(c, pending, "test", { userId: user.userId });
      return c.redirect(target, 303);
    },
  );
}
