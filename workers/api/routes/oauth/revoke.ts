import type { Hono } from "hono";
import { findClient } from "../../../accounts/oauth/clients.js";
import { OAuthError, revokeToken } from "../../../accounts/oauth/tokens.js";
import type { AppEnv } from "../../context.js";
import { limitOAuth, oauthError, oauthJson, readOAuthForm, unavailable } from "./respond.js";

/**
 * POST /api/oauth/revoke (RFC 7009). 200 for any token the client names, known or not, so the answer
 * tells nothing about other tokens; a refresh token ends its whole grant.
 */
export function register(app: Hono<AppEnv>) {
  app.post("/revoke", async (c) => {
    const limited = await limitOAuth(c);
    if (limited) {
      return limited;
    }
    try {
      const form = await readOAuthForm(c);
      const client = await findClient(c.get("db"), form.get("client_id"));
      if (!client) {
        throw new OAuthError("invalid_client", "Unknown client_id.");
      }
      const token = form.get("token");
      if (!token) {
        throw new OAuthError("invalid_request", "Missing token.");
      }
      await revokeToken(c.get("db"), { clientId: client.id, token });
      return oauthJson(c, {});
    } catch (err) {
      return err instanceof OAuthError ? oauthError(c, err) : unavailable(c, err);
    }
  });
}
