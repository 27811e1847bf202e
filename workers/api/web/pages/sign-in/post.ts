import type { Hono } from "hono";
import { ApiError } from "../../../../shared/errors.js";
import { clientIp } from "../../../../shared/rate-limit.js";
import { chargeSignIn, SIGN_IN_LIMITS } from "../../../accounts/throttle.js";
import { checkPassword, normalizeEmail } from "../../../accounts/users.js";
import { auditUser } from "../../../audit/record.js";
import { auditSignInFailure } from "../../../audit/sign-in.js";
import type { AppEnv } from "../../../context.js";
import { chargeAnonymous } from "../../../credentials/gate.js";
import { connectionForEmail } from "../../../sso/config.js";
import { ssoRequiredForEmail, ssoRequiredMessage } from "../../../sso/enforcement.js";
import { startFlow } from "../../../sso/flow.js";
import { readForm } from "../../form.js";
import { csrfToken, csrfValid, safeReturnTo } from "../../session.js";
import { signInAs } from "../../sign-in-as.js";
import { SIGN_IN_FAILED, signInPage } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.post("/sign-in", async (c) => {
    const form = await readForm(c);
    const returnTo = safeReturnTo(form?.returnTo);
    const email = (form?.email ?? "").slice(0, 320);
    const again = async (status: 400 | 401 | 403 | 429 | 503, error: string) =>
      c.html(signInPage({ csrf: await csrfToken(c), returnTo, email, error }), status);
    if (!form || !(await csrfValid(c, form.csrf))) {
      return again(403, "This form has expired. Sign in again.");
    }
    const password = form.password ?? "";
    // Single sign-on: an email whose domain a studio has claimed goes to that studio's provider when
    // no password is given or "Continue with single sign-on" was pressed (docs/accounts.md).
    const wantsSso = form.sso === "1";
    if (email.trim() && (wantsSso || !password)) {
      const connection = await connectionForEmail(c.get("db"), normalizeEmail(email));
      if (connection) {
        // Each start records a flow and calls the provider: counted per client IP like any anonymous request.
        const charged = await chargeAnonymous(c.env, c.req.raw.headers);
        if (!charged.allowed) {
          c.header("Retry-After", String(charged.retryAfter));
          return again(429, "Too many sign-in attempts from this address. Wait a few minutes.");
        }
        try {
          const target = await startFlow(c, connection, "sign_in", {
            email: normalizeEmail(email),
            returnTo,
          });
          return c.redirect(target, 303);
        } catch (err) {
          if (err instanceof ApiError && err.status === 503) {
            // The studio's provider cannot be reached: a retryable 503, nothing recorded.
            c.header("Retry-After", String(err.extras.retryAfter ?? 5));
            return again(
              503,
              `Your studio's identity provider could not be reached just now. Try again. (${err.message})`,
            );
          }
          throw err;
        }
      }
      if (wantsSso) {
        return again(
          400,
          "Single sign-on is not set up for this email's domain. Sign in with your password.",
        );
      }
    }
    if (!email.trim() || !password) {
      return again(400, "Enter your email and password.");
    }
    const charge = await chargeSignIn(c.env, clientIp(c.req.raw.headers), email);
    if (!charge.allowed) {
      c.header("Retry-After", String(charge.retryAfter));
      await auditSignInFailure(c, normalizeEmail(email), "throttled", SIGN_IN_LIMITS.windowSeconds);
      return again(429, SIGN_IN_FAILED);
    }
    if (charge.delayMs > 0) {
      // The account is under attack from many addresses: slowed, never refused (throttle.ts).
      await scheduler.wait(charge.delayMs);
    }
    // A member of a studio that requires single sign-on (not its break-glass owner) never signs in with a
    // password: refused before the password is even checked (docs/accounts.md, "Requiring single sign-on").
    const required = await ssoRequiredForEmail(c.get("db"), normalizeEmail(email));
    if (required.requirements.length > 0) {
      await auditSignInFailure(c, normalizeEmail(email), "sso_required", SIGN_IN_LIMITS.windowSeconds);
      return again(403, ssoRequiredMessage(required.requirements));
    }
    const user = await checkPassword(c.get("db"), email, password.slice(0, 1024));
    if (!user) {
      await auditSignInFailure(c, normalizeEmail(email), "password", SIGN_IN_LIMITS.windowSeconds);
      return again(401, SIGN_IN_FAILED);
    }
    await charge.refund();
    await signInAs(c, user.id);
    await auditUser(c, user.id, {
      action: "user.signed_in",
      actor: { type: "user", id: user.id, label: user.email, userId: user.id },
      target: { type: "user", id: user.id, label: user.email },
    });
    return c.redirect(returnTo, 303);
  });
}
