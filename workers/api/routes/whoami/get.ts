import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { MANAGEMENT_SCOPES } from "../../../shared/credentials/scopes.js";
import { ApiError } from "../../../shared/errors.js";
import type { AppEnv } from "../../context.js";
import { principalOf } from "../../middleware/auth.js";
import { envelope, errorResponses, securityFor } from "../../openapi.js";
import { WhoamiSchema } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/whoami",
  operationId: "getWhoami",
  tags: ["Keys"],
  summary: "Validate an API key",
  description: "Any valid active key succeeds; keys with only ingest scopes see projectId and scopes only.",
  security: securityFor(null),
  responses: { 200: envelope(WhoamiSchema, "The key is valid."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, (c) => {
    const p = principalOf(c);
    if (p.kind !== "key") {
      throw new ApiError("UNAUTHORIZED", "Key validation accepts only the X-API-Key scheme.");
    }
    const management = p.scopes.some((s) => MANAGEMENT_SCOPES.includes(s));
    const data = management
      ? {
          projectId: p.projectId,
          scopes: p.scopes,
          projectName: p.projectName,
          tenantId: p.tenantId,
          planId: p.planId,
        }
      : { projectId: p.projectId, scopes: p.scopes };
    return c.json({ success: true as const, data }, 200);
  });
}
