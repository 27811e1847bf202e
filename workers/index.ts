import { evaluateAlerts } from "./alerts/evaluate.js";
import { newApp } from "./api/app.js";
import { parkDeadLetters } from "./consumer/dead-letters.js";
import { consumeEvents } from "./consumer/events.js";
import { deliverNotifications } from "./consumer/notifications.js";
import { consumeExports } from "./exports/consumer.js";
import { handleIngest } from "./ingest/handler.js";

export { AlertCooldown } from "../durable-objects/alert-cooldown.js";
export { RateLimiter } from "../durable-objects/rate-limiter.js";

const app = newApp();
const INGEST_PATH = "/api/v1/events";
const NOTIFICATIONS_QUEUE = "telemetry-notifications";
/** wrangler.toml's name for the exports queue. */
const EXPORTS_QUEUE = "telemetry-exports";

export default {
  fetch(request, env, ctx) {
    // Ingest is the hot path and answers in its own format: it bypasses the Hono app entirely.
    if (new URL(request.url).pathname === INGEST_PATH) {
      return handleIngest(request, env, ctx);
    }
    return app.fetch(request, env, ctx);
  },
  async queue(batch, env) {
    if (batch.queue === NOTIFICATIONS_QUEUE) {
      await deliverNotifications(batch, env);
    } else if (batch.queue.endsWith("-dlq")) {
      await parkDeadLetters(batch, env);
    } else if (batch.queue === EXPORTS_QUEUE) {
      await consumeExports(batch, env);
    } else {
      await consumeEvents(batch, env);
    }
  },
  async scheduled(controller, env) {
    // Awaited rather than left to waitUntil: the run is the whole point of this invocation.
    await evaluateAlerts(env, new Date(controller.scheduledTime));
  },
} satisfies ExportedHandler<Env, unknown>;
