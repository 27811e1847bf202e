import type { Hono } from "hono";
import { announceChange } from "../../../../shared/credentials/cache.js";
import { deleteAccount } from "../../../accounts/account.js";
import type { AppEnv } from "../../../context.js";
import { csrfForm, visitor } from "../../access.js";
import { clearSessionCookie } from "../../session.js";
import { attempt } from "./get.js";

export function register(app: Hono<AppEnv>) {
  app.post("/settings/account/delete", visitor, csrfForm("Account not deleted"), (c) =>
    attempt(c, async () => {
      const tenants = await deleteAccount(
        c.get("db"),
        c.get("visitor").user.userId,
        (c.get("form").password ?? "").slice(0, 1024),
      );
      for (const tenantId of tenants) {
        await announceChange(c.env, { tenantId });
      }
      clearSessionCookie(c);
      return c.redirect("/sign-in", 303);
    }),
  );
}
