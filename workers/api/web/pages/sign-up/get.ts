import type { Context, Hono } from "hono";
import type { AppEnv } from "../../../context.js";
import { errorPage } from "../../respond.js";
import { csrfToken } from "../../session.js";
import { signUpPage } from "./view.js";

/** SIGNUP=open lets anyone create a studio; anything else (the default) keeps the pages closed. */
export function signupOpen(c: Context<AppEnv>): boolean {
  return c.env.SIGNUP === "open";
}

export function closed(c: Context<AppEnv>) {
  return errorPage(c, 404, "Sign-up is closed", "Ask a studio owner for an invitation.");
}

export function register(app: Hono<AppEnv>) {
  app.get("/sign-up", async (c) => {
    if (!signupOpen(c)) {
      return closed(c);
    }
    return c.html(signUpPage({ csrf: await csrfToken(c) }));
  });
}
