import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../context.js";
import { cookieBase, SESSION_COOKIE } from "./session.js";

// A key created on the API Keys page is shown on the page the POST redirects to (Post/Redirect/Get: a
// refresh then re-reads the list instead of creating another key). Between the two requests its secret
// rides in a cookie sealed with AES-GCM under a key derived from the session token, which the server
// never stores (only its hash), so Postgres, logs and URLs never see the secret and no other session can
// open it. The cookie is short-lived, scoped to the project's page, SameSite=Strict, and cleared by the
// GET that shows it: a refresh shows the list without the secret.
const COOKIE = "gt_new_key";
/** Long enough for the browser to follow the redirect; the secret is not kept any longer than that. */
const TTL_SECONDS = 120;

export type NewKey = { name: string | null; secret: string };

const encoder = new TextEncoder();

async function sealingKey(session: string, usage: "encrypt" | "decrypt"): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", encoder.encode(session), "HKDF", false, [
    "deriveKey",
  ]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode("api-keys-page:new-key") },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    [usage],
  );
}

function cookieOptions<E extends AppEnv>(c: Context<E>, path: string) {
  return { ...cookieBase(c), sameSite: "Strict", path } as const;
}

function toBase64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

function fromBase64url(text: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
}

/** Seals the new key into the cookie of the page at `path` (the project's API Keys page). */
export async function sealNewKey<E extends AppEnv>(c: Context<E>, path: string, key: NewKey): Promise<void> {
  const session = getCookie(c, SESSION_COOKIE) ?? "";
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const payload = encoder.encode(JSON.stringify({ ...key, exp: Date.now() + TTL_SECONDS * 1000 }));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt(
      // The page's path as associated data: a cookie sealed for one project opens on no other page.
      { name: "AES-GCM", iv, additionalData: encoder.encode(path) },
      await sealingKey(session, "encrypt"),
      payload,
    ),
  );
  const value = new Uint8Array(iv.length + sealed.length);
  value.set(iv);
  value.set(sealed, iv.length);
  setCookie(c, COOKIE, toBase64url(value), { ...cookieOptions(c, path), maxAge: TTL_SECONDS });
}

/**
 * The key sealed for the page at `path` by this session, once: the cookie is cleared whenever it is
 * present, opened or not. Null when there is none, it expired, or it was sealed for another session.
 */
export async function takeNewKey<E extends AppEnv>(c: Context<E>, path: string): Promise<NewKey | null> {
  const value = getCookie(c, COOKIE);
  if (value === undefined) {
    return null;
  }
  deleteCookie(c, COOKIE, cookieOptions(c, path));
  const bytes = fromBase64url(value);
  const session = getCookie(c, SESSION_COOKIE);
  if (!bytes || bytes.length < 13 || !session) {
    return null;
  }
  try {
    const opened = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: encoder.encode(path) },
      await sealingKey(session, "decrypt"),
      bytes.slice(12),
    );
    const key = JSON.parse(new TextDecoder().decode(opened)) as NewKey & { exp: number };
    return key.exp > Date.now() ? { name: key.name, secret: key.secret } : null;
  } catch {
    return null;
  }
}
