import type { Context, Hono } from "hono";
import { announceChange } from "../../../../shared/credentials/cache.js";
import { checkNotLastOwner, deleteAccount, hasPassword } from "../../../accounts/account.js";
import { AccountError } from "../../../accounts/users.js";
import { auditUser } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { clearSessionCookie } from "../../../credentials/session-cookie.js";
import { startFlow } from "../../../sso/flow.js";
import { reauthConnectionOf } from "../../../sso/reauth.js";
import { csrfForm, type PageEnv, visitor } from "../../access.js";
import { attempt } from "./get.js";

/** Deletes the signed-in person's account (the proof already checked), then signs the browser out. */
export async function completeDeletion<E extends AppEnv>(
  c: Context<E>,
  user: { userId: string; email: string },
  proof: Parameters<typeof deleteAccount>[2],
  detail: Record<string, string> = {},
): Promise<Response> {
  const tenants = await deleteAccount(c.get("db"), user.userId, proof, (tx) =>
    auditUser(
      c,
      user.userId,
      {
        action: "user.deleted",
        target: { type: "user", id: user.userId, label: user.email },
        ...(Object.keys(detail).length > 0 ? { detail } : {}),
      },
      tx,
    ),
  );
  for (const tenantId of tenants) {
    await announceChange(c.env, { tenantId });
  }
  clearSessionCookie(c);
  return c.redirect("/sign-in", 303);
}

/**
 * An account without a password (made by single sign-on) is confirmed by a fresh sign-in through the
 * studio's provider instead: the provider is asked to sign the person in again (prompt=login, and an
 * ID token at most 10 minutes old), and the callback deletes the account (pages/sso/callback.ts).
 */
async function confirmWithProvider(c: Context<PageEnv>): Promise<Response> {
  const { user } = c.get("visitor");
  await checkNotLastOwner(c.get("db"), user.userId);
  const connection = await reauthConnectionOf(c.get("db"), user.userId);
  if (!connection) {
    throw new AccountError(
      'Your account has no password and no studio\'s identity provider can confirm it is you: set a password with "Forgot your password?" on the sign-in page, then delete your account with it.',
    );
  }
  const target = await startFlow(c, connection, "delete_account", {
    userId: user.userId,
    email: user.email,
    returnTo: "/settings/account",
  });
  return c.redirect(target, 303);
}

export function register(app: Hono<AppEnv>) {
  app.post("/settings/account/delete", visitor, csrfForm("Account not deleted"), (c) =>
    attempt(c, async () => {
      const { user } = c.get("visitor");
      if (!(await hasPassword(c.get("db"), user.userId))) {
        return confirmWithProvider(c);
      }
      return completeDeletion(c, user, { password: (c.get("form").password ?? "").slice(0, 1024) });
    }),
  );
}
