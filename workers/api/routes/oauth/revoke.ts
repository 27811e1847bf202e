import type { Hono } from "hono";
import { announceChange } from "../../../shared/credentials/cache.js";
import { audit, grantParties } from "../../audit/record.js";
import type { AppEnv } from "../../context.js";
import { grantOfToken } from "../../credentials/grants.js";
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
      const grant = await grantOfToken(c.get("db"), token);
      let revoked = false;
      await revokeToken(c.get("db"), { clientId: client.id, token }, (tenantId) => {
        revoked = true;
        return announceChange(c.env, { tenantId });
      });
      // Only what was revoked now: unknown, foreign or already revoked tokens leave no entry.
      if (revoked && grant) {
        await audit(c, {
          action: "token.revoked",
          ...grantParties(grant),
          detail: { kind: token.startsWith("gtr_") ? "refresh" : "access" },
        });
      }
      return oauthJson(c, {});
    }),
  );
}
