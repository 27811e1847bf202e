import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { thresholdProfiles } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import { auditResource, fieldsOf } from "../../audit/project.js";
import type { AppEnv } from "../../context.js";
import { bodyUpTo } from "../../middleware/body-limits.js";
import { envelope, errorResponses, policy, problemDoc } from "../../openapi.js";
import {
  PROFILE_BODY_BYTES,
  ProfileParams,
  profileItem,
  ThresholdProfileSchema,
  ThresholdProfileUpdateSchema,
} from "./schema.js";

export const route = createRoute({
  method: "patch",
  path: "/v1/projects/{id}/threshold-profiles/{profileId}",
  operationId: "updateThresholdProfile",
  tags: ["Threshold profiles"],
  summary: "Update a threshold profile",
  description: "Partial update: omitted fields keep their value; null clears a filter or threshold.",
  ...policy({ scope: "resources:write", project: "path" }, bodyUpTo(PROFILE_BODY_BYTES)),
  request: {
    params: ProfileParams,
    body: { required: true, content: { "application/json": { schema: ThresholdProfileUpdateSchema } } },
  },
  responses: {
    200: envelope(ThresholdProfileSchema, "The updated profile."),
    ...errorResponses,
    413: problemDoc(`The body exceeds ${PROFILE_BODY_BYTES} bytes.`),
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { profileId } = c.req.valid("param");
    const project = c.get("project");
    const changes = c.req.valid("json");
    const inProject = and(eq(thresholdProfiles.id, profileId), eq(thresholdProfiles.projectId, project.id));
    // An empty patch changes nothing, updatedAt included, and records no entry.
    const row = await c.get("db").transaction(async (tx) => {
      if (Object.keys(changes).length === 0) {
        return (await tx.select().from(thresholdProfiles).where(inProject))[0];
      }
      const [updated] = await tx
        .update(thresholdProfiles)
        .set({ ...changes, updatedAt: sql`now()` })
        .where(inProject)
        .returning();
      if (updated) {
        await auditResource(c, project, "threshold_profile.updated", updated, tx, {
          fields: fieldsOf(changes),
        });
      }
      return updated;
    });
    if (!row) {
      throw new ApiError("NOT_FOUND", "Threshold profile not found.");
    }
    return c.json({ success: true as const, data: profileItem(row) }, 200);
  });
}
