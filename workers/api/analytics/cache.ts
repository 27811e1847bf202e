// Some analytics answers (builds, builds/compare, the project status KPIs) are cached for about a
// minute in the Workers Cache API. The key holds the project, its data version and every parameter,
// so no answer is ever shared across projects or queries, and none computed before a change to the
// stored data (an erasure bumps the version) is served after it; callers authenticate and check the
// project before they get here.

import { eq, sql } from "drizzle-orm";
import { projects } from "../../../schema/pg/schema.js";
import { announceChange } from "../../shared/credentials/cache.js";
import type { Db } from "../db.js";

const TTL_SECONDS = 60;
// A synthetic origin: cache keys must be URLs, and this one can never be fetched by a client.
const ORIGIN = "https://analytics-cache.invalid";

/** What a cache key needs of the project: its id and the version of its stored analytics data. */
export type CachedProject = { id: string; dataVersion: number };

export function cacheKey(
  kind: string,
  project: CachedProject,
  params: Record<string, string | number | undefined>,
) {
  const url = new URL(`${ORIGIN}/${kind}/${project.id}/v${project.dataVersion}`);
  for (const [k, v] of Object.entries(params).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (v !== undefined) {
      url.searchParams.set(k, String(v));
    }
  }
  return new Request(url.toString(), { method: "GET" });
}

/** Keeps a promise alive after the response is sent: the request's ExecutionContext.waitUntil. */
export type Defer = (promise: Promise<unknown>) => void;

// Stores of this isolate still under way, by key URL. A read of the same key waits for its store, so
// the request after a fresh=1 answer sees what that one computed, as when the store was awaited.
const storing = new Map<string, Promise<void>>();

/**
 * The cached value, or a freshly computed one that is then stored; `fresh` skips the lookup. The
 * store is left to `defer` (waitUntil) rather than awaited: writing the Cache API cost the fresh
 * answer several milliseconds that the client gained nothing from. `parse` checks a stored entry's
 * shape (the response schema does); one that fails, written by an older version, is recomputed.
 */
export async function cached<T>(
  key: Request,
  fresh: boolean,
  compute: () => Promise<T>,
  defer: Defer,
  parse: (stored: unknown) => T,
): Promise<T> {
  const cache = caches.default;
  if (!fresh) {
    await storing.get(key.url);
    const hit = await cache.match(key);
    const value = hit ? parseOrNull(parse, await hit.json()) : null;
    if (value !== null) {
      return value;
    }
  }
  const value = await compute();
  const stored = new Response(JSON.stringify(value), {
    headers: { "content-type": "application/json", "cache-control": `max-age=${TTL_SECONDS}` },
  });
  const store: Promise<void> = cache
    .put(key, stored)
    // A store that fails leaves the previous entry or none: the next read recomputes. The answer
    // already computed stands.
    .catch(() => {})
    .finally(() => {
      if (storing.get(key.url) === store) {
        storing.delete(key.url);
      }
    });
  storing.set(key.url, store);
  defer(store);
  return value;
}

function parseOrNull<T>(parse: (stored: unknown) => T, stored: unknown): T | null {
  try {
    return parse(stored);
  } catch {
    return null;
  }
}

/**
 * The project's stored analytics data changed (a player's events erased): bumps its data version, so
 * every cached answer computed before now (keyed by the old version, in every data center) is never
 * served again, and announces the change so every isolate reads the project's new version on its next
 * request instead of the one it holds.
 */
export async function dataChanged(db: Db, env: Env, project: { id: string; tenantId: string }) {
  await db
    .update(projects)
    .set({ dataVersion: sql`${projects.dataVersion} + 1` })
    .where(eq(projects.id, project.id));
  await announceChange(env, { tenantId: project.tenantId });
}
