import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../context.js";
import { currentUser } from "../credentials/session-cookie.js";
import type { SessionUser } from "../credentials/sessions.js";
import { errorBody, layout, type NavUser } from "./layout.js";
import { csrfToken, signInRedirect } from "./session.js";

export type Visitor = { user: SessionUser; nav: NavUser; csrf: string };

/** The signed-in visitor with their navigation, or the 307 to the sign-in page. */
export async function signedIn<E extends AppEnv>(c: Context<E>): Promise<Visitor | Response> {
  const user = await currentUser(c);
  if (!user) {
    return signInRedirect(c);
  }
  const csrf = await csrfToken(c);
  return { user, csrf, nav: { email: user.email, csrf } };
}

export async function errorPage<E extends AppEnv>(
  c: Context<E>,
  status: ContentfulStatusCode,
  title: string,
  message: string,
): Promise<Response> {
  const user = await currentUser(c);
  const nav = user ? { email: user.email, csrf: await csrfToken(c) } : null;
  return c.html(layout({ title, user: nav, body: errorBody(title, message) }), status);
}

export const FORM_EXPIRED =
  "This form has expired or did not come from this site. Reload the page and try again.";
