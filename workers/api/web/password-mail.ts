import type { Context } from "hono";
import { clientIp } from "../../shared/rate-limit.js";
import type { AppEnv } from "../context.js";
import { passwordChangedMail } from "../mail/messages.js";
import { sendMail } from "../mail/smtp.js";
import { describeUserAgent } from "./user-agent.js";

/**
 * After a committed password change or reset, mails the account saying so (no secret, no link that
 * grants access). Sent after the response: the change stands whether or not the mail goes out, and a
 * failure is logged by sendMail (its reason only).
 */
export function mailPasswordChanged<E extends AppEnv>(
  c: Context<E>,
  to: string,
  how: "changed" | "reset",
): void {
  const ip = clientIp(c.req.raw.headers);
  const mail = passwordChangedMail(to, how, {
    when: new Date(c.get("now")),
    ip: ip === "unknown" ? null : ip,
    browser: describeUserAgent(c.req.header("user-agent") ?? null),
    resetPage: `${new URL(c.req.url).origin}/password-reset`,
  });
  c.executionCtx.waitUntil(sendMail(c.env, mail));
}
