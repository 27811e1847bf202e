import type { Hono } from "hono";
import { announceChange } from "../../../shared/credentials/cache.js";
import type { AppEnv } from "../../context.js";
import { OAuthError, revokeToken } from "../../credentials/tokens.js";
import { clientEndpoint, oauthJson } from "./respond.js";

/**
 * POST /api/oauth/revoke (RFC 7009). 200 for any token the client names, known or not, so the answer
 * tells nothing about other tokens; a refresh token ends its whole grant.
 */
export function register(app: Hono<AppEnv>) {
  app.post(
    "/oauth/revoke",
    clientEndpoint(async (c, form, client) => {
      const token = form.get("token");
      if (!token) {
        throw new OAuthError("invalid_request", "Missing token.");
      }
      await revokeToken(c.get("db"), { clientId: client.id, token }, (tenantId) =>
        announceChange(c.env, { tenantId }),
      );
      return oauthJson(c, {});
    }),
  );
}
