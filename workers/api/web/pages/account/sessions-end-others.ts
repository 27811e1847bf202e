import type { Hono } from "hono";
import { auditUser } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { endSessionsOfUser } from "../../../credentials/sessions.js";
import { csrfForm, visitor } from "../../access.js";

// Ends every session of the signed-in person but this browser's (Account page, "End all other sessions").
export function register(app: Hono<AppEnv>) {
  app.post("/settings/account/sessions/end-others", visitor, csrfForm("Sessions not ended"), async (c) => {
    const { user } = c.get("visitor");
    // One entry for the action, however many sessions it ended.
    await c.get("db").transaction(async (tx) => {
      const count = await endSessionsOfUser(tx, user.userId, user.sessionId);
      await auditUser(
        c,
        user.userId,
        {
          action: "session.ended",
          target: { type: "user", id: user.userId, label: user.email },
          detail: { how: "ended_others", count },
        },
        tx,
      );
    });
    return c.redirect("/settings/account?done=others-ended", 303);
  });
}
