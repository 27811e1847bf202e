import type { Hono } from "hono";
import { keysOfProject } from "../../../accounts/keys.js";
import { projectForUser } from "../../../accounts/users.js";
import type { AppEnv } from "../../../api/context.js";
import { errorPage, signedIn } from "../../respond.js";
import { apiKeysPage } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.get("/settings/projects/:projectId/api-keys", async (c) => {
    const v = await signedIn(c);
    if (v instanceof Response) {
      return v;
    }
    const db = c.get("db");
    const project = await projectForUser(db, v.user.userId, c.req.param("projectId"));
    if (!project) {
      return errorPage(c, 404, "Not found", "No such project.");
    }
    const notice = c.req.query("revoked") === "1" ? "Key revoked: it no longer works." : undefined;
    return c.html(
      apiKeysPage({ nav: v.nav, csrf: v.csrf, project, keys: await keysOfProject(db, project.id), notice }),
    );
  });
}
