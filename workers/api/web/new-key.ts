import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { seal, unseal } from "../../shared/credentials/secrets.js";
import type { AppEnv } from "../context.js";
import { cookieBase, SESSION_COOKIE } from "../credentials/session-cookie.js";

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

/** HKDF info of the cookie's key: a value sealed for another purpose never opens here. */
const PURPOSE = "api-keys-page:new-key";

function cookieOptions<E extends AppEnv>(c: Context<E>, path: string) {
  return { ...cookieBase(c), sameSite: "Strict", path } as const;
}

/** Seals the new key into the cookie of the page at `path` (the project's API Keys page). */
export async function sealNewKey<E extends AppEnv>(c: Context<E>, path: string, key: NewKey): Promise<void> {
  const session = getCookie(c, SESSION_COOKIE) ?? "";
  const payload = JSON.stringify({ ...key, exp: Date.now() + TTL_SECONDS * 1000 });
  // The page's path as associated data: a cookie sealed for one project opens on no other page.
  const value = await seal(session, PURPOSE, path, payload);
  setCookie(c, COOKIE, value, { ...cookieOptions(c, path), maxAge: TTL_SECONDS });
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
  const session = getCookie(c, SESSION_COOKIE);
  const opened = session ? await unseal(session, PURPOSE, path, value) : null;
  if (opened === null) {
    return null;
  }
  try {
    const key = JSON.parse(opened) as NewKey & { exp: number };
    return key.exp > Date.now() ? { name: key.name, secret: key.secret } : null;
  } catch {
    return null;
  }
}
