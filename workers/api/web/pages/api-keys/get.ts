import type { Hono } from "hono";
import type { AppEnv } from "../../../context.js";
import { keysOfProject } from "../../../credentials/key-management.js";
import { userProject, visitor } from "../../access.js";
import { takeNewKey } from "../../new-key.js";
import { apiKeysPage, apiKeysPath } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.get("/settings/projects/:projectId/api-keys", visitor, userProject, async (c) => {
    const { nav, csrf } = c.get("visitor");
    const project = c.get("project");
    const notice = c.req.query("revoked") === "1" ? "Key revoked: it no longer works." : undefined;
    // The key the create form just made, if this is the page its POST redirected to: shown this once.
    const created = (await takeNewKey(c, apiKeysPath(project.id))) ?? undefined;
    const keys = await keysOfProject(c.get("db"), project.id);
    return c.html(apiKeysPage({ nav, csrf, project, keys, notice, created }));
  });
}
