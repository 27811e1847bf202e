import type { Hono } from "hono";
import { auditUser } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { clearSessionCookie, currentUser } from "../../../credentials/session-cookie.js";
import { endSession } from "../../../credentials/sessions.js";
import { readForm } from "../../form.js";
import { errorPage, FORM_EXPIRED } from "../../respond.js";
import { csrfValid } from "../../session.js";

export function register(app: Hono<AppEnv>) {
  app.post("/sign-out", async (c) => {
    const form = await readForm(c);
    const user = await currentUser(c);
    // Without a valid token a third-party page could sign people out; refuse like any other form.
    if (user && (!form || !(await csrfValid(c, form.csrf)))) {
      return errorPage(c, 403, "Not signed out", FORM_EXPIRED);
    }
    if (user) {
      await endSession(c.get("db"), user.sessionId);
      await auditUser(c, user.userId, {
        action: "session.ended",
        actor: { type: "user", id: user.userId, label: user.email, userId: user.userId },
        target: { type: "session", id: user.sessionId, label: user.email },
        detail: { how: "sign_out" },
      });
    }
    clearSessionCookie(c);
    return c.redirect("/sign-in", 303);
  });
}
