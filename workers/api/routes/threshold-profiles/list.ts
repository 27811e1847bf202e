import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { desc, eq } from "drizzle-orm";
import { thresholdProfiles } from "../../../../schema/pg/schema.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { profileItem, ThresholdProfileSchema } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/threshold-profiles",
  operationId: "listThresholdProfiles",
  tags: ["Threshold profiles"],
  summary: "List threshold profiles, newest first",
  description: "Their ids are the `thresholdProfileId`s of alert rules.",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam },
  responses: { 200: envelope(z.array(ThresholdProfileSchema), "The project's profiles."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const rows = await c
      .get("db")
      .select()
      .from(thresholdProfiles)
      .where(eq(thresholdProfiles.projectId, project.id))
      .orderBy(desc(thresholdProfiles.createdAt), desc(thresholdProfiles.id));
    return c.json({ success: true as const, data: rows.map(profileItem) }, 200);
  });
}
