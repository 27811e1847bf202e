import type { Hono } from "hono";
import { announceKeyChange } from "../../../../shared/credentials/key-replica.js";
import { audit, keyLabel } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { revokeProjectKey } from "../../../credentials/key-management.js";
import { csrfForm, userProject, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";

export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/projects/:projectId/api-keys/:keyId/revoke",
    visitor,
    userProject,
    csrfForm("Key not revoked"),
    async (c) => {
      const project = c.get("project");
      const keyId = c.req.param("keyId");
      const outcome = await c.get("db").transaction(async (tx) => {
        const result = await revokeProjectKey(tx, project.id, keyId, project.role);
        if (result !== "not_found") {
          await audit(
            c,
            {
              action: "key.revoked",
              outcome: result === "forbidden" ? "denied" : "success",
              tenantId: project.tenantId,
              projectId: project.id,
              target: { type: "key", id: keyId, label: await keyLabel(tx, keyId) },
            },
            tx,
          );
        }
        return result;
      });
      if (outcome === "not_found") {
        return errorPage(c, 404, "Not found", "No such key in this project.");
      }
      if (outcome === "forbidden") {
        return errorPage(c, 403, "Key not revoked", "Only an owner of the studio can revoke Full keys.");
      }
      // Before answering, so the key is refused from the next request on, on every isolate, and by the
      // key replica should Postgres then be down.
      await announceKeyChange(c.env, c.get("config"), {
        tenantId: project.tenantId,
        projectIds: [project.id],
      });
      return c.redirect(`/settings/projects/${project.id}/api-keys?revoked=1`, 303);
    },
  );
}
