// The API Worker: /api/* (the Web API), the web pages, scheduled() alert evaluation, and the
// notification and export queues. It defines the RateLimiter, BatchClaims and KeyReplica Durable
// Objects, which the ingest Worker binds by script_name, and the AlertCooldown object only it uses.
import { evaluateAlerts } from "./alerts/evaluate.js";
import { judgeBuilds } from "./analytics/verdicts.js";
import { newApp } from "./app.js";
import { dispatchApiQueue } from "./queues.js";

export { AlertCooldown } from "../../durable-objects/alert-cooldown.js";
export { BatchClaims } from "../../durable-objects/batch-claims.js";
export { KeyReplica } from "../../durable-objects/key-replica.js";
export { RateLimiter } from "../../durable-objects/rate-limiter.js";

const app = newApp();

export default {
  fetch(request, env, ctx) {
    return app.fetch(request, env, ctx);
  },
  queue: dispatchApiQueue,
  async scheduled(controller, env) {
    // Awaited rather than left to waitUntil: the run is the whole point of this invocation.
    const now = new Date(controller.scheduledTime);
    await evaluateAlerts(env, now);
    await judgeBuilds(env, now);
  },
} satisfies ExportedHandler<Env, unknown>;
