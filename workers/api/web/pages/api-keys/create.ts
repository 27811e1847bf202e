import type { Hono } from "hono";
import {
  createProjectKey,
  isPreset,
  KEY_NAME_MAX,
  keysOfProject,
  mayManagePreset,
} from "../../../../shared/credentials/key-management.js";
import type { AppEnv } from "../../../context.js";
import { csrfForm, userProject, visitor } from "../../access.js";
import { apiKeysPage } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/projects/:projectId/api-keys",
    visitor,
    userProject,
    csrfForm("Key not created"),
    async (c) => {
      const v = c.get("visitor");
      const project = c.get("project");
      const form = c.get("form");
      const db = c.get("db");
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
    },
  );
}
