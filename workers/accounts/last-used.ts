import { and, eq, isNull, lt, or } from "drizzle-orm";
import { apiKeys, oauthGrants } from "../../schema/pg/schema.js";
import type { Principal } from "../shared/auth.js";
import { configOf } from "../shared/config.js";
import { openDb } from "../shared/db.js";

import { LAST_USED_RESOLUTION_MS, lastUsedIsStale } from "../shared/last-used.js";

/**
 * Records a use of the principal's key or grant in the background when the stored time is stale. It
 * opens its own connection: the request's pool is closed as soon as the response is sent.
 */
export function noteUse(
  env: Env,
  ctx: { waitUntil(promise: Promise<unknown>): void },
  principal: Principal,
  now = new Date(),
): void {
  if (!lastUsedIsStale(principal.lastUsedAt, now.getTime())) {
    return;
  }
  if (principal.kind === "token" && principal.grantId === null) {
    return;
  }
  const cutoff = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
  const write = async () => {
    const { db, close } = openDb(configOf(env));
    try {
      if (principal.kind === "key") {
        await db
          .update(apiKeys)
          .set({ lastUsedAt: now })
          .where(
            and(
              eq(apiKeys.id, principal.keyId),
              or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, cutoff)),
            ),
          );
      } else if (principal.grantId !== null) {
        await db
          .update(oauthGrants)
          .set({ lastUsedAt: now })
          .where(
            and(
              eq(oauthGrants.id, principal.grantId),
              or(isNull(oauthGrants.lastUsedAt), lt(oauthGrants.lastUsedAt, cutoff)),
            ),
          );
      }
    } finally {
      await close();
    }
  };
  ctx.waitUntil(
    write().catch((err) =>
      console.error("last-used update failed", err instanceof Error ? err.message : err),
    ),
  );
}
