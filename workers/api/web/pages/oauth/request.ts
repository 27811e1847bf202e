import { findClient, type OAuthClient, redirectUriAllowed } from "../../../accounts/oauth/clients.js";
import { type GrantScope, parseScope } from "../../../credentials/grants.js";
import type { Db } from "../../../db.js";

// The authorization request (RFC 6749 section 4.1.1 with PKCE, RFC 7636), checked the same way when
// the consent page is shown and when its answer comes back. Until the client and its redirect URI are
// known good, errors are shown here and never sent anywhere (section 4.1.2.1); after that they go back
// to the client as error redirects carrying its state.

export type AuthorizeRequest = {
  client: OAuthClient;
  redirectUri: string;
  scopes: GrantScope[];
  state: string | undefined;
  codeChallenge: string;
};

export type Checked =
  | { kind: "ok"; request: AuthorizeRequest }
  | { kind: "page"; message: string }
  | { kind: "redirect"; location: string };

/** The names of the parameters, so the consent form can carry them back verbatim. */
export const AUTHORIZE_PARAMS = [
  "response_type",
  "client_id",
  "redirect_uri",
  "scope",
  "state",
  "code_challenge",
  "code_challenge_method",
] as const;

export type AuthorizeParams = Partial<Record<(typeof AUTHORIZE_PARAMS)[number], string>>;

/** S256 challenges are base64url SHA-256 digests: exactly 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** The client's redirect URI with the answer appended (and `iss`, RFC 9207, naming this server). */
export function clientRedirect(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined) {
      url.searchParams.set(k, v);
    }
  }
  return url.toString();
}

export async function checkAuthorize(
  db: Db,
  params: AuthorizeParams,
  issuer: string,
  duplicated: string[] = [],
): Promise<Checked> {
  const client = await findClient(db, params.client_id);
  if (!client) {
    return {
      kind: "page",
      message: "The application asking for access is not registered (unknown client_id).",
    };
  }
  if (duplicated.includes("client_id") || duplicated.includes("redirect_uri")) {
    return { kind: "page", message: "The authorization request repeats client_id or redirect_uri." };
  }
  const redirectUri = params.redirect_uri;
  if (!redirectUri || !redirectUriAllowed(client, redirectUri)) {
    return {
      kind: "page",
      message: `The redirect_uri is not registered for ${client.name}, so the answer cannot be sent back.`,
    };
  }
  const state = params.state;
  const fail = (error: string, description: string): Checked => ({
    kind: "redirect",
    location: clientRedirect(redirectUri, { error, error_description: description, state, iss: issuer }),
  });
  if (duplicated.length) {
    return fail("invalid_request", `Parameters may appear once: ${duplicated.join(", ")}.`);
  }
  if (params.response_type !== "code") {
    return fail("unsupported_response_type", "response_type must be code.");
  }
  if (state !== undefined && state.length > 1024) {
    return fail("invalid_request", "state must be at most 1024 characters.");
  }
  if (!params.code_challenge) {
    return fail("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256.");
  }
  if (params.code_challenge_method !== "S256") {
    return fail("invalid_request", "code_challenge_method must be S256 (plain is not supported).");
  }
  if (!S256_CHALLENGE.test(params.code_challenge)) {
    return fail("invalid_request", "code_challenge must be a base64url SHA-256 digest (43 characters).");
  }
  const scope = parseScope(params.scope);
  if (!scope.ok) {
    return fail(
      "invalid_scope",
      `Only analytics:read and resources:write can be granted; refused: ${scope.refused.join(" ")}.`,
    );
  }
  return {
    kind: "ok",
    request: { client, redirectUri, scopes: scope.scopes, state, codeChallenge: params.code_challenge },
  };
}
