import { base64url, fromBase64url } from "../../shared/credentials/secrets.js";
import { ApiError } from "../../shared/errors.js";

// A studio's OIDC client secret at rest: AES-GCM (256-bit key from the SSO_SECRET_KEY Worker secret, a
// random 96-bit IV per seal), the studio's id as additional data so a sealed value copied onto another
// studio's row does not open. Stored as `v1.<iv>.<ciphertext>` (base64url). The plain secret exists only
// in the request that seals or uses it: never in a response, a page or a log.

const VERSION = "v1";

async function keyOf(keyBase64: string): Promise<CryptoKey> {
  if (!keyBase64) {
    throw new ApiError(
      "UNAVAILABLE",
      "Single sign-on is not available on this deployment: its SSO_SECRET_KEY secret is not set.",
    );
  }
  const raw = Uint8Array.from(atob(keyBase64), (ch) => ch.charCodeAt(0));
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

export async function sealSecret(keyBase64: string, tenantId: string, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(tenantId) },
    await keyOf(keyBase64),
    new TextEncoder().encode(secret),
  );
  return `${VERSION}.${base64url(iv)}.${base64url(new Uint8Array(sealed))}`;
}

/** The secret sealed for this studio; throws when it was sealed under another key or for another studio. */
export async function openSecret(keyBase64: string, tenantId: string, sealed: string): Promise<string> {
  const [version, ivText, dataText] = sealed.split(".");
  const iv = fromBase64url(ivText ?? "");
  const data = fromBase64url(dataText ?? "");
  if (version !== VERSION || !iv || !data) {
    throw new Error("sso client secret: not a sealed value");
  }
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(tenantId) },
    await keyOf(keyBase64),
    data,
  );
  return new TextDecoder().decode(plain);
}
