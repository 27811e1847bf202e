import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { userLabel } from "../../audit/record.js";
import { auditSsoChange } from "../../audit/sso.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { removeConnections } from "../../sso/config.js";
import { SsoRemovedSchema, StudioParams, studioOwner } from "./schema.js";

export const route = createRoute({
  method: "delete",
  path: "/v1/studios/{tenantId}/sso",
  operationId: "deleteSso",
  tags: ["Single sign-on"],
  summary: "Remove the studio's single sign-on",
  description:
    "Removes the active and pending configurations and frees their domains; members with a password " +
    "sign in with it again. Sessions already signed in stay.",
  ...policy({ scope: "data:admin" }),
  request: { params: StudioParams },
  responses: { 200: envelope(SsoRemovedSchema, "Whether there was anything to remove."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { tenantId, userId } = await studioOwner(c, c.req.valid("param").tenantId);
    const db = c.get("db");
    const actor = { type: "user" as const, id: userId, label: await userLabel(db, userId), userId };
    const removed = await db.transaction(async (tx) => {
      const rows = await removeConnections(tx, tenantId);
      for (const row of rows) {
        await auditSsoChange(c, actor, tenantId, "sso.removed", row, { state: row.state }, tx);
      }
      return rows.length;
    });
    return c.json({ success: true as const, data: { removed: removed > 0 } }, 200);
  });
}
