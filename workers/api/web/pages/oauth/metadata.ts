import type { Hono } from "hono";
import { TOKEN_SCOPES } from "../../../../shared/credentials/scopes.js";
import type { AppEnv } from "../../../context.js";

/** RFC 8414 metadata: what a client needs to find the endpoints and what this server supports. */
export function register(app: Hono<AppEnv>) {
  app.get("/.well-known/oauth-authorization-server", (c) => {
    const issuer = new URL(c.req.url).origin;
    c.header("Cache-Control", "public, max-age=3600");
    return c.json({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/api/oauth/token`,
      revocation_endpoint: `${issuer}/api/oauth/revoke`,
      scopes_supported: [...TOKEN_SCOPES],
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      revocation_endpoint_auth_methods_supported: ["none"],
      authorization_response_iss_parameter_supported: true,
    });
  });
}
