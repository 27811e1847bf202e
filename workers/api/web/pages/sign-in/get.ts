import type { Hono } from "hono";
import type { AppEnv } from "../../../context.js";
import { currentUser } from "../../../credentials/session-cookie.js";
import { csrfToken, safeReturnTo } from "../../session.js";
import { SIGN_IN_NOTICES, signInPage } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.get("/sign-in", async (c) => {
    const returnTo = safeReturnTo(c.req.query("returnTo"));
    if (await currentUser(c)) {
      return c.redirect(returnTo, 303);
    }
    const notice = SIGN_IN_NOTICES[c.req.query("done") ?? ""];
    const signUp = c.env.SIGNUP === "open";
    return c.html(signInPage({ csrf: await csrfToken(c), returnTo, notice, signUp }));
  });
}
