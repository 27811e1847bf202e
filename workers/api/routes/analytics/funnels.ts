import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { funnelSteps } from "../../analytics/funnels.js";
import type { AppEnv } from "../../context.js";
import { windowFor } from "../../data-retention/horizon.js";
import { readerOf } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { FunnelQuery, FunnelStepSchema, stepNames } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/funnels",
  operationId: "getFunnels",
  tags: ["Analytics"],
  summary: "Players reaching each step, in order, within the window of seconds",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: FunnelQuery },
  responses: { 200: envelope(z.array(FunnelStepSchema), "One entry per step."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const q = c.req.valid("query");
    const reader = readerOf(c);
    const w = await windowFor(reader, Number(q.days));
    const data = await funnelSteps(c.get("ch"), project.id, w, stepNames(q.steps), Number(q.window), {
      nowMs: reader.nowMs,
      dataVersion: project.dataVersion,
    });
    return c.json({ success: true as const, data }, 200);
  });
}
