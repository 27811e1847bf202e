import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { desc, eq } from "drizzle-orm";
import { notificationChannels } from "../../../../schema/pg/schema.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { ChannelSchema, channelItem } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/channels",
  operationId: "listChannels",
  tags: ["Alerts"],
  summary: "List the project's notification channels, newest first",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam },
  responses: { 200: envelope(z.array(ChannelSchema), "Notification channels."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const rows = await c
      .get("db")
      .select()
      .from(notificationChannels)
      .where(eq(notificationChannels.projectId, project.id))
      .orderBy(desc(notificationChannels.createdAt), desc(notificationChannels.id));
    return c.json({ success: true as const, data: rows.map(channelItem) }, 200);
  });
}
