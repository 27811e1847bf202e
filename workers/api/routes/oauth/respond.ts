import type { Context } from "hono";
import { OAUTH_REQUESTS_PER_HOUR } from "../../../shared/plans.js";
import { buckets, charge, clientIp } from "../../../shared/rate-limit.js";
import { findClient, type OAuthClient } from "../../accounts/oauth/clients.js";
import type { AppEnv } from "../../context.js";
import { OAuthError } from "../../credentials/tokens.js";
import { credentialInUrl } from "../../middleware/url-credentials.js";

// The OAuth endpoints under /api speak RFC 6749, not the Web API's envelope: a form body in, and
// JSON out with {error, error_description} on failure (section 5.2). They take no API credentials.

const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" };
export const FORM_MAX_BYTES = 8 * 1024;

export function oauthJson(c: Context<AppEnv>, body: object, status: 200 | 400 | 401 | 429 | 503 = 200) {
  return c.json(body, status, NO_STORE);
}

export function oauthError(c: Context<AppEnv>, err: OAuthError) {
  return oauthJson(c, { error: err.error, error_description: err.description }, err.status);
}

/**
 * The form parameters, each at most once (section 3.2). Throws invalid_request for another media
 * type, an oversized body, a repeated parameter, or a credential in the URL's query string.
 */
export async function readOAuthForm(c: Context<AppEnv>): Promise<Map<string, string>> {
  const inUrl = credentialInUrl(c.req.url);
  if (inUrl !== null) {
    throw new OAuthError("invalid_request", `${inUrl} must be sent in the form body, never in the URL.`);
  }
  const type = (c.req.header("content-type") ?? "").toLowerCase();
  if (!type.startsWith("application/x-www-form-urlencoded")) {
    throw new OAuthError("invalid_request", "The body must be application/x-www-form-urlencoded.");
  }
  if (Number(c.req.header("content-length") ?? "0") > FORM_MAX_BYTES) {
    throw new OAuthError("invalid_request", `The body must be at most ${FORM_MAX_BYTES} bytes.`);
  }
  // Decoded by hand: workerd warns when .text() reads a body whose type is not text/*.
  const text = new TextDecoder().decode(await c.req.arrayBuffer());
  if (text.length > FORM_MAX_BYTES) {
    throw new OAuthError("invalid_request", `The body must be at most ${FORM_MAX_BYTES} bytes.`);
  }
  const out = new Map<string, string>();
  for (const [k, v] of new URLSearchParams(text)) {
    if (out.has(k)) {
      throw new OAuthError("invalid_request", `The parameter ${k} appears more than once.`);
    }
    out.set(k, v);
  }
  return out;
}

/** Per client IP, in its own bucket: a busy office's CLIs refreshing do not eat the API's quotas. */
export async function limitOAuth(c: Context<AppEnv>): Promise<Response | null> {
  const result = await charge(c.env, buckets.oauth(clientIp(c.req.raw.headers)), OAUTH_REQUESTS_PER_HOUR);
  c.set("rateLimit", result);
  if (result.allowed) {
    return null;
  }
  c.header("Retry-After", String(result.retryAfter));
  return oauthJson(
    c,
    { error: "temporarily_unavailable", error_description: "Too many requests; retry later." },
    429,
  );
}

/** Postgres unreachable and the like: a retryable 503 in the endpoint's own format. */
export function unavailable(c: Context<AppEnv>, err: unknown) {
  console.error("oauth endpoint failed", err instanceof Error ? err.message : String(err));
  c.header("Retry-After", "5");
  return oauthJson(
    c,
    { error: "temporarily_unavailable", error_description: "The server could not answer; retry." },
    503,
  );
}

/**
 * One OAuth endpoint called by a public client: its own rate bucket, the form body, the client by its
 * id (public clients authenticate by nothing else; the proof is PKCE or possession of the token, both
 * bound to that id), and RFC 6749 §5.2 errors, or a 503 when the store is down.
 */
export function clientEndpoint(
  run: (c: Context<AppEnv>, form: Map<string, string>, client: OAuthClient) => Promise<Response>,
) {
  return async (c: Context<AppEnv>): Promise<Response> => {
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
      return await run(c, form, client);
    } catch (err) {
      return err instanceof OAuthError ? oauthError(c, err) : unavailable(c, err);
    }
  };
}
