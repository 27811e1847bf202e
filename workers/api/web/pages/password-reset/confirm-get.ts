import type { Hono } from "hono";
import { liveLink } from "../../../accounts/links.js";
import type { AppEnv } from "../../../context.js";
import { csrfToken } from "../../session.js";
import { confirmPage, dead } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.get("/password-reset/confirm", async (c) => {
    const token = c.req.query("token") ?? "";
    const link = await liveLink(c.get("db"), "reset", token);
    if (!link) {
      return dead(c);
    }
    return c.html(confirmPage({ csrf: await csrfToken(c), token, email: link.email }));
  });
}
