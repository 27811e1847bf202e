import * as oauth from "oauth4webapi";
import { ApiError } from "../../shared/errors.js";

// The provider side of single sign-on, through oauth4webapi (maintained, validates every step against
// the specs): discovery, the authorization URL, the code exchange and the ID token's checks.

/** How long an isolate reuses a provider's discovered metadata. */
const DISCOVERY_TTL_MS = 5 * 60 * 1000;
/** Each call to the provider is bounded. */
const PROVIDER_TIMEOUT_MS = 10_000;

/**
 * A loopback host (127.0.0.0/8, ::1, localhost): http is allowed there only (tests and local
 * development); a Worker in production reaches nothing on loopback.
 */
export function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}

const discovered = new Map<string, { as: oauth.AuthorizationServer; expires: number }>();

/** http is allowed for a loopback issuer only (tests and local development); https everywhere else. */
export function requestOptions(issuer: string) {
  const url = new URL(issuer);
  return {
    signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
    ...(url.protocol === "http:" && isLoopbackHost(url.hostname)
      ? { [oauth.allowInsecureRequests]: true }
      : {}),
  };
}

/**
 * The provider's metadata from `<issuer>/.well-known/openid-configuration`; its `issuer` must equal the
 * one configured. A provider that cannot be reached is a retryable 503; anything else wrong is a 400
 * naming the issuer field and what was wrong.
 */
export async function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  const hit = discovered.get(issuer);
  if (hit && hit.expires > Date.now()) {
    return hit.as;
  }
  const url = new URL(issuer);
  let response: Response;
  try {
    response = await oauth.discoveryRequest(url, requestOptions(issuer));
  } catch (err) {
    throw new ApiError(
      "UNAVAILABLE",
      `The identity provider at ${url.origin} could not be reached (${err instanceof Error ? err.name : "error"}). Try again.`,
      { retryAfter: 5 },
    );
  }
  let as: oauth.AuthorizationServer;
  try {
    as = await oauth.processDiscoveryResponse(url, response);
  } catch (err) {
    const why =
      err instanceof oauth.OperationProcessingError && err.code === oauth.JSON_ATTRIBUTE_COMPARISON
        ? "its metadata names another issuer"
        : `no OpenID Provider metadata at ${url.href.replace(/\/$/, "")}/.well-known/openid-configuration (HTTP ${response.status})`;
    throw new ApiError("BAD_REQUEST", `issuer: ${why}`, { extensions: { field: "issuer" } });
  }
  const missing = (["authorization_endpoint", "token_endpoint", "jwks_uri"] as const).filter((k) => !as[k]);
  if (missing.length > 0) {
    throw new ApiError("BAD_REQUEST", `issuer: its metadata has no ${missing.join(", ")}`, {
      extensions: { field: "issuer" },
    });
  }
  discovered.set(issuer, { as, expires: Date.now() + DISCOVERY_TTL_MS });
  return as;
}

/**
 * The client as oauth4webapi checks tokens for it. `now` is the request's clock (tests set it): the
 * ID token's expiry is judged against it.
 */
export function clientOf(clientId: string, now: number): oauth.Client {
  return { client_id: clientId, [oauth.clockSkew]: Math.round((now - Date.now()) / 1000) };
}

/** client_secret_basic unless the provider supports only client_secret_post. */
export function clientAuth(as: oauth.AuthorizationServer, secret: string): oauth.ClientAuth {
  const methods = as.token_endpoint_auth_methods_supported;
  return methods && !methods.includes("client_secret_basic") && methods.includes("client_secret_post")
    ? oauth.ClientSecretPost(secret)
    : oauth.ClientSecretBasic(secret);
}

/** Why a step with the provider failed, as the audit log and the page name it. */
export type ProviderRefusal =
  | "provider_error"
  | "issuer"
  | "audience"
  | "nonce"
  | "expired"
  | "signature"
  | "token_request"
  | "provider_unreachable"
  | "invalid_response";

/** The OAuth `error` code of a challenge's response body (RFC 6749 5.2), if it has one. */
async function challengeError(err: oauth.WWWAuthenticateChallengeError): Promise<string | undefined> {
  const fromHeader = err.cause.find((ch) => typeof ch.parameters.error === "string")?.parameters.error;
  if (fromHeader) {
    return fromHeader;
  }
  try {
    const body: unknown = await err.response.clone().json();
    return body && typeof body === "object" && "error" in body && typeof body.error === "string"
      ? body.error
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why a step with the provider failed. A token endpoint that refuses the client's credentials answers
 * 401 with a `WWW-Authenticate` challenge (RFC 6749 5.2: `invalid_client` with HTTP Basic), which
 * oauth4webapi raises before reading the body: that is the code exchange refused (`token_request`,
 * "check the client id and secret"), not an invalid answer.
 */
export async function refusalOf(err: unknown): Promise<{ reason: ProviderRefusal; detail?: string }> {
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    const code = await challengeError(err);
    return {
      reason: "token_request",
      detail: code ?? `HTTP ${err.status} ${err.cause[0]?.scheme ?? ""}`.trim(),
    };
  }
  if (err instanceof oauth.AuthorizationResponseError) {
    return { reason: "provider_error", detail: err.error };
  }
  if (err instanceof oauth.ResponseBodyError) {
    return { reason: "token_request", detail: err.error };
  }
  if (err instanceof oauth.OperationProcessingError) {
    const cause: unknown = err.cause;
    const claim =
      cause && typeof cause === "object" && "claim" in cause && typeof cause.claim === "string"
        ? cause.claim
        : undefined;
    if (err.code === oauth.JWT_CLAIM_COMPARISON) {
      const byClaim: Record<string, ProviderRefusal> = {
        iss: "issuer",
        aud: "audience",
        azp: "audience",
        nonce: "nonce",
      };
      const reason = claim ? byClaim[claim] : undefined;
      if (reason) {
        return { reason };
      }
    }
    if (err.code === oauth.JWT_TIMESTAMP_CHECK) {
      return { reason: "expired", detail: claim };
    }
    if (err.code === oauth.INVALID_RESPONSE && /signature/i.test(err.message)) {
      return { reason: "signature" };
    }
    if (err.code === oauth.KEY_SELECTION) {
      return { reason: "signature", detail: "no matching key" };
    }
    if (err.code === oauth.JSON_ATTRIBUTE_COMPARISON) {
      return { reason: "issuer", detail: "iss parameter" };
    }
    return { reason: "invalid_response", detail: err.code };
  }
  if (
    err instanceof TypeError ||
    (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError"))
  ) {
    return { reason: "provider_unreachable" };
  }
  return { reason: "invalid_response" };
}
