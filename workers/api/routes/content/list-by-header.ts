import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { ProjectHeader } from "../../middleware/project-header.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { listContent, ORDER_NOTE } from "./list.js";
import { ContentEntrySchema, TypeQuery } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/content",
  operationId: "listContent",
  tags: ["Content"],
  summary: "List the content registry of the project named by X-Project-Id",
  description: `Same entries as GET /v1/projects/{id}/content. ${ORDER_NOTE}`,
  ...policy({ scope: "analytics:read", project: "header" }),
  request: { headers: ProjectHeader, query: TypeQuery },
  responses: { 200: envelope(z.array(ContentEntrySchema), "Content entries."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const data = await listContent(c.get("db"), c.get("project").id, c.req.valid("query").type);
    return c.json({ success: true as const, data }, 200);
  });
}
