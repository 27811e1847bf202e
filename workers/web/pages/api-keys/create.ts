import type { Hono } from "hono";
import {
  createProjectKey,
  isPreset,
  KEY_NAME_MAX,
  keysOfProject,
  mayManagePreset,
} from "../../../accounts/keys.js";
import { projectForUser } from "../../../accounts/users.js";
import type { AppEnv } from "../../../api/context.js";
import { readForm } from "../../form.js";
import { errorPage, FORM_EXPIRED, signedIn } from "../../respond.js";
import { csrfValid } from "../../session.js";
import { apiKeysPage } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.post("/settings/projects/:projectId/api-keys", async (c) => {
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
      return errorPage(c, 403, "Key not created", FORM_EXPIRED);
    }
    const page = async (
      status: 200 | 400 | 403,
      extra: { error?: string; created?: { name: string | null; secret: string } },
    ) => {
      // The page may hold a secret: never stored by a cache or the browser's history.
      c.header("Cache-Control", "no-store");
      return c.html(
        apiKeysPage({
          nav: v.nav,
          csrf: v.csrf,
          project,
          keys: await keysOfProject(db, project.id),
          ...extra,
        }),
        status,
      );
    };
    const name = (form.name ?? "").trim();
    const preset = form.preset ?? "";
    if (name.length > KEY_NAME_MAX) {
      return page(400, { error: `Name: at most ${KEY_NAME_MAX} characters.` });
    }
    if (!isPreset(preset)) {
      return page(400, { error: "Preset: choose one of the listed presets." });
    }
    if (!mayManagePreset(project.role, preset)) {
      return page(403, { error: "Only an owner of the studio can create Full keys." });
    }
    const created = await createProjectKey(db, project.id, preset, name || null);
    return page(200, { created: { name: name || null, secret: created.key } });
  });
}
