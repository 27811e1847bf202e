import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { thresholdProfiles } from "../../../../schema/pg/schema.js";
import { auditResource } from "../../audit/project.js";
import type { AppEnv } from "../../context.js";
import { bodyUpTo } from "../../middleware/body-limits.js";
import { envelope, errorResponses, ProjectIdParam, policy, problemDoc } from "../../openapi.js";
import {
  PROFILE_BODY_BYTES,
  profileItem,
  ThresholdProfileCreateSchema,
  ThresholdProfileSchema,
} from "./schema.js";

export const route = createRoute({
  method: "post",
  path: "/v1/projects/{id}/threshold-profiles",
  operationId: "createThresholdProfile",
  tags: ["Threshold profiles"],
  summary: "Create a threshold profile",
  ...policy({ scope: "resources:write", project: "path" }, bodyUpTo(PROFILE_BODY_BYTES)),
  request: {
    params: ProjectIdParam,
    body: { required: true, content: { "application/json": { schema: ThresholdProfileCreateSchema } } },
  },
  responses: {
    201: envelope(ThresholdProfileSchema, "The created profile."),
    ...errorResponses,
    413: problemDoc(`The body exceeds ${PROFILE_BODY_BYTES} bytes.`),
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const row = await c.get("db").transaction(async (tx) => {
      const [inserted] = await tx
        .insert(thresholdProfiles)
        .values({ ...c.req.valid("json"), projectId: project.id })
        .returning();
      if (!inserted) {
        throw new Error("insert returned no row");
      }
      await auditResource(c, project, "threshold_profile.created", inserted, tx);
      return inserted;
    });
    return c.json({ success: true as const, data: profileItem(row) }, 201);
  });
}
