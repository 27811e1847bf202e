// Browser games post from their own origin (an itch.io page, a studio's site, a CDN), so ingest answers
// CORS for any origin. Safe because ingest is authorised only by the X-API-Key header, never by cookies:
// no credentials are allowed, and an ingest key can do nothing but send events.

/** On every ingest answer: any origin may read it, Retry-After included (the web SDK backs off by it). */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset",
};

/** The preflight of a POST with the SDK's headers, cached by the browser for a day. */
export function preflightResponse(): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...CORS_HEADERS,
      "access-control-allow-methods": "POST",
      "access-control-allow-headers": "Content-Type, Content-Encoding, X-API-Key, X-SDK-Version",
      "access-control-max-age": "86400",
    },
  });
}
