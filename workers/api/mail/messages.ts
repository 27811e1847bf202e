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
