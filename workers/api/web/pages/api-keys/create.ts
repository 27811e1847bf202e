import type { Hono } from "hono";
import { syncKeyReplica } from "../../../../shared/credentials/key-replica.js";
import { audit, keyLabel } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import {
  createProjectKey,
  isPreset,
  KEY_NAME_MAX,
  keysOfProject,
  mayManagePreset,
} from "../../../credentials/key-management.js";
import { csrfForm, userProject, visitor } from "../../access.js";
import { sealNewKey } from "../../new-key.js";
import { apiKeysPage, apiKeysPath } from "./view.js";

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
      // A refused form is answered with the page and its error: nothing was created, so resending it is harmless.
      const page = async (status: 400 | 403, error: string) =>
        c.html(
          apiKeysPage({
            nav: v.nav,
            csrf: v.csrf,
            project,
            keys: await keysOfProject(db, project.id),
            error,
          }),
          status,
        );
      const name = (form.name ?? "").trim();
      const preset = form.preset ?? "";
      if (name.length > KEY_NAME_MAX) {
        return page(400, `Name: at most ${KEY_NAME_MAX} characters.`);
      }
      if (!isPreset(preset)) {
        return page(400, "Preset: choose one of the listed presets.");
      }
      if (!mayManagePreset(project.role, preset)) {
        return page(403, "Only an owner of the studio can create Full keys.");
      }
      const created = await db.transaction(async (tx) => {
        const key = await createProjectKey(tx, project.id, preset, name || null, {
          type: "user",
          userId: v.user.userId,
        });
        await audit(
          c,
          {
            action: "key.created",
            tenantId: project.tenantId,
            projectId: project.id,
            target: { type: "key", id: key.id, label: await keyLabel(tx, key.id) },
            detail: { preset },
          },
          tx,
        );
        return key;
      });
      // A new key changes no cached principal, so nothing is announced; the replica learns it now, so the
      // key works through a Postgres outage from its first request. Postgres stays the source of truth:
      // a failed write is mended by the ingest Worker's first lookup of the key.
      await syncKeyReplica(c.env, c.get("config"), {
        tenantId: project.tenantId,
        projectIds: [project.id],
      }).catch((err) =>
        console.error("key replica not written", err instanceof Error ? err.message : String(err)),
      );
      // Post/Redirect/Get: the GET shows the secret once (sealed for it in a cookie); a refresh creates nothing.
      const path = apiKeysPath(project.id);
      await sealNewKey(c, path, { name: name || null, secret: created.key });
      return c.redirect(path, 303);
    },
  );
}
