import type { Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { accountOf, hasPassword } from "../../../accounts/account.js";
import { AccountError } from "../../../accounts/users.js";
import type { AppEnv } from "../../../context.js";
import { sessionsOfUser } from "../../../credentials/sessions.js";
import { type PageEnv, visitor } from "../../access.js";
import { accountPage, NOTICES } from "./view.js";

/** The account page, with an error when a POST was refused. */
export async function renderAccount(
  c: Context<PageEnv>,
  opts: { status?: ContentfulStatusCode; error?: string } = {},
) {
  const { nav, csrf, user } = c.get("visitor");
  const db = c.get("db");
  const [account, sessions, withPassword] = await Promise.all([
    accountOf(db, user.userId),
    sessionsOfUser(db, user.userId, new Date(c.get("now"))),
    hasPassword(db, user.userId),
  ]);
  const notice = NOTICES[c.req.query("done") ?? ""];
  return c.html(
    accountPage({
      nav,
      csrf,
      email: user.email,
      name: account?.name ?? "",
      sessions,
      currentSessionId: user.sessionId,
      notice,
      error: opts.error,
      hasPassword: withPassword,
    }),
    opts.status ?? 200,
  );
}

/** Runs a change; an AccountError (a wrong password, a rule) is the page again with the reason, 400. */
export async function attempt(c: Context<PageEnv>, change: () => Promise<Response>): Promise<Response> {
  try {
    return await change();
  } catch (err) {
    if (err instanceof AccountError) {
      return renderAccount(c, { status: 400, error: err.message });
    }
    throw err;
  }
}

export function register(app: Hono<AppEnv>) {
  app.get("/settings/account", visitor, (c) => renderAccount(c));
}
