import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../context.js";
import { httpDb } from "../db.js";
import {
  lastSeenIsStale,
  noteSessionSeen,
  SESSION_TTL_SECONDS,
  type SessionUser,
  sessionUser,
} from "./sessions.js";

// The browser session's cookie: the one place it is read and written. The pages sign in and out with
// it (workers/api/web/), the Web API's gate asks currentUser() when a request carries no key or token,
// so the dashboard's scripts read the same /api/v1 routes as the clients (middleware/auth.ts,
// docs/dashboard.md), and the audit log names the signed-in user with it (audit/record.ts).
export const SESSION_COOKIE = "gt_session";
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Secure everywhere but on a loopback host, where local development runs over plain http. */
export function cookieBase<E extends AppEnv>(c: Context<E>) {
  return {
    path: "/",
    httpOnly: true,
    sameSite: "Lax",
    secure: !LOOPBACK.has(new URL(c.req.url).hostname),
  } as const;
}

export function setSessionCookie<E extends AppEnv>(
  c: Context<E>,
  token: string,
  maxAge = SESSION_TTL_SECONDS,
): void {
  setCookie(c, SESSION_COOKIE, token, { ...cookieBase(c), maxAge });
}

export function clearSessionCookie<E extends AppEnv>(c: Context<E>): void {
  deleteCookie(c, SESSION_COOKIE, cookieBase(c));
}

/** Whether the request carries a session cookie at all (live or not). */
export function hasSessionCookie<E extends AppEnv>(c: Context<E>): boolean {
  return Boolean(getCookie(c, SESSION_COOKIE));
}

const users = new WeakMap<Request, Promise<SessionUser | null>>();

/**
 * The signed-in user of this request, looked up once per request. The session's "last seen" is written
 * after the response, and only when the stored one is older than its resolution (sessions.ts).
 */
export function currentUser<E extends AppEnv>(c: Context<E>): Promise<SessionUser | null> {
  let found = users.get(c.req.raw);
  if (!found) {
    const now = new Date(c.get("now"));
    found = sessionUser(c.get("db"), getCookie(c, SESSION_COOKIE), now).then((user) => {
      if (user && lastSeenIsStale(user.lastSeenAt, now)) {
        c.executionCtx.waitUntil(
          noteSessionSeen(httpDb(c.get("config")), user.sessionId, now).catch((err) =>
            console.error("session last-seen update failed", err instanceof Error ? err.message : err),
          ),
        );
      }
      return user;
    });
    users.set(c.req.raw, found);
  }
  return found;
}
