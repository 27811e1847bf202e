import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { buildBaselines } from "../../../../schema/pg/schema.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";

export const route = createRoute({
  method: "delete",
  path: "/v1/projects/{id}/builds/baseline",
  operationId: "unpinBuildBaseline",
  tags: ["Analytics"],
  summary: "Unpin the baseline: new builds are judged against their predecessors again",
  description: "Answers deleted: false when no build was pinned.",
  ...policy({ scope: "resources:write", project: "path" }),
  request: { params: ProjectIdParam },
  responses: {
    200: envelope(z.object({ deleted: z.boolean() }), "Whether a pin was removed."),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const rows = await c
      .get("db")
      .delete(buildBaselines)
      .where(eq(buildBaselines.projectId, project.id))
      .returning({ projectId: buildBaselines.projectId });
    return c.json({ success: true as const, data: { deleted: rows.length > 0 } }, 200);
  });
}
