import type { Hono } from "hono";
import { announceKeyChange } from "../../../../shared/credentials/key-replica.js";
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
      const outcome = await revokeProjectKey(c.get("db"), project.id, c.req.param("keyId"), project.role);
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
