// API keys and tokens are random, shown once, and stored only as SHA-256 hex digests. The secrets have
// 192+ bits of entropy, so an unsalted fast hash is the right tool (it is a lookup key, not a password).
export const KEY_PREFIX = "gta_";
export const TOKEN_PREFIX = "gto_";

/** Unpadded base64url (RFC 4648 §5): secrets, PKCE challenges and sealed cookies. */
export function base64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) {
    s += String.fromCharCode(b);
  }
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The bytes of unpadded (or padded) base64url text; null when it is not base64url. */
export function fromBase64url(text: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
}

export function newSecret(prefix: string): string {
  return prefix + base64url(crypto.getRandomValues(new Uint8Array(30)));
}

export async function sha256Hex(text: string | Uint8Array): Promise<string> {
  const data = typeof text === "string" ? new TextEncoder().encode(text) : text;
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", data)));
}

export function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (const b of bytes) {
    hex += b.toString(16).padStart(2, "0");
  }
  return hex;
}

/** Shape check before any database lookup: a malformed credential never costs a query. */
export function looksLikeSecret(value: string, prefix: string): boolean {
  return value.length === prefix.length + 40 && value.startsWith(prefix) && /^[A-Za-z0-9_-]+$/.test(value);
}

/** Equal bytes, in time that depends only on the length: for comparing secrets and digests. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) {
    return false;
  }
  let diff = 0;
  for (let i = 0; i < a.length; i++) {
    diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  }
  return diff === 0;
}

const IV_BYTES = 12;
const utf8 = new TextEncoder();

/** AES-256-GCM key derived (HKDF-SHA-256, empty salt) from `secret` for one `purpose`. */
async function sealingKey(secret: string, purpose: string, usage: "encrypt" | "decrypt"): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", utf8.encode(secret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: utf8.encode(purpose) },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    [usage],
  );
}

/**
 * Seals `text` so that only a holder of `secret` can open it, and only for the same `purpose` and
 * `context` (bound as AES-GCM associated data, not stored): base64url of a random 12-byte IV, then the
 * ciphertext and its tag. For short-lived values that ride in a cookie; the secret never leaves.
 */
export async function seal(secret: string, purpose: string, context: string, text: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: utf8.encode(context) },
      await sealingKey(secret, purpose, "encrypt"),
      utf8.encode(text),
    ),
  );
  const value = new Uint8Array(iv.length + sealed.length);
  value.set(iv);
  value.set(sealed, iv.length);
  return base64url(value);
}

/** The text `seal` sealed with the same secret, purpose and context; null for anything else. */
export async function unseal(
  secret: string,
  purpose: string,
  context: string,
  sealed: string,
): Promise<string | null> {
  const bytes = fromBase64url(sealed);
  if (!bytes || bytes.length <= IV_BYTES) {
    return null;
  }
  try {
    const opened = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.slice(0, IV_BYTES), additionalData: utf8.encode(context) },
      await sealingKey(secret, purpose, "decrypt"),
      bytes.slice(IV_BYTES),
    );
    return new TextDecoder().decode(opened);
  } catch {
    return null;
  }
}
