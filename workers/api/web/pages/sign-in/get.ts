import type { Hono } from "hono";
import type { AppEnv } from "../../../context.js";
import { csrfToken, currentUser, safeReturnTo } from "../../session.js";
import { signInPage } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.get("/sign-in", async (c) => {
    const returnTo = safeReturnTo(c.req.query("returnTo"));
    if (await currentUser(c)) {
      return c.redirect(returnTo, 303);
    }
    return c.html(signInPage({ csrf: await csrfToken(c), returnTo }));
  });
}
