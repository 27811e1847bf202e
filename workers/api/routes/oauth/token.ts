import type { Hono } from "hono";
import { findClient } from "../../../accounts/oauth/clients.js";
import { exchangeCode, OAuthError, refreshTokens } from "../../../accounts/oauth/tokens.js";
import type { AppEnv } from "../../context.js";
import { limitOAuth, oauthError, oauthJson, readOAuthForm, unavailable } from "./respond.js";

/** POST /api/oauth/token: authorization_code (with PKCE) and refresh_token (rotating) grants. */
export function register(app: Hono<AppEnv>) {
  app.post("/token", async (c) => {
    const limited = await limitOAuth(c);
    if (limited) {
      return limited;
    }
    try {
      const form = await readOAuthForm(c);
      // Public clients only: the client authenticates by nothing but its id, the proof is PKCE or
      // possession of the refresh token, both bound to that id.
      const client = await findClient(c.get("db"), form.get("client_id"));
      if (!client) {
        throw new OAuthError("invalid_client", "Unknown client_id.");
      }
      const grantType = form.get("grant_type");
      if (grantType === "authorization_code") {
        const tokens = await exchangeCode(c.get("db"), {
          clientId: client.id,
          code: form.get("code"),
          redirectUri: form.get("redirect_uri"),
          codeVerifier: form.get("code_verifier"),
        });
        return oauthJson(c, tokens);
      }
      if (grantType === "refresh_token") {
        const tokens = await refreshTokens(c.get("db"), {
          clientId: client.id,
          refreshToken: form.get("refresh_token"),
          scope: form.get("scope"),
        });
        return oauthJson(c, tokens);
      }
      throw grantType
        ? new OAuthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token.")
        : new OAuthError("invalid_request", "Missing grant_type.");
    } catch (err) {
      return err instanceof OAuthError ? oauthError(c, err) : unavailable(c, err);
    }
  });
}
