// "Last used" of keys and OAuth grants without a write per request: the lookup that authenticates
// already reads the stored value, and only when it is older than this (or unset) is an UPDATE sent,
// after the response (waitUntil), conditional on the row still being that old. So a key busy on many
// isolates at once is written about once per window; the value shown is accurate to this window.
// Dependency-free, so the ingest Worker (plain SQL) and the API Worker (drizzle) share one rule.
export const LAST_USED_RESOLUTION_MS = 5 * 60 * 1000;

export function lastUsedIsStale(lastUsedAt: Date | null, now = Date.now()): boolean {
  return lastUsedAt === null || now - lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS;
}
