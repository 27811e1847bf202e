import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { changeDataRetention } from "../../data-retention/change.js";
import { principalOf } from "../../middleware/auth.js";
import { bodyUpTo, RESOURCE_BODY_BYTES } from "../../middleware/body-limits.js";
import { envelope, errorResponses, policy, problemDoc } from "../../openapi.js";
import { DataRetentionSchema, DataRetentionUpdateSchema, retentionItem } from "./schema.js";

export const route = createRoute({
  method: "patch",
  path: "/v1/data-retention",
  operationId: "updateDataRetention",
  tags: ["Data retention"],
  summary: "Shorten (or restore) the studio's raw-event retention",
  description:
    "Needs data:admin: an owner's session, or a Full key (only owners make those). `retentionDays` from 1 " +
    "to the plan's retention, or null for the plan's. Expired rows leave every read at once and are " +
    "deleted from storage within a day; a longer retention later does not bring them back. Recorded in " +
    "the audit log (`studio.retention_changed`).",
  ...policy({ scope: "data:admin" }, bodyUpTo(RESOURCE_BODY_BYTES)),
  request: {
    body: { required: true, content: { "application/json": { schema: DataRetentionUpdateSchema } } },
  },
  responses: {
    200: envelope(DataRetentionSchema, "The studio's retention after the change."),
    413: problemDoc(`The body exceeds ${RESOURCE_BODY_BYTES} bytes.`),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const p = principalOf(c);
    const r = await changeDataRetention(c, p.tenantId, p.planId, c.req.valid("json").retentionDays);
    return c.json({ success: true as const, data: retentionItem(r) }, 200);
  });
}
