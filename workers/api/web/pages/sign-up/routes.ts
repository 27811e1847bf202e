import type { Context, Hono } from "hono";
import { recordSignup, TENANT_NAME_MAX, verifySignup } from "../../../accounts/account.js";
import { linkUrl, liveLink, mailLink } from "../../../accounts/links.js";
import { hashPassword, passwordProblem } from "../../../accounts/password.js";
import { userByEmail } from "../../../accounts/team.js";
import { emailProblem, normalizeEmail } from "../../../accounts/users.js";
import type { AppEnv } from "../../../context.js";
import { alreadyRegisteredMail, verificationMail } from "../../../mail/messages.js";
import { sendMail } from "../../../mail/smtp.js";
import { cardPage, LINK_DEAD, MAIL_FAILED } from "../../card.js";
import { readForm } from "../../form.js";
import { chargeMailIp } from "../../mail-throttle.js";
import { errorPage } from "../../respond.js";
import { csrfToken, csrfValid } from "../../session.js";
import { signInAs } from "../../sign-in-as.js";
import { checkMailPage, signUpPage, verifyPage } from "./view.js";

const VERIFY_PATH = "/sign-up/verify";

/** SIGNUP=open lets anyone create a studio; anything else (the default) keeps the pages closed. */
function signupOpen(c: Context<AppEnv>): boolean {
  return c.env.SIGNUP === "open";
}

function closed(c: Context<AppEnv>) {
  return errorPage(c, 404, "Sign-up is closed", "Ask a studio owner for an invitation.");
}

export function register(app: Hono<AppEnv>) {
  app.get("/sign-up", async (c) => {
    if (!signupOpen(c)) {
      return closed(c);
    }
    return c.html(signUpPage({ csrf: await csrfToken(c) }));
  });

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
        verificationMail(email, linkUrl(origin, VERIFY_PATH, link.token)),
      );
    }
    if (!sent) {
      c.header("Retry-After", "60");
      return again(503, MAIL_FAILED);
    }
    return c.html(checkMailPage(email));
  });

  app.get(VERIFY_PATH, async (c) => {
    const token = c.req.query("token") ?? "";
    const link = await liveLink(c.get("db"), "signup", token);
    if (!link) {
      return c.html(cardPage({ title: "Link not valid", error: LINK_DEAD }), 410);
    }
    return c.html(verifyPage({ csrf: await csrfToken(c), token, email: link.email }));
  });

  app.post(VERIFY_PATH, async (c) => {
    const form = await readForm(c);
    const db = c.get("db");
    if (!(await liveLink(db, "signup", form?.token ?? ""))) {
      return c.html(cardPage({ title: "Link not valid", error: LINK_DEAD }), 410);
    }
    if (!form || !(await csrfValid(c, form.csrf))) {
      return errorPage(c, 403, "Not confirmed", "This form has expired. Open the link from the mail again.");
    }
    const created = await verifySignup(db, form.token ?? "");
    if (!created) {
      return c.html(cardPage({ title: "Link not valid", error: LINK_DEAD }), 410);
    }
    await signInAs(c, created.userId);
    return c.redirect("/", 303);
  });
}
