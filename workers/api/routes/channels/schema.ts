import { z } from "@hono/zod-openapi";
import { CHANNEL_KINDS } from "../../../../schema/pg/columns.js";
import type { NotificationChannelRow } from "../../../../schema/pg/schema.js";
import { channelUrlProblem } from "../../alerts/channel-url.js";
import { text } from "../../fields.js";

const BuildRegressions = z
  .boolean()
  .describe(
    'Also send build regressions here: one message per build and metric whose kept verdict against its baseline is regressed (docs/analytics.md, "Verdicts per build")',
  );

const ChannelUrl = text(2048)
  .superRefine((value, ctx) => {
    const problem = channelUrlProblem(value);
    if (problem) {
      ctx.addIssue({ code: "custom", message: problem });
    }
  })
  .openapi({ description: "https URL (plain http only to a loopback host, for local development)" });

export const CreateChannelSchema = z
  .object({
    kind: z.enum(CHANNEL_KINDS).describe("webhook: signed JSON POST; slack: incoming-webhook URL"),
    name: text(100, { trim: true }),
    url: ChannelUrl,
    buildRegressions: BuildRegressions.optional(),
  })
  .openapi("CreateNotificationChannel");

export const UpdateChannelSchema = z
  .object({ buildRegressions: BuildRegressions })
  .strict()
  .openapi("UpdateNotificationChannel");

export const ChannelSchema = z
  .object({
    id: z.uuid(),
    projectId: z.uuid(),
    kind: z.enum(CHANNEL_KINDS),
    name: z.string(),
    url: z
      .string()
      .describe("The webhook URL; for slack only the origin, since an incoming-webhook URL is a credential"),
    buildRegressions: BuildRegressions,
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("NotificationChannel");

export const CreatedChannelSchema = ChannelSchema.extend({
  signingSecret: z
    .string()
    .nullable()
    .describe("webhook only: the HMAC-SHA256 signing secret, shown this once; null for slack"),
}).openapi("CreatedNotificationChannel");

export const ChannelIdParams = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" }, description: "Project UUID" }),
  channelId: z.uuid().openapi({ param: { name: "channelId", in: "path" }, description: "Channel UUID" }),
});

export function channelItem(row: NotificationChannelRow) {
  return {
    id: row.id,
    projectId: row.projectId,
    kind: row.kind,
    name: row.name,
    url: row.kind === "slack" ? `${new URL(row.url).origin}/…` : row.url,
    buildRegressions: row.buildRegressions,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
