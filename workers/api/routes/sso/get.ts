import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { connectionsOf, connectionView } from "../../sso/config.js";
import { proofsOf, proofView } from "../../sso/domains.js";
import { callbackUrl } from "../../sso/flow.js";
import { SsoSettingsSchema, StudioParams, studioOwner } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/studios/{tenantId}/sso",
  operationId: "getSso",
  tags: ["Single sign-on"],
  summary: "The studio's single sign-on (OpenID Connect) configuration",
  description:
    "An owner's browser session only (API keys and tokens get 403, members 403, another studio 404). " +
    "The client secret is never returned.",
  ...policy({ scope: "data:admin" }),
  request: { params: StudioParams },
  responses: {
    200: envelope(SsoSettingsSchema, "The active and pending configurations."),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { tenantId } = await studioOwner(c, c.req.valid("param").tenantId);
    const { active, pending } = await connectionsOf(c.get("db"), tenantId);
    const domains = [...new Set([...(active?.domains ?? []), ...(pending?.domains ?? [])])];
    const proofs = await proofsOf(c.get("db"), tenantId, domains);
    return c.json(
      {
        success: true as const,
        data: {
          callbackUrl: callbackUrl(c),
          domainProofs: proofs.map(proofView),
          active: active && connectionView(active),
          pending: pending && connectionView(pending),
        },
      },
      200,
    );
  });
}
