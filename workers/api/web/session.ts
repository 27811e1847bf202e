import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { newSecret, sha256Hex } from "../../shared/credentials/secrets.js";
import type { AppEnv } from "../context.js";
import { cookieBase, currentUser, SESSION_COOKIE } from "../credentials/session-cookie.js";

// CSRF and the way back to sign-in, for the pages outside /api. The session cookie itself is
// credentials/session-cookie.ts.
/** Before sign-in there is no session to bind a CSRF token to: this random cookie stands in. */
const PRE_SESSION_COOKIE = "gt_csrf";

/**
 * The token every form of this request carries. Signed in: derived from the session token, which an
 * attacker's page cannot read (HttpOnly), so it cannot be forged. Before sign-in: a random value in its
 * own cookie (double submit), set here when missing.
 */
export async function csrfToken<E extends AppEnv>(c: Context<E>): Promise<string> {
  const session = getCookie(c, SESSION_COOKIE);
  if (session && (await currentUser(c))) {
    return sha256Hex(`csrf:${session}`);
  }
  let pre = getCookie(c, PRE_SESSION_COOKIE);
  if (!pre || !/^csrf_[A-Za-z0-9_-]{40}$/.test(pre)) {
    pre = newSecret("csrf_");
    setCookie(c, PRE_SESSION_COOKIE, pre, { ...cookieBase(c), sameSite: "Strict", maxAge: 3600 });
  }
  return pre;
}

/**
 * Every form POST: a same-origin request (Origin, where the browser sends it, and Sec-Fetch-Site) that
 * carries the token of csrfToken().
 */
export async function csrfValid<E extends AppEnv>(c: Context<E>, submitted: unknown): Promise<boolean> {
  const origin = c.req.header("origin");
  if (origin !== undefined && origin !== new URL(c.req.url).origin) {
    return false;
  }
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    return false;
  }
  if (typeof submitted !== "string" || !submitted) {
    return false;
  }
  const session = getCookie(c, SESSION_COOKIE);
  if (session && (await currentUser(c)) && submitted === (await sha256Hex(`csrf:${session}`))) {
    return true;
  }
  // A form rendered before sign-in (another tab may have signed in since) carries the pre-session one.
  const pre = getCookie(c, PRE_SESSION_COOKIE);
  return pre !== undefined && submitted === pre;
}

/** A local path to come back to after sign-in; anything else (other hosts, `//x`) becomes `/`. */
export function safeReturnTo(value: unknown): string {
  if (
    typeof value !== "string" ||
    !value.startsWith("/") ||
    value.startsWith("//") ||
    value.startsWith("/\\") ||
    value.length > 4000 ||
    [...value].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)
  ) {
    return "/";
  }
  return value;
}

/** Where a signed-out visitor of this page goes: the sign-in page, carrying the way back. */
export function signInRedirect<E extends AppEnv>(c: Context<E>, returnTo?: string): Response {
  const url = new URL(c.req.url);
  const back = safeReturnTo(returnTo ?? `${url.pathname}${url.search}`);
  const target = c.env.SIGN_IN_URL || "/sign-in";
  const query = back === "/" ? "" : `?returnTo=${encodeURIComponent(back)}`;
  return c.redirect(`${target}${query}`, 307);
}
