// API keys and tokens are random, shown once, and stored only as SHA-256 hex digests. The secrets have
// 192+ bits of entropy, so an unsalted fast hash is the right tool (it is a lookup key, not a password).
export const KEY_PREFIX = "gta_";
export const TOKEN_PREFIX = "gto_";

function base64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) {
    s += String.fromCharCode(b);
  }
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
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
