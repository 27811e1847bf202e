import type { Context } from "hono";
import { clientIp } from "../../shared/rate-limit.js";
import { noteSignIn } from "../accounts/account.js";
import type { AppEnv } from "../context.js";
import { currentUser, setSessionCookie } from "../credentials/session-cookie.js";
import { endSession, sessionTtlSeconds, startSession } from "../credentials/sessions.js";

/**
 * Signs this browser in as the user: a new session token every time, so a session id planted before
 * sign-in is never promoted, and a session the browser already had (perhaps another person's) ends.
 */
export async function signInAs<E extends AppEnv>(
  c: Context<E>,
  userId: string,
  opts: { ssoTenantId?: string } = {},
): Promise<void> {
  const db = c.get("db");
  const previous = await currentUser(c);
  if (previous) {
    await endSession(db, previous.sessionId);
  }
  const ip = clientIp(c.req.raw.headers);
  const origin = {
    ip: ip === "unknown" ? null : ip,
    userAgent: c.req.header("user-agent") ?? null,
    ssoTenantId: opts.ssoTenantId ?? null,
  };
  setSessionCookie(
    c,
    await startSession(db, userId, new Date(c.get("now")), origin),
    sessionTtlSeconds(origin),
  );
  await noteSignIn(db, userId);
}
