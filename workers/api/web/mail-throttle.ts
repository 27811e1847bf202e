import type { Context } from "hono";
import { buckets, clientIp, limiter } from "../../shared/rate-limit.js";
import type { AppEnv } from "../context.js";

/** Forms that send a mail to any address (sign-up, password reset), per client IP per hour. */
export const MAIL_FORMS_PER_IP_PER_HOUR = 20;

export function chargeMailIp<E extends AppEnv>(c: Context<E>) {
  return limiter(c.env, buckets.mailIp(clientIp(c.req.raw.headers))).chargeWindow(
    MAIL_FORMS_PER_IP_PER_HOUR,
    3600,
  );
}

/** Invitation mails (new and resent) per studio per hour: a studio cannot be used to flood inboxes. */
export const INVITATIONS_PER_TENANT_PER_HOUR = 50;

export function chargeTenantInvitation<E extends AppEnv>(c: Context<E>, tenantId: string) {
  return limiter(c.env, buckets.mailTenant(tenantId)).chargeWindow(INVITATIONS_PER_TENANT_PER_HOUR, 3600);
}
