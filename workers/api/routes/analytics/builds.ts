import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { buildList } from "../../analytics/builds.js";
import { cached, cacheKey } from "../../analytics/cache.js";
import { decorateBuilds } from "../../analytics/verdicts.js";
import type { AppEnv } from "../../context.js";
import { windowFor } from "../../data-retention/horizon.js";
import { readerOf } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { BuildRowSchema, BuildSchema, BuildsQuery } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/builds",
  operationId: "listBuilds",
  tags: ["Analytics"],
  summary: "Builds with performance-bearing events in the window, newest first",
  description:
    "The newest 50 by first_seen, or the one build named by buildId. Answers are cached about 60 seconds per project and parameters; fresh=1 recomputes and refreshes the cache. pinned_baseline and verdict (each build's kept verdict against its baseline, per metric) are read fresh on every request.",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: BuildsQuery },
  responses: { 200: envelope(z.array(BuildSchema), "Builds, newest first."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    // Authentication, scope and project checks have all run before the cache is consulted.
    const project = c.get("project");
    const q = c.req.valid("query");
    const days = Number(q.days);
    const w = await windowFor(readerOf(c), days);
    // The horizon too: an answer cached before a retention change is never served after it.
    const key = cacheKey("builds", project, { days, buildId: q.buildId, retainedFrom: w.retainedFrom });
    const data = await cached(
      key,
      q.fresh === "1",
      () => buildList(c.get("ch"), project.id, w, q.buildId),
      (p) => c.executionCtx.waitUntil(p),
      (stored) => z.array(BuildRowSchema).parse(stored),
    );
    return c.json({ success: true as const, data: await decorateBuilds(c.get("db"), project.id, data) }, 200);
  });
}
