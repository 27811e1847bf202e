import { expect } from "vitest";
import { type Browser, hiddenFields } from "./browser.js";
import { api } from "./http.js";

// The CLI's whole login through the Worker, for tests that need a signed-in user's OAuth tokens.
export const CLI = "fdc_framedash_cli";

function b64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

export async function tokenRequest(params: Record<string, string>) {
  const res = await api(
    "/oauth/token",
    { ip: "198.18.0.9" },
    {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: new URLSearchParams(params).toString(),
    },
  );
  return { res, body: (await res.json()) as Record<string, unknown> };
}

/** Authorize (PKCE), Allow for `tenantId`, exchange the code: the signed-in browser's user's tokens. */
export async function cliLogin(b: Browser, tenantId: string) {
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(48)));
  const challenge = b64url(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
  );
  const redirectUri = "http://127.0.0.1:53682/callback";
  const q = new URLSearchParams({
    response_type: "code",
    client_id: CLI,
    redirect_uri: redirectUri,
    scope: "analytics:read resources:write",
    state: "s",
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  const page = await b.get(`/oauth/authorize?${q}`);
  expect(page.status).toBe(200);
  const res = await b.post("/oauth/authorize", {
    ...hiddenFields(await page.text()),
    tenant: tenantId,
    decision: "allow",
  });
  expect(res.status).toBe(303);
  const code = new URL(res.headers.get("location") ?? "").searchParams.get("code") ?? "";
  const { res: tokenRes, body } = await tokenRequest({
    grant_type: "authorization_code",
    code,
    redirect_uri: redirectUri,
    code_verifier: verifier,
    client_id: CLI,
  });
  expect(tokenRes.status, JSON.stringify(body)).toBe(200);
  return body as { access_token: string; refresh_token: string };
}

export function refresh(refreshToken: string) {
  return tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: CLI });
}
