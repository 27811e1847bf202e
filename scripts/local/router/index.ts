// Local only: plays the part Cloudflare's routes play in production, in front of the two Workers that
// `npm run dev` runs in one workerd. /v1/events and /api/v1/events go to the ingest Worker, everything
// else to the API Worker; Cron Triggers (here: `/__scheduled` from `wrangler dev --test-scheduled`) go to
// the API Worker's scheduled(). It adds nothing and changes nothing on the way.
import { isIngestPath } from "../../../workers/ingest/routes.js";

/** A service binding that can also deliver a scheduled event (workerd's service_binding_extra_handlers). */
type ServiceWithScheduled = Fetcher & {
  scheduled(options: { scheduledTime?: Date; cron?: string }): Promise<{ outcome: string; noRetry: boolean }>;
};

type RouterEnv = { API: ServiceWithScheduled; INGEST: Fetcher };

export default {
  fetch(request, env) {
    const target = isIngestPath(new URL(request.url).pathname) ? env.INGEST : env.API;
    return target.fetch(request);
  },
  async scheduled(controller, env) {
    const result = await env.API.scheduled({
      scheduledTime: new Date(controller.scheduledTime),
      cron: controller.cron,
    });
    if (result.outcome !== "ok") {
      throw new Error(`the API Worker's scheduled() ended with ${result.outcome}`);
    }
  },
} satisfies ExportedHandler<RouterEnv>;
