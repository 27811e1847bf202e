import type { Hono } from "hono";
import type { AppEnv } from "../../../context.js";
import { endSessionsOfUser } from "../../../credentials/sessions.js";
import { csrfForm, visitor } from "../../access.js";

// Ends every session of the signed-in person but this browser's (Account page, "End all other sessions").
export function register(app: Hono<AppEnv>) {
  app.post("/settings/account/sessions/end-others", visitor, csrfForm("Sessions not ended"), async (c) => {
    const { user } = c.get("visitor");
    await endSessionsOfUser(c.get("db"), user.userId, user.sessionId);
    return c.redirect("/settings/account?done=others-ended", 303);
  });
}
