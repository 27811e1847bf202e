import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { notificationChannels } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import type { AppEnv } from "../../context.js";
import { bodyUpTo, RESOURCE_BODY_BYTES } from "../../middleware/body-limits.js";
import { envelope, errorResponses, policy, problemDoc } from "../../openapi.js";
import { ChannelIdParams, ChannelSchema, channelItem, UpdateChannelSchema } from "./schema.js";

export const route = createRoute({
  method: "patch",
  path: "/v1/projects/{id}/channels/{channelId}",
  operationId: "updateChannel",
  tags: ["Alerts"],
  summary: "Change whether a notification channel takes build regressions",
  description:
    "buildRegressions: true sends the project's build regressions to this channel (one message per build and metric judged regressed against its baseline); false stops them. Kind, name and URL are fixed: delete and create to change them.",
  ...policy({ scope: "resources:write", project: "path" }, bodyUpTo(RESOURCE_BODY_BYTES)),
  request: {
    params: ChannelIdParams,
    body: { required: true, content: { "application/json": { schema: UpdateChannelSchema } } },
  },
  responses: {
    200: envelope(ChannelSchema, "The channel as it now is."),
    413: problemDoc(`The body exceeds ${RESOURCE_BODY_BYTES} bytes.`),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { channelId } = c.req.valid("param");
    const body = c.req.valid("json");
    const project = c.get("project");
    const [row] = await c
      .get("db")
      .update(notificationChannels)
      .set({ buildRegressions: body.buildRegressions, updatedAt: sql`now()` })
      .where(and(eq(notificationChannels.id, channelId), eq(notificationChannels.projectId, project.id)))
      .returning();
    if (!row) {
      throw new ApiError("NOT_FOUND", "Notification channel not found.");
    }
    return c.json({ success: true as const, data: channelItem(row) }, 200);
  });
}
