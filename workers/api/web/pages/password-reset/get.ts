import type { Hono } from "hono";
import type { AppEnv } from "../../../context.js";
import { csrfToken } from "../../session.js";
import { requestPage } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.get("/password-reset", async (c) => c.html(requestPage({ csrf: await csrfToken(c) })));
}
