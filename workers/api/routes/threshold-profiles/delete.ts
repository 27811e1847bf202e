import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { thresholdProfiles } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import { applyProfileDeletion } from "../../alerts/profile-deletion.js";
import { auditResource } from "../../audit/project.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { DeletedSchema, ProfileParams } from "./schema.js";

export const route = createRoute({
  method: "delete",
  path: "/v1/projects/{id}/threshold-profiles/{profileId}",
  operationId: "deleteThresholdProfile",
  tags: ["Threshold profiles"],
  summary: "Delete a threshold profile",
  description:
    "Evaluation events that used the profile are kept and read back with `thresholdProfileDeleted: true`.",
  ...policy({ scope: "resources:write", project: "path" }),
  request: { params: ProfileParams },
  responses: { 200: envelope(DeletedSchema, "The id of the deleted profile."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { profileId } = c.req.valid("param");
    const project = c.get("project");
    // One transaction: what the deletion means for alert rules and their history commits with it or not at all.
    const deleted = await c.get("db").transaction(async (tx) => {
      const [locked] = await tx
        .select({ id: thresholdProfiles.id, name: thresholdProfiles.name })
        .from(thresholdProfiles)
        .where(and(eq(thresholdProfiles.id, profileId), eq(thresholdProfiles.projectId, project.id)))
        .for("update");
      if (!locked) {
        throw new ApiError("NOT_FOUND", "Threshold profile not found.");
      }
      await applyProfileDeletion(tx, project.id, locked.id);
      await tx.delete(thresholdProfiles).where(eq(thresholdProfiles.id, locked.id));
      await auditResource(c, project, "threshold_profile.deleted", locked, tx);
      return locked;
    });
    return c.json({ success: true as const, data: { id: deleted.id } }, 200);
  });
}
