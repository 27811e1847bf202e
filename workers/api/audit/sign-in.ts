import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { users } from "../../../schema/pg/schema.js";
import type { AppEnv } from "../context.js";
import { audit, auditUser, requestIp } from "./record.js";

/**
 * A refused sign-in (wrong password or unknown account: "password"; refused by the throttle:
 * "throttled"; a password sign-in of a member of a studio that requires single sign-on:
 * "sso_required"), counted rather than recorded one row each: one `user.sign_in_failed` row per
 * account, IP, reason and throttle window, in every studio of the account (of no studio for an unknown address),
 * whose count grows with each attempt. The password is never recorded.
 */
export async function auditSignInFailure<E extends AppEnv>(
  c: Context<E>,
  email: string,
  reason: "password" | "throttled" | "sso_required",
  windowSeconds: number,
): Promise<void> {
  const db = c.get("db");
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, email)).limit(1);
  const entry = {
    action: "user.sign_in_failed",
    outcome: reason === "password" ? "failure" : "denied",
    // Whoever typed the address: not known to be its owner.
    actor: { type: "user", id: null, label: email },
    target: { type: "user", id: user?.id ?? null, label: email },
    detail: { reason },
    aggregate: { key: `${email}|${requestIp(c) ?? ""}|${reason}`, windowSeconds },
  } as const;
  if (user) {
    await auditUser(c, user.id, entry, db);
  } else {
    await audit(c, { ...entry, tenantId: null, projectId: null }, db);
  }
}
