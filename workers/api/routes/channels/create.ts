import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { notificationChannels } from "../../../../schema/pg/schema.js";
import { newSecret } from "../../../shared/credentials/secrets.js";
import { SIGNING_SECRET_PREFIX } from "../../alerts/signature.js";
import { auditResource } from "../../audit/project.js";
import type { AppEnv } from "../../context.js";
import { bodyUpTo, RESOURCE_BODY_BYTES } from "../../middleware/body-limits.js";
import { envelope, errorResponses, ProjectIdParam, policy, problemDoc } from "../../openapi.js";
import { CreateChannelSchema, CreatedChannelSchema, channelItem } from "./schema.js";

export const route = createRoute({
  method: "post",
  path: "/v1/projects/{id}/channels",
  operationId: "createChannel",
  tags: ["Alerts"],
  summary: "Create a notification channel",
  description:
    "A webhook channel gets a signing secret, returned in this response only: every delivery carries " +
    "`X-Telemetry-Signature: sha256=<hex HMAC-SHA256 of the body>`. A slack channel posts `{text}`.",
  ...policy({ scope: "resources:write", project: "path" }, bodyUpTo(RESOURCE_BODY_BYTES)),
  request: {
    params: ProjectIdParam,
    body: { required: true, content: { "application/json": { schema: CreateChannelSchema } } },
  },
  responses: {
    201: envelope(CreatedChannelSchema, "The channel, with its secret once."),
    413: problemDoc(`The body exceeds ${RESOURCE_BODY_BYTES} bytes.`),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const body = c.req.valid("json");
    const signingSecret = body.kind === "webhook" ? newSecret(SIGNING_SECRET_PREFIX) : null;
    const row = await c.get("db").transaction(async (tx) => {
      const [inserted] = await tx
        .insert(notificationChannels)
        .values({
          projectId: project.id,
          kind: body.kind,
          name: body.name,
          url: body.url,
          signingSecret,
          buildRegressions: body.buildRegressions ?? false,
        })
        .returning();
      if (!inserted) {
        throw new Error("channel insert returned no row");
      }
      // Not the URL: a Slack webhook's URL is its secret.
      await auditResource(c, project, "channel.created", inserted, tx, { kind: inserted.kind });
      return inserted;
    });
    return c.json({ success: true as const, data: { ...channelItem(row), signingSecret } }, 201);
  });
}
