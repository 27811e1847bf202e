import { createMiddleware } from "hono/factory";
import { ApiError } from "../../shared/errors.js";
import type { AppEnv } from "../context.js";

/**
 * Query parameters that would carry a credential in the URL, where proxies, browser history and access
 * logs keep it: RFC 6750's `access_token` (section 2.3, which section 5.3 and RFC 9700 advise against:
 * URLs leak), and the API key's and OAuth's other secrets. None of them is a parameter of any operation.
 */
export const URL_CREDENTIALS = [
  "access_token",
  "refresh_token",
  "api_key",
  "code",
  "code_verifier",
  "token",
  "client_secret",
] as const;

/** The first credential-like parameter of a URL's query, or null. */
export function credentialInUrl(url: string): string | null {
  const query = new URL(url).searchParams;
  return URL_CREDENTIALS.find((name) => query.has(name)) ?? null;
}

/**
 * Refuses (400) any request under /api that carries a credential in its query string, before any
 * authentication: the credential is neither used nor looked up, whatever the headers also carry.
 * Credentials go in headers (X-API-Key, Authorization: Bearer) and the OAuth endpoints' form bodies.
 */
export const refuseUrlCredentials = createMiddleware<AppEnv>(async (c, next) => {
  const name = credentialInUrl(c.req.url);
  // The OAuth endpoints refuse it too, in their own error format (routes/oauth/respond.ts).
  if (name !== null && !c.req.path.startsWith("/api/oauth/")) {
    throw new ApiError(
      "BAD_REQUEST",
      `${name}: credentials are not accepted in the URL; send them in a header (or, for the OAuth endpoints, the form body).`,
      { extensions: { field: name } },
    );
  }
  return next();
});
