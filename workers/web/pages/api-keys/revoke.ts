import type { Hono } from "hono";
import { revokeProjectKey } from "../../../accounts/keys.js";
import { projectForUser } from "../../../accounts/users.js";
import type { AppEnv } from "../../../api/context.js";
import { readForm } from "../../form.js";
import { errorPage, FORM_EXPIRED, signedIn } from "../../respond.js";
import { csrfValid } from "../../session.js";

export function register(app: Hono<AppEnv>) {
  app.post("/settings/projects/:projectId/api-keys/:keyId/revoke", async (c) => {
    const v = await signedIn(c);
    if (v instanceof Response) {
      return v;
    }
    const db = c.get("db");
    const project = await projectForUser(db, v.user.userId, c.req.param("projectId"));
    if (!project) {
      return errorPage(c, 404, "Not found", "No such project.");
    }
    const form = await readForm(c);
    if (!form || !(await csrfValid(c, form.csrf))) {
      return errorPage(c, 403, "Key not revoked", FORM_EXPIRED);
    }
    const outcome = await revokeProjectKey(db, project.id, c.req.param("keyId"), project.role);
    if (outcome === "not_found") {
      return errorPage(c, 404, "Not found", "No such key in this project.");
    }
    if (outcome === "forbidden") {
      return errorPage(c, 403, "Key not revoked", "Only an owner of the studio can revoke Full keys.");
    }
    return c.redirect(`/settings/projects/${project.id}/api-keys?revoked=1`, 303);
  });
}
