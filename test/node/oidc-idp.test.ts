import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OidcIdp, startOidcIdp } from "../support/oidc-idp.js";
import { idpControl } from "../support/oidc-idp-control.js";

// The test OpenID provider (test/support/oidc-idp.ts) proven with a strict relying party: oauth4webapi
// drives discovery, the code flow with PKCE, state and nonce, and validates the ID token, so what the
// SSO tests build on is a conforming provider, and each rogue token fails on exactly its claim.

const REDIRECT = "http://127.0.0.1:9/sso/callback";
const CLIENT = { clientId: "studio-app", clientSecret: "s3cret-studio-app", redirectUris: [REDIRECT] };
const insecure = { [oauth.allowInsecureRequests]: true };

let idp: OidcIdp;
let as: oauth.AuthorizationServer;
const client: oauth.Client = { client_id: CLIENT.clientId };

beforeAll(async () => {
  idp = await startOidcIdp({
    clients: [CLIENT],
    accounts: [
      { email: "ada@studio.test", name: "Ada" },
      { email: "eve@studio.test", emailVerified: false },
      { email: "entra@studio.test", emailVerified: null },
    ],
  });
  const issuer = new URL(idp.issuer);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
});

afterAll(async () => {
  await idp?.close();
});

type Started = { url: URL; state: string; nonce: string; verifier: string };

async function start(params: Record<string, string | undefined> = {}): Promise<Started> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint ?? "");
  const all: Record<string, string | undefined> = {
    client_id: CLIENT.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "openid email profile",
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    ...params,
  };
  for (const [name, value] of Object.entries(all)) {
    if (value !== undefined) {
      url.searchParams.set(name, value);
    }
  }
  return { url, state, nonce, verifier };
}

/** The provider's answer to the authorization request, checked (state, iss): the code's parameters. */
function answerOf(
  result: { callback: string } | { status: number },
  s: Started,
  rp = client,
): URLSearchParams {
  if (!("callback" in result)) {
    throw new Error(`stopped at the provider: ${result.status}`);
  }
  return oauth.validateAuthResponse(as, rp, new URL(result.callback), s.state);
}

/** The code exchange, with the client's secret by default. */
function exchange(
  params: URLSearchParams,
  verifier: string,
  opts: { rp?: oauth.Client; auth?: oauth.ClientAuth } = {},
): Promise<Response> {
  return oauth.authorizationCodeGrantRequest(
    as,
    opts.rp ?? client,
    opts.auth ?? oauth.ClientSecretBasic(CLIENT.clientSecret),
    params,
    REDIRECT,
    verifier,
    insecure,
  );
}

/** The whole flow as email; returns the validated ID token claims (or throws what oauth4webapi threw). */
async function signIn(email: string, started?: Started): Promise<oauth.IDToken> {
  const s = started ?? (await start());
  const response = await exchange(answerOf(await idp.authorize(s.url.href, email), s), s.verifier);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
    expectedNonce: s.nonce,
  });
  // The ID token's signature against the provider's JWKS (oauth4webapi leaves it to this call).
  await oauth.validateApplicationLevelSignature(as, response, insecure);
  const claims = oauth.getValidatedIdTokenClaims(tokens);
  if (!claims) {
    throw new Error("no ID token");
  }
  return claims;
}

async function errorCode(promise: Promise<unknown>): Promise<string> {
  return (await refusal(promise)).code;
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return { code: (err as { code?: string }).code ?? "none", message: String(err) };
  }
  return { code: "accepted", message: "" };
}

