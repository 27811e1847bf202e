import type { Context, Hono } from "hono";
import { html } from "hono/html";
import { announceChange } from "../../../../shared/credentials/cache.js";
import { completeReset } from "../../../accounts/account.js";
import { createLink, linkUrl, liveLink, mailLink } from "../../../accounts/links.js";
import { userByEmail } from "../../../accounts/team.js";
import { AccountError, emailProblem, normalizeEmail } from "../../../accounts/users.js";
import type { AppEnv } from "../../../context.js";
import { noAccountMail, resetMail } from "../../../mail/messages.js";
import { sendMail } from "../../../mail/smtp.js";
import { cardPage, LINK_DEAD, MAIL_FAILED } from "../../card.js";
import { readForm } from "../../form.js";
import type { Html } from "../../layout.js";
import { chargeMailIp } from "../../mail-throttle.js";
import { csrfToken, csrfValid } from "../../session.js";

export const RESET_PATH = "/password-reset";
const CONFIRM_PATH = "/password-reset/confirm";

function requestPage(opts: { csrf: string; email?: string; error?: string }): Html {
  return cardPage({
    title: "Reset your password",
    error: opts.error,
    body: html`<p>Enter your account's email: we send a link to set a new password.</p>
      <form method="post" action="${RESET_PATH}">
        <input type="hidden" name="csrf" value="${opts.csrf}" />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${opts.email ?? ""}" />
        <p><button type="submit">Send reset link</button></p>
      </form>`,
  });
}

function confirmPage(opts: { csrf: string; token: string; email: string; error?: string }): Html {
  return cardPage({
    title: "Set a new password",
    error: opts.error,
    body: html`<p>For <strong>${opts.email}</strong>. Setting it signs you out everywhere and disconnects your connected apps.</p>
      <form method="post" action="${CONFIRM_PATH}">
        <input type="hidden" name="csrf" value="${opts.csrf}" />
        <input type="hidden" name="token" value="${opts.token}" />
        <label for="password">New password</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="1024" />
        <p><button type="submit">Set password</button></p>
      </form>`,
  });
}

const dead = (c: Context<AppEnv>) => c.html(cardPage({ title: "Link not valid", error: LINK_DEAD }), 410);

export function register(app: Hono<AppEnv>) {
  app.get(RESET_PATH, async (c) => c.html(requestPage({ csrf: await csrfToken(c) })));

  // The same answer and the same work for every email: a known one gets a reset link, an unknown one a
  // mail saying it has no account. Either way one mail is sent and the page names the address it went to.
  app.post(RESET_PATH, async (c) => {
    const form = await readForm(c);
    const email = normalizeEmail((form?.email ?? "").slice(0, 320));
    const again = async (status: 400 | 403 | 429 | 503, error: string) =>
      c.html(requestPage({ csrf: await csrfToken(c), email, error }), status);
    if (!form || !(await csrfValid(c, form.csrf))) {
      return again(403, "This form has expired. Send it again.");
    }
    const problem = emailProblem(email);
    if (problem) {
      return again(400, `Email ${problem}.`);
    }
    const throttle = await chargeMailIp(c);
    if (!throttle.allowed) {
      c.header("Retry-After", String(throttle.retryAfter));
      return again(429, "Too many requests from your network. Wait a while and try again.");
    }
    const db = c.get("db");
    const origin = new URL(c.req.url).origin;
    const user = await userByEmail(db, email);
    let sent: boolean;
    if (user) {
      const link = await createLink(db, { purpose: "reset", email, userId: user.id });
      sent = await mailLink(c.env, db, link.id, resetMail(email, linkUrl(origin, CONFIRM_PATH, link.token)));
    } else {
      const signUp = c.env.SIGNUP === "open" ? `${origin}/sign-up` : null;
      sent = (await sendMail(c.env, noAccountMail(email, signUp))).sent;
    }
    if (!sent) {
      c.header("Retry-After", "60");
      return again(503, MAIL_FAILED);
    }
    return c.html(
      cardPage({
        title: "Check your email",
        notice: `We sent a mail to ${email} with what to do next. A reset link works once, for 1 hour.`,
      }),
    );
  });

  app.get(CONFIRM_PATH, async (c) => {
    const token = c.req.query("token") ?? "";
    const link = await liveLink(c.get("db"), "reset", token);
    if (!link) {
      return dead(c);
    }
    return c.html(confirmPage({ csrf: await csrfToken(c), token, email: link.email }));
  });

  app.post(CONFIRM_PATH, async (c) => {
    const form = await readForm(c);
    const token = form?.token ?? "";
    const db = c.get("db");
    const link = await liveLink(db, "reset", token);
    if (!link) {
      return dead(c);
    }
    if (!form || !(await csrfValid(c, form.csrf))) {
      return c.html(
        confirmPage({
          csrf: await csrfToken(c),
          token,
          email: link.email,
          error: "This form has expired. Send it again.",
        }),
        403,
      );
    }
    let tenants: string[] | null;
    try {
      tenants = await completeReset(db, token, form.password ?? "");
    } catch (err) {
      if (err instanceof AccountError) {
        return c.html(
          confirmPage({ csrf: await csrfToken(c), token, email: link.email, error: err.message }),
          400,
        );
      }
      throw err;
    }
    if (!tenants) {
      return dead(c);
    }
    // Before answering: the user's revoked tokens are refused from the next request, on every isolate.
    for (const tenantId of tenants) {
      await announceChange(c.env, { tenantId });
    }
    return c.redirect("/sign-in?done=reset", 303);
  });
}
