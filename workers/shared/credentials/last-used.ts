import { configOf } from "../config.js";
import { httpSql } from "../pg.js";
import type { CredentialPrincipal } from "./principal.js";

// "Last used" of keys and OAuth grants without a write per request: the lookup that authenticates
// already reads the stored value, and only when it is older than this (or unset) is an UPDATE sent,
// after the response (waitUntil), conditional on the row still being that old. So a key busy on many
// isolates at once is written about once per window; the value shown is accurate to this window.
// Plain SQL, so the ingest Worker (no ORM in its bundle) and the API Worker share this one writer.
export const LAST_USED_RESOLUTION_MS = 5 * 60 * 1000;

export function lastUsedIsStale(lastUsedAt: Date | null, now = Date.now()): boolean {
  return lastUsedAt === null || now - lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS;
}

const NOTE_KEY_USE = `
  UPDATE api_keys SET last_used_at = $2
  WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)`;
const NOTE_GRANT_USE = `
  UPDATE oauth_grants SET last_used_at = $2
  WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)`;

/**
 * Records a use of the principal's key or grant in the background when the stored time is stale: one
 * statement over the HTTP query path, so nothing outlives the request but that fetch.
 */
export function noteUse(
  env: object,
  ctx: { waitUntil(promise: Promise<unknown>): void },
  principal: CredentialPrincipal,
  now = new Date(),
): void {
  const id = principal.kind === "key" ? principal.keyId : principal.grantId;
  if (id === null || !lastUsedIsStale(principal.lastUsedAt, now.getTime())) {
    return;
  }
  const cutoff = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
  ctx.waitUntil(
    httpSql(configOf(env))
      .query(principal.kind === "key" ? NOTE_KEY_USE : NOTE_GRANT_USE, [id, now, cutoff])
      .catch((err) => console.error("last-used update failed", err instanceof Error ? err.message : err)),
  );
}