describe("test OpenID provider", () => {
  it("serves discovery for its issuer with the code flow, S256 and a JWKS", async () => {
    expect(as.issuer).toBe(idp.issuer);
    expect(as.response_types_supported).toEqual(["code"]);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
    expect(as.token_endpoint).toBe(`${idp.issuer}/token`);
    const jwks = (await (await fetch(as.jwks_uri ?? "")).json()) as { keys: { kid: string; d?: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toEqual(idp.jwks.keys.map((k) => k.kid));
    expect(jwks.keys[0]?.d).toBeUndefined();
  });

  it("signs a person in through the code flow with PKCE: a verified email in the ID token", async () => {
    const claims = await signIn("ada@studio.test");
    expect(claims.iss).toBe(idp.issuer);
    expect(claims.aud).toBe(CLIENT.clientId);
    expect(claims.email).toBe("ada@studio.test");
    expect(claims.email_verified).toBe(true);
    expect(claims.name).toBe("Ada");
    // Stable subject across sign-ins.
    expect((await signIn("ada@studio.test")).sub).toBe(claims.sub);
  });

  it("sends email_verified false, or none at all (as Entra ID does by default)", async () => {
    expect((await signIn("eve@studio.test")).email_verified).toBe(false);
    const entra = await signIn("entra@studio.test");
    expect(entra.email).toBe("entra@studio.test");
    expect("email_verified" in entra).toBe(false);
  });

  it("models Okta's thin ID token (email_verified only at UserInfo) and Entra's xms_edov", async () => {
    await idp.addAccount({ email: "okta@studio.test", emailVerifiedOnlyAtUserinfo: true });
    const s = await start();
    const result = await idp.authorize(s.url.href, "okta@studio.test");
    const params = answerOf(result, s);
    const response = await exchange(params, s.verifier);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: s.nonce,
    });
    const claims = oauth.getValidatedIdTokenClaims(tokens);
    expect(claims?.email).toBe("okta@studio.test");
    expect(claims && "email_verified" in claims).toBe(false);
    const info = await oauth.processUserInfoResponse(
      as,
      client,
      claims?.sub ?? "",
      await oauth.userInfoRequest(as, client, tokens.access_token, insecure),
    );
    expect(info).toMatchObject({ email: "okta@studio.test", email_verified: true });

    await idp.addAccount({ email: "edov@studio.test", emailVerified: null, xmsEdov: true });
    const entra = await signIn("edov@studio.test");
    expect("email_verified" in entra).toBe(false);
    expect(entra.xms_edov).toBe(true);
  });

  it("requires PKCE: no code_challenge is an invalid_request back to the client", async () => {
    const s = await start({ code_challenge: undefined, code_challenge_method: undefined });
    const result = await idp.authorize(s.url.href, "ada@studio.test");
    expect("callback" in result).toBe(true);
    const callback = new URL((result as { callback: string }).callback);
    expect(callback.searchParams.get("error")).toBe("invalid_request");
    expect(callback.searchParams.get("error_description")).toMatch(/PKCE/);
    expect(callback.searchParams.get("state")).toBe(s.state);
  });

  it("refuses a wrong code_verifier and a code used twice", async () => {
    const s = await start();
    const result = await idp.authorize(s.url.href, "ada@studio.test");
    const params = answerOf(result, s);
    const wrong = await exchange(params, oauth.generateRandomCodeVerifier());
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await exchange(params, s.verifier)).status).toBe(200);
    const again = await exchange(params, s.verifier);
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("refuses a wrong client secret", async () => {
    const s = await start();
    const result = await idp.authorize(s.url.href, "ada@studio.test");
    const params = answerOf(result, s);
    const res = await exchange(params, s.verifier, { auth: oauth.ClientSecretBasic("not-the-secret") });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_client");
  });

  it("refuses a disabled account at its login form, and again once re-enabled it signs in", async () => {
    await idp.addAccount({ email: "leaver@studio.test" });
    const sub = (await signIn("leaver@studio.test")).sub;
    await idp.setDisabled("leaver@studio.test", true);
    const s = await start();
    const result = await idp.authorize(s.url.href, "leaver@studio.test");
    expect(result).toMatchObject({ status: 403 });
    expect((result as { page: string }).page).toContain("This account is disabled");
    await idp.setDisabled("leaver@studio.test", false);
    expect((await signIn("leaver@studio.test")).sub).toBe(sub);
  });

  it("can answer a disabled account with access_denied back to the client instead of its page", async () => {
    await idp.addAccount({ email: "gone@studio.test", disabled: true, disabledAnswer: "access_denied" });
    const s = await start();
    const result = await idp.authorize(s.url.href, "gone@studio.test");
    const callback = new URL((result as { callback: string }).callback);
    expect(callback.origin + callback.pathname).toBe(REDIRECT);
    expect(callback.searchParams.get("error")).toBe("access_denied");
    expect(callback.searchParams.get("state")).toBe(s.state);
    expect(callback.searchParams.get("iss")).toBe(idp.issuer);
    expect(callback.searchParams.get("code")).toBeNull();
  });

  it("refuses an authorization code whose account was disabled after the login", async () => {
    await idp.addAccount({ email: "mid@studio.test" });
    const s = await start();
    const result = await idp.authorize(s.url.href, "mid@studio.test");
    const params = answerOf(result, s);
    await idp.setDisabled("mid@studio.test", true);
    const res = await exchange(params, s.verifier);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
  });

  describe("rogue ID tokens: signed with the provider's key, failing only on the claim under test", () => {
    it("a wrong issuer", async () => {
      await idp.rogue({ clientId: CLIENT.clientId, set: { iss: "http://127.0.0.1:1/other-tenant" } });
      expect(await errorCode(signIn("ada@studio.test"))).toBe(oauth.JWT_CLAIM_COMPARISON);
    });
    it("another audience", async () => {
      await idp.rogue({ clientId: CLIENT.clientId, set: { aud: "another-studio-app" } });
      expect(await errorCode(signIn("ada@studio.test"))).toBe(oauth.JWT_CLAIM_COMPARISON);
    });
    it("a wrong nonce", async () => {
      await idp.rogue({ clientId: CLIENT.clientId, set: { nonce: oauth.generateRandomNonce() } });
      expect(await errorCode(signIn("ada@studio.test"))).toBe(oauth.JWT_CLAIM_COMPARISON);
    });
    it("an expired ID token", async () => {
      await idp.rogue({ clientId: CLIENT.clientId, expiresInSeconds: -600 });
      expect(await errorCode(signIn("ada@studio.test"))).toBe(oauth.JWT_TIMESTAMP_CHECK);
    });
    it("a signature by another key under the provider's kid", async () => {
      await idp.rogue({ clientId: CLIENT.clientId, foreignKey: true });
      const refused = await refusal(signIn("ada@studio.test"));
      expect(refused.code).toBe(oauth.INVALID_RESPONSE);
      expect(refused.message).toMatch(/signature/i);
    });
    it("is one-shot: the next token is genuine", async () => {
      await idp.rogue({ clientId: CLIENT.clientId, set: { nonce: "x" } });
      await errorCode(signIn("ada@studio.test"));
      expect((await signIn("ada@studio.test")).email).toBe("ada@studio.test");
    });
  });

  it("is driven over its control plane too (as tests inside workerd do)", async () => {
    const control = idpControl(idp.issuer);
    await control.addClient({
      clientId: "second-app",
      clientSecret: "second-secret",
      redirectUris: [REDIRECT],
      tokenEndpointAuthMethod: "client_secret_post",
    });
    const sub = await control.addAccount({ email: "grace@other.test" });
    const second: oauth.Client = { client_id: "second-app" };
    const s = await start({ client_id: "second-app" });
    const result = await control.authorize(s.url.href, "grace@other.test");
    const params = answerOf(result, s, second);
    const response = await exchange(params, s.verifier, {
      rp: second,
      auth: oauth.ClientSecretPost("second-secret"),
    });
    const tokens = await oauth.processAuthorizationCodeResponse(as, second, response, {
      expectedNonce: s.nonce,
    });
    expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({ sub, email: "grace@other.test" });
    await control.setDisabled("grace@other.test", true);
    expect(
      await control.authorize((await start({ client_id: "second-app" })).url.href, "grace@other.test"),
    ).toMatchObject({
      status: 403,
    });
  });
});
