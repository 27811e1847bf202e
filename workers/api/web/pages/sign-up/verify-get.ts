import type { Hono } from "hono";
import { liveLink } from "../../../accounts/links.js";
import type { AppEnv } from "../../../context.js";
import { cardPage, LINK_DEAD } from "../../card.js";
import { csrfToken } from "../../session.js";
import { verifyPage } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.get("/sign-up/verify", async (c) => {
    const token = c.req.query("token") ?? "";
    const link = await liveLink(c.get("db"), "signup", token);
    if (!link) {
      return c.html(cardPage({ title: "Link not valid", error: LINK_DEAD }), 410);
    }
    return c.html(verifyPage({ csrf: await csrfToken(c), token, email: link.email }));
  });
}
