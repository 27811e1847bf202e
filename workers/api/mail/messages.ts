import type { MembershipRole } from "../../../schema/pg/schema.js";
import type { Mail } from "./smtp.js";

// The mails the service sends: plain text, one link each, saying how long it works and what to do if
// the mail was not expected.

export function invitationMail(to: string, tenantName: string, role: MembershipRole, link: string): Mail {
  return {
    to,
    subject: `You are invited to ${tenantName} on Game Telemetry Analytics`,
    text: `You are invited to join the studio "${tenantName}" as ${role === "owner" ? "an owner" : "a member"}.

Accept the invitation (the link works once, for 7 days):
${link}

If you did not expect this invitation, ignore this mail.
`,
  };
}

export function verificationMail(to: string, link: string): Mail {
  return {
    to,
    subject: "Confirm your email for Game Telemetry Analytics",
    text: `Confirm your email to finish signing up (the link works once, for 24 hours):
${link}

If you did not sign up, ignore this mail: no account is created without it.
`,
  };
}

/** Sent when someone signs up with an email that already has an account: the same mail work, no leak. */
export function alreadyRegisteredMail(to: string, signIn: string, reset: string): Mail {
  return {
    to,
    subject: "Signing up for Game Telemetry Analytics",
    text: `Someone tried to sign up with this email, which already has an account.

Sign in: ${signIn}
Forgot your password? ${reset}

If it was not you, ignore this mail: nothing changed.
`,
  };
}

export function resetMail(to: string, link: string): Mail {
  return {
    to,
    subject: "Reset your Game Telemetry Analytics password",
    text: `Set a new password (the link works once, for 1 hour):
${link}

Setting it signs you out everywhere and disconnects your connected apps.
If you did not ask for this, ignore this mail: your password stays as it is.
`,
  };
}

/** Sent when a reset is asked for an email without an account: the same mail work, no leak. */
export function noAccountMail(to: string, signUp: string | null): Mail {
  return {
    to,
    subject: "Reset your Game Telemetry Analytics password",
    text: `Someone asked to reset the password of this email, but it has no account.
${signUp ? `\nSign up: ${signUp}\n` : ""}
If it was not you, ignore this mail.
`,
  };
}

/** A reset asked for an account whose studio requires single sign-on: no link, where to sign in instead. */
export function ssoRequiredResetMail(to: string, studios: string, signIn: string): Mail {
  return {
    to,
    subject: "Reset your Game Telemetry Analytics password",
    text: `Someone asked to reset the password of this account. ${studios} requires single sign-on, so its members do not sign in with a password and it cannot be reset.

Sign in with your organization's account instead: ${signIn}

If it was not you, ignore this mail.
`,
  };
}

/**
 * Tells the account's owner their password was changed (Account page) or reset (a reset link): when,
 * from which address and browser, and what to do if it was not them. No secret and no link that grants
 * anything: only the address of the page where anyone can ask for a reset.
 */
export function passwordChangedMail(
  to: string,
  how: "changed" | "reset",
  at: { when: Date; ip: string | null; browser: string; resetPage: string },
): Mail {
  const when = `${at.when.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  const ended =
    how === "changed"
      ? "Your other sessions were signed out."
      : "Every session was signed out and your connected apps were disconnected.";
  return {
    to,
    subject: `Your Game Telemetry Analytics password was ${how}`,
    text: `The password of this account was ${how} on ${when}, from ${at.ip ?? "an unknown address"} (${at.browser}).
${ended}

If this was you, there is nothing to do.
If it was not you, ask for a password reset at once (${at.resetPage}) and tell your studio's owner.
`,
  };
}
