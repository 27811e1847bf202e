// The tests' main Worker: the API Worker, with Cloudflare's routes in front of it as production has
// them. /v1/events and /api/v1/events go to the ingest Worker, which runs beside it as its own Worker
// (built from workers/ingest/wrangler.toml, vitest.config.ts) and is reached by the INGEST service
// binding; everything else, and the API's queues and Cron Trigger, go to the API Worker itself. So
// SELF.fetch() reaches whichever Worker production would, with that Worker's own bindings.
import api from "../../workers/api/index.js";
import { isIngestPath } from "../../workers/ingest/routes.js";

export { AlertCooldown, BatchClaims, KeyReplica, RateLimiter } from "../../workers/api/index.js";

/** The API Worker's env plus the test-only binding to the ingest Worker. */
export type HostEnv = Env & { INGEST: Fetcher };

export default {
  fetch(request, env, ctx) {
    if (isIngestPath(new URL(request.url).pathname)) {
      return env.INGEST.fetch(request);
    }
    return api.fetch(request, env, ctx);
  },
  queue: api.queue,
  scheduled: api.scheduled,
} satisfies ExportedHandler<HostEnv, unknown>;
