import type { Hono } from "hono";
import { auditUser } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { clearSessionCookie } from "../../../credentials/session-cookie.js";
import { endSessionOfUser } from "../../../credentials/sessions.js";
import { csrfForm, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";

// Ends one of the signed-in person's sessions (Account page, "Sessions"). Sessions are read from
// Postgres on every request, so the browser holding it is signed out on its next request. Ending this
// browser's own session signs it out here.
export function register(app: Hono<AppEnv>) {
  app.post("/settings/account/sessions/:sessionId/end", visitor, csrfForm("Session not ended"), async (c) => {
    const { user } = c.get("visitor");
    const sessionId = c.req.param("sessionId");
    const ended = await c.get("db").transaction(async (tx) => {
      if (!(await endSessionOfUser(tx, user.userId, sessionId))) {
        return false;
      }
      await auditUser(
        c,
        user.userId,
        {
          action: "session.ended",
          target: { type: "session", id: sessionId, label: user.email },
          detail: { how: "ended_from_list", thisBrowser: sessionId === user.sessionId },
        },
        tx,
      );
      return true;
    });
    if (!ended) {
      return errorPage(c, 404, "Not found", "No such session of yours.");
    }
    if (sessionId === user.sessionId) {
      clearSessionCookie(c);
      return c.redirect("/sign-in", 303);
    }
    return c.redirect("/settings/account?done=session-ended", 303);
  });
}
