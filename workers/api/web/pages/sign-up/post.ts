import type { Hono } from "hono";
import { recordSignup, TENANT_NAME_MAX } from "../../../accounts/account.js";
import { linkUrl, mailLink } from "../../../accounts/links.js";
import { hashPassword, passwordProblem } from "../../../accounts/password.js";
import { userByEmail } from "../../../accounts/team.js";
import { emailProblem, normalizeEmail } from "../../../accounts/users.js";
import type { AppEnv } from "../../../context.js";
import { alreadyRegisteredMail, verificationMail } from "../../../mail/messages.js";
import { sendMail } from "../../../mail/smtp.js";
import { MAIL_FAILED } from "../../card.js";
import { readForm } from "../../form.js";
import { chargeMailIp } from "../../mail-throttle.js";
import { csrfToken, csrfValid } from "../../session.js";
import { closed, signupOpen } from "./get.js";
import { checkMailPage, signUpPage } from "./view.js";

export function register(app: Hono<AppEnv>) {
  // Whether or not the email has an account, the answer is the same page and the same work (a password
  // derivation and one mail): an account that exists gets a mail saying so instead of a link.
  app.post("/sign-up", async (c) => {
    if (!signupOpen(c)) {
      return closed(c);
    }
    const form = await readForm(c);
    const email = normalizeEmail((form?.email ?? "").slice(0, 320));
    const tenantName = (form?.studio ?? "").trim();
    const again = async (status: 400 | 403 | 429 | 503, error: string) =>
      c.html(signUpPage({ csrf: await csrfToken(c), email, tenantName, error }), status);
    if (!form || !(await csrfValid(c, form.csrf))) {
      return again(403, "This form has expired. Send it again.");
    }
    const password = form.password ?? "";
    const problem =
      (emailProblem(email) && `Email ${emailProblem(email)}.`) ||
      (passwordProblem(password) && `Password ${passwordProblem(password)}.`) ||
      (tenantName.length > TENANT_NAME_MAX ? `Studio name: at most ${TENANT_NAME_MAX} characters.` : null);
    if (problem) {
      return again(400, problem);
    }
    const throttle = await chargeMailIp(c);
    if (!throttle.allowed) {
      c.header("Retry-After", String(throttle.retryAfter));
      return again(429, "Too many sign-ups from your network. Wait a while and try again.");
    }
    const db = c.get("db");
    const origin = new URL(c.req.url).origin;
    const passwordHash = hashPassword(password);
    let sent: boolean;
    if (await userByEmail(db, email)) {
      sent = (
        await sendMail(c.env, alreadyRegisteredMail(email, `${origin}/sign-in`, `${origin}/password-reset`))
      ).sent;
    } else {
      const link = await recordSignup(db, { email, passwordHash, tenantName });
      sent = await mailLink(
        c.env,
        db,
        link.id,
        verificationMail(email, linkUrl(origin, "/sign-up/verify", link.token)),
      );
    }
    if (!sent) {
      c.header("Retry-After", "60");
      return again(503, MAIL_FAILED);
    }
    return c.html(checkMailPage(email));
  });
}
