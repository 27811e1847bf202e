// The ingest Worker: POST /v1/events and POST /api/v1/events, and the events queue with its dead-letter
// queue. It is the hot path, so its bundle carries no framework, ORM or schema library
// (scripts/build-check.ts fails the build if one appears).
import { ApiError, problemResponse } from "../shared/errors.js";
import { handleIngest } from "./handler.js";
import { dispatchIngestQueue } from "./queues.js";
import { isIngestPath } from "./routes.js";

export default {
  fetch(request, env, ctx) {
    if (isIngestPath(new URL(request.url).pathname)) {
      return handleIngest(request, env, ctx);
    }
    // The ingest host serves nothing else; a problem rather than a redirect, which SDKs refuse.
    return Promise.resolve(
      problemResponse(new ApiError("NOT_FOUND", "No such endpoint; events are posted to /v1/events.")),
    );
  },
  queue: dispatchIngestQueue,
} satisfies ExportedHandler<Env, unknown>;
