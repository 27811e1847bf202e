import type { Hono } from "hono";
import type { AppEnv } from "../../../context.js";
import { connectionsOf } from "../../../sso/config.js";
import { startFlow } from "../../../sso/flow.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { ownersOnly, renderSso } from "./get.js";

/** "Test sign-in" of the pending configuration (one submitted through the API, or a test to retry). */
export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/studios/:tenantId/sso/test",
    visitor,
    userTenant,
    csrfForm("Single sign-on"),
    ownersOnly,
    async (c) => {
      const { pending } = await connectionsOf(c.get("db"), c.get("membership").tenantId);
      if (!pending) {
        return renderSso(c, { error: "There is no configuration waiting for a test." }, 409);
      }
      const target = await startFlow(c, pending, "test", { userId: c.get("visitor").user.userId });
      return c.redirect(target, 303);
    },
  );
}
