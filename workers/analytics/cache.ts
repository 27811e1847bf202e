// The builds aggregation is cached for about a minute in the Workers Cache API. The key holds the
// project and every parameter, so no answer is ever shared across projects or queries; callers
// authenticate and check the project before they get here.

const TTL_SECONDS = 60;
// A synthetic origin: cache keys must be URLs, and this one can never be fetched by a client.
const ORIGIN = "https://analytics-cache.invalid";

export function cacheKey(
  kind: string,
  projectId: string,
  params: Record<string, string | number | undefined>,
) {
  const url = new URL(`${ORIGIN}/${kind}/${projectId}`);
  for (const [k, v] of Object.entries(params).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (v !== undefined) {
      url.searchParams.set(k, String(v));
    }
  }
  return new Request(url.toString(), { method: "GET" });
}

/** The cached value, or a freshly computed one that is then stored; `fresh` skips the lookup. */
export async function cached<T>(key: Request, fresh: boolean, compute: () => Promise<T>): Promise<T> {
  const cache = caches.default;
  if (!fresh) {
    const hit = await cache.match(key);
    if (hit) {
      return (await hit.json()) as T;
    }
  }
  const value = await compute();
  const stored = new Response(JSON.stringify(value), {
    headers: { "content-type": "application/json", "cache-control": `max-age=${TTL_SECONDS}` },
  });
  // Awaited rather than left to waitUntil: the next request must see what this one computed.
  await cache.put(key, stored);
  return value;
}
