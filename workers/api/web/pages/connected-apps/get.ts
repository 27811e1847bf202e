import type { Hono } from "hono";
import type { AppEnv } from "../../../context.js";
import { grantsOfUser } from "../../../credentials/grants.js";
import { signedIn } from "../../respond.js";
import { connectedAppsPage } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.get("/settings/connected-apps", async (c) => {
    const v = await signedIn(c);
    if (v instanceof Response) {
      return v;
    }
    const grants = await grantsOfUser(c.get("db"), v.user.userId);
    const notice = c.req.query("revoked") === "1" ? "Access revoked." : undefined;
    return c.html(connectedAppsPage({ nav: v.nav, csrf: v.csrf, grants, notice }));
  });
}
