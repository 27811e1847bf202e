// The ingest Worker: POST /v1/events and POST /api/v1/events, and the events queue with its dead-letter
// queue. It is the hot path, so its bundle carries no framework, ORM or schema library
// (scripts/build-check.ts fails the build if one appears).
import { ApiError, problemResponse } from "../shared/errors.js";
import { handleIngest } from "./handler.js";
import { dispatchIngestQueue } from "./queues.js";
import { HEALTH_PATH, isIngestPath } from "./routes.js";

/**
 * GET /health on the ingest host: liveness, public by design. From the isolate alone: no dependency is
 * asked, no key is read, nothing about a studio is said (the operator's readiness view is the API
 * Worker's GET /api/operator/health).
 */
function health(): Response {
  return new Response(JSON.stringify({ success: true, data: { status: "ok" } }), {
    status: 200,
    headers: {
      "Content-Type": "application/json",
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}

export default {
  fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    if (isIngestPath(pathname)) {
      return handleIngest(request, env, ctx);
    }
    if (pathname === HEALTH_PATH && (request.method === "GET" || request.method === "HEAD")) {
      return Promise.resolve(health());
    }
    // The ingest host serves nothing else; a problem rather than a redirect, which SDKs refuse.
    return Promise.resolve(
      problemResponse(new ApiError("NOT_FOUND", "No such endpoint; events are posted to /v1/events.")),
    );
  },
  queue: dispatchIngestQueue,
} satisfies ExportedHandler<Env, unknown>;
