import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { buildBaselines } from "../../../../schema/pg/schema.js";
import type { AppEnv } from "../../context.js";
import { text } from "../../fields.js";
import { bodyUpTo, RESOURCE_BODY_BYTES } from "../../middleware/body-limits.js";
import { envelope, errorResponses, ProjectIdParam, policy, problemDoc } from "../../openapi.js";

export const PinnedBaselineSchema = z
  .object({
    buildId: z.string(),
    pinnedAt: z.iso.datetime(),
  })
  .openapi("PinnedBaseline");

export const route = createRoute({
  method: "put",
  path: "/v1/projects/{id}/builds/baseline",
  operationId: "pinBuildBaseline",
  tags: ["Analytics"],
  summary: "Pin the build every new build is judged against",
  description:
    'From now on each build that first has enough sessions is judged against this build instead of its predecessor (docs/analytics.md, "Verdicts per build"); verdicts already kept stay as judged. One pinned build per project: a new pin replaces it. The build need not have arrived yet.',
  ...policy({ scope: "resources:write", project: "path" }, bodyUpTo(RESOURCE_BODY_BYTES)),
  request: {
    params: ProjectIdParam,
    body: {
      required: true,
      content: {
        "application/json": {
          schema: z
            .object({ buildId: text(128, { trim: true }) })
            .strict()
            .openapi("PinBuildBaseline"),
        },
      },
    },
  },
  responses: {
    200: envelope(PinnedBaselineSchema, "The pinned baseline."),
    413: problemDoc(`The body exceeds ${RESOURCE_BODY_BYTES} bytes.`),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const { buildId } = c.req.valid("json");
    const [row] = await c
      .get("db")
      .insert(buildBaselines)
      .values({ projectId: project.id, buildId })
      .onConflictDoUpdate({ target: buildBaselines.projectId, set: { buildId, updatedAt: sql`now()` } })
      .returning();
    if (!row) {
      throw new Error("baseline upsert returned no row");
    }
    return c.json(
      { success: true as const, data: { buildId: row.buildId, pinnedAt: row.updatedAt.toISOString() } },
      200,
    );
  });
}
