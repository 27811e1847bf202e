/**
 * The paths the ingest Worker answers. In production Cloudflare routes send them here: the whole
 * ingest host (the SDKs' default, path /v1/events) and one more specific route on the app host
 * (workers/ingest/wrangler.toml). Locally the dev router and the test entry route by this list.
 */
export const INGEST_PATHS: readonly string[] = ["/v1/events", "/api/v1/events"];

export function isIngestPath(pathname: string): boolean {
  return INGEST_PATHS.includes(pathname);
}

/**
 * Liveness on the ingest host (the whole host routes here in production; on the app host /api/health is
 * the API Worker's).
 */
export const HEALTH_PATH = "/health";
