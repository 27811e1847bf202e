import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { desc, eq } from "drizzle-orm";
import { erasures } from "../../../../schema/pg/schema.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { ErasureSchema, erasureItem } from "./schema.js";

/** The erasures a list shows: the newest. */
export const ERASURES_LISTED = 100;

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/erasures",
  operationId: "listErasures",
  tags: ["Data administration"],
  summary: "The project's erasures, newest first",
  description:
    `At most ${ERASURES_LISTED}, running ones included (their \`steps\` grow as each table is done). ` +
    "Needs data:admin.",
  ...policy({ scope: "data:admin", project: "path" }),
  request: { params: ProjectIdParam },
  responses: { 200: envelope(z.array(ErasureSchema), "The erasures."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const rows = await c
      .get("db")
      .select()
      .from(erasures)
      .where(eq(erasures.projectId, c.get("project").id))
      .orderBy(desc(erasures.createdAt), desc(erasures.id))
      .limit(ERASURES_LISTED);
    return c.json({ success: true as const, data: rows.map(erasureItem) }, 200);
  });
}
