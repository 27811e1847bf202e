import type { Hono } from "hono";
import { createLink, linkUrl, mailLink } from "../../../accounts/links.js";
import { userByEmail } from "../../../accounts/team.js";
import { emailProblem, normalizeEmail } from "../../../accounts/users.js";
import { auditResetRefused } from "../../../audit/sso-enforcement.js";
import type { AppEnv } from "../../../context.js";
import { noAccountMail, resetMail, ssoRequiredResetMail } from "../../../mail/messages.js";
import { sendMail } from "../../../mail/smtp.js";
import { ssoRequiredFor } from "../../../sso/enforcement.js";
import { cardPage, MAIL_FAILED } from "../../card.js";
import { readForm } from "../../form.js";
import { chargeMailIp } from "../../mail-throttle.js";
import { csrfToken, csrfValid } from "../../session.js";
import { requestPage } from "./view.js";

export function register(app: Hono<AppEnv>) {
  // The same answer and the same work for every email: a known one gets a reset link, an unknown one a
  // mail saying it has no account. Either way one mail is sent and the page names the address it went to.
  app.post("/password-reset", async (c) => {
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
    // A member of a studio that requires single sign-on gets no link: a mail saying where to sign in.
    const required = user ? await ssoRequiredFor(db, user.id) : [];
    if (user && required.length > 0) {
      await auditResetRefused(c, user.id, email);
      const studios = required.map((r) => r.tenantName).join(", ");
      sent = (await sendMail(c.env, ssoRequiredResetMail(email, studios, `${origin}/sign-in`))).sent;
    } else if (user) {
      const link = await createLink(db, { purpose: "reset", email, userId: user.id });
      sent = await mailLink(
        c.env,
        db,
        link.id,
        resetMail(email, linkUrl(origin, "/password-reset/confirm", link.token)),
      );
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
}
