import type { Hono } from "hono";
import { announceChange } from "../../../shared/credentials/cache.js";
import { audit, grantParties } from "../../audit/record.js";
import type { AppEnv } from "../../context.js";
import { grantOfToken } from "../../credentials/grants.js";
import { exchangeCode, OAuthError, refreshTokens } from "../../credentials/tokens.js";
import { clientEndpoint, oauthJson } from "./respond.js";

/** POST /api/oauth/token: authorization_code (with PKCE) and refresh_token (rotating) grants. */
export function register(app: Hono<AppEnv>) {
  app.post(
    "/oauth/token",
    clientEndpoint(async (c, form, client) => {
      const announce = (tenantId: string) => announceChange(c.env, { tenantId });
      // The request's clock (c.var.now): codes and refresh tokens expire by it, as everything else does.
      const now = new Date(c.get("now"));
      const grantType = form.get("grant_type");
      if (grantType === "authorization_code") {
        const tokens = await exchangeCode(
          c.get("db"),
          {
            clientId: client.id,
            code: form.get("code"),
            redirectUri: form.get("redirect_uri"),
            codeVerifier: form.get("code_verifier"),
          },
          announce,
          now,
        );
        // The grant and its first tokens; refreshes that rotate them are not recorded one by one.
        const grant = await grantOfToken(c.get("db"), tokens.access_token);
        if (grant) {
          await audit(c, {
            action: "token.created",
            ...grantParties(grant),
            detail: { scope: tokens.scope },
          });
        }
        return oauthJson(c, tokens);
      }
      if (grantType === "refresh_token") {
        const tokens = await refreshTokens(
          c.get("db"),
          {
            clientId: client.id,
            refreshToken: form.get("refresh_token"),
            scope: form.get("scope"),
          },
          announce,
          now,
        );
        return oauthJson(c, tokens);
      }
      throw grantType
        ? new OAuthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token.")
        : new OAuthError("invalid_request", "Missing grant_type.");
    }),
  );
}
