import type { Hono } from "hono";
import { announceChange } from "../../../../shared/credentials/cache.js";
import { completeReset } from "../../../accounts/account.js";
import { liveLink } from "../../../accounts/links.js";
import { AccountError } from "../../../accounts/users.js";
import { auditUser } from "../../../audit/record.js";
import { auditResetRefused } from "../../../audit/sso-enforcement.js";
import type { AppEnv } from "../../../context.js";
import { ssoRequiredFor, ssoRequiredMessage } from "../../../sso/enforcement.js";
import { readForm } from "../../form.js";
import { mailPasswordChanged } from "../../password-mail.js";
import { csrfToken, csrfValid } from "../../session.js";
import { confirmPage, dead } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.post("/password-reset/confirm", async (c) => {
    const form = await readForm(c);
    const token = form?.token ?? "";
    const db = c.get("db");
    const link = await liveLink(db, "reset", token);
    if (!link) {
      return dead(c);
    }
    if (!form || !(await csrfValid(c, form.csrf))) {
      return c.html(
        confirmPage({
          csrf: await csrfToken(c),
          token,
          email: link.email,
          error: "This form has expired. Send it again.",
        }),
        403,
      );
    }
    // A link issued before the studio required single sign-on: refused, the password unchanged.
    const required = link.userId ? await ssoRequiredFor(db, link.userId) : [];
    if (link.userId && required.length > 0) {
      await auditResetRefused(c, link.userId, link.email, "link");
      return c.html(
        confirmPage({
          csrf: await csrfToken(c),
          token,
          email: link.email,
          error: ssoRequiredMessage(required),
        }),
        403,
      );
    }
    let tenants: string[] | null;
    try {
      tenants = await completeReset(db, token, form.password ?? "", (tx, userId) => {
        // Whoever holds the mailed link: signed out, proven only by the link to the address.
        const person = { type: "user", id: userId, label: link.email, userId } as const;
        return auditUser(
          c,
          userId,
          {
            action: "user.password_reset",
            actor: person,
            target: { type: "user", id: userId, label: link.email },
          },
          tx,
        );
      });
    } catch (err) {
      if (err instanceof AccountError) {
        return c.html(
          confirmPage({ csrf: await csrfToken(c), token, email: link.email, error: err.message }),
          400,
        );
      }
      throw err;
    }
    if (!tenants) {
      return dead(c);
    }
    // Before answering: the user's revoked tokens are refused from the next request, on every isolate.
    for (const tenantId of tenants) {
      await announceChange(c.env, { tenantId });
    }
    mailPasswordChanged(c, link.email, "reset");
    return c.redirect("/sign-in?done=reset", 303);
  });
}
