import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { playerRetentionCohorts } from "../../analytics/player-retention.js";
import type { AppEnv } from "../../context.js";
import { windowFor } from "../../data-retention/horizon.js";
import { readerOf } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { DaysQuery, RetentionCohortSchema } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/retention",
  operationId: "getRetention",
  tags: ["Analytics"],
  summary: "Day-1, day-7 and day-30 retention per cohort date",
  description:
    "One cohort per date of the window, oldest first. A player's cohort is the UTC date of their first event in the project ever.",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: DaysQuery },
  responses: { 200: envelope(z.array(RetentionCohortSchema), "Cohorts, oldest first."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const w = await windowFor(readerOf(c), Number(c.req.valid("query").days));
    return c.json(
      { success: true as const, data: await playerRetentionCohorts(c.get("ch"), project.id, w) },
      200,
    );
  });
}
