import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { notificationChannels } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import { auditResource } from "../../audit/project.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { ChannelIdParams } from "./schema.js";

export const route = createRoute({
  method: "delete",
  path: "/v1/projects/{id}/channels/{channelId}",
  operationId: "deleteChannel",
  tags: ["Alerts"],
  summary: "Delete a notification channel",
  description:
    "The channel leaves every alert rule that named it; deliveries still queued for it are dropped.",
  ...policy({ scope: "resources:write", project: "path" }),
  request: { params: ChannelIdParams },
  responses: {
    200: envelope(z.object({ id: z.uuid(), deleted: z.literal(true) }), "The channel is gone."),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { channelId } = c.req.valid("param");
    const project = c.get("project");
    const row = await c.get("db").transaction(async (tx) => {
      const [deleted] = await tx
        .delete(notificationChannels)
        .where(and(eq(notificationChannels.id, channelId), eq(notificationChannels.projectId, project.id)))
        .returning({
          id: notificationChannels.id,
          name: notificationChannels.name,
          kind: notificationChannels.kind,
        });
      if (!deleted) {
        throw new ApiError("NOT_FOUND", "Notification channel not found.");
      }
      await auditResource(c, project, "channel.deleted", deleted, tx, { kind: deleted.kind });
      return deleted;
    });
    return c.json({ success: true as const, data: { id: row.id, deleted: true as const } }, 200);
  });
}
