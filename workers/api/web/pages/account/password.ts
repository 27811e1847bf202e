import type { Hono } from "hono";
import { changePassword } from "../../../accounts/account.js";
import { auditUser } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { csrfForm, visitor } from "../../access.js";
import { mailPasswordChanged } from "../../password-mail.js";
import { attempt } from "./get.js";

export function register(app: Hono<AppEnv>) {
  app.post("/settings/account/password", visitor, csrfForm("Password not changed"), (c) =>
    attempt(c, async () => {
      const { user } = c.get("visitor");
      const form = c.get("form");
      await changePassword(
        c.get("db"),
        {
          userId: user.userId,
          sessionId: user.sessionId,
          current: (form.current ?? "").slice(0, 1024),
          next: form.next ?? "",
        },
        (tx) =>
          auditUser(
            c,
            user.userId,
            { action: "user.password_changed", target: { type: "user", id: user.userId, label: user.email } },
            tx,
          ),
      );
      mailPasswordChanged(c, user.email, "changed");
      return c.redirect("/settings/account?done=password", 303);
    }),
  );
}
