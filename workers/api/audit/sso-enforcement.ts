import type { Context } from "hono";
import type { AppEnv } from "../context.js";
import type { Db } from "../db.js";
import type { EnforcementChange } from "../sso/enforcement.js";
import { audit, auditUser, requestIp } from "./record.js";

// Requiring single sign-on's entries (docs/accounts.md, "Requiring single sign-on", and "Audit log").

/** Refused reset requests are counted per address, IP and hour, not written one row each. */
const RESET_REFUSAL_WINDOW_SECONDS = 3600;

/**
 * A password reset refused because the account's studio requires single sign-on: `user.password_reset`,
 * `denied`, `detail.reason: sso_required`, in each of the person's studios. `how`: asked for a link
 * (counted per address, IP and hour) or tried a link issued before SSO was required.
 */
export async function auditResetRefused<E extends AppEnv>(
  c: Context<E>,
  userId: string,
  email: string,
  how: "request" | "link" = "request",
): Promise<void> {
  await auditUser(c, userId, {
    action: "user.password_reset",
    outcome: "denied",
    // Whoever typed the address or holds the link: not known to be its owner.
    actor: { type: "user", id: null, label: email },
    target: { type: "user", id: userId, label: email },
    detail: { reason: "sso_required", how },
    ...(how === "request"
      ? {
          aggregate: {
            key: `${email}|${requestIp(c) ?? ""}|sso_required`,
            windowSeconds: RESET_REFUSAL_WINDOW_SECONDS,
          },
        }
      : {}),
  });
}

/** An invitation refused because the studio requires single sign-on and the address is outside its domains. */
export async function auditInvitationRefused<E extends AppEnv>(
  c: Context<E>,
  tenantId: string,
  email: string,
  role: string,
): Promise<void> {
  await audit(c, {
    action: "invitation.sent",
    outcome: "denied",
    tenantId,
    target: { type: "invitation", id: null, label: email },
    detail: { role, reason: "sso_domain" },
  });
}

/** `sso.enforcement_changed`: require SSO on or off, the break-glass owner, what turning it on ended. */
export async function auditEnforcementChange<E extends AppEnv>(
  c: Context<E>,
  tenantId: string,
  change: EnforcementChange,
  db: Db,
): Promise<void> {
  await audit(
    c,
    {
      action: "sso.enforcement_changed",
      tenantId,
      projectId: null,
      target: { type: "sso_connection", id: change.after.id, label: change.after.issuer },
      detail: {
        requireSso: change.after.requireSso,
        wasRequired: change.before.requireSso,
        breakGlass: change.breakGlassEmail,
        sessionsEnded: change.sessionsEnded,
        invitationsRevoked: change.invitationsRevoked,
      },
    },
    db,
  );
}
