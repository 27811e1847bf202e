import type { Hono } from "hono";
import { announceChange } from "../../../../shared/credentials/cache.js";
import { deleteAccount } from "../../../accounts/account.js";
import { auditUser } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { clearSessionCookie } from "../../../credentials/session-cookie.js";
import { csrfForm, visitor } from "../../access.js";
import { attempt } from "./get.js";

export function register(app: Hono<AppEnv>) {
  app.post("/settings/account/delete", visitor, csrfForm("Account not deleted"), (c) =>
    attempt(c, async () => {
      const { user } = c.get("visitor");
      const tenants = await deleteAccount(
        c.get("db"),
        user.userId,
        (c.get("form").password ?? "").slice(0, 1024),
        (tx) =>
          auditUser(
            c,
            user.userId,
            { action: "user.deleted", target: { type: "user", id: user.userId, label: user.email } },
            tx,
          ),
      );
      for (const tenantId of tenants) {
        await announceChange(c.env, { tenantId });
      }
      clearSessionCookie(c);
      return c.redirect("/sign-in", 303);
    }),
  );
}
