import type { Context } from "hono";
import { buckets, clientIp, limiter } from "../../shared/rate-limit.js";
import type { AppEnv } from "../context.js";

/** Forms that send a mail to any address (sign-up, password reset), per client IP per hour. */
export const MAIL_FORMS_PER_IP_PER_HOUR = 20;

export function chargeMailIp(c: Context<AppEnv>) {
  return limiter(c.env, buckets.mailIp(clientIp(c.req.raw.headers))).hit(MAIL_FORMS_PER_IP_PER_HOUR, 3600);
}
