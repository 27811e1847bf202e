// The API Worker: /api/* (the Web API), the web pages, scheduled() alert planning, and the alert work,
// notification and export queues. It defines the RateLimiter, BatchClaims and KeyReplica Durable
// Objects, which the ingest Worker binds by script_name, and the AlertCooldown object only it uses.
import { projects } from "../../schema/pg/schema.js";
import { configOf } from "../shared/config.js";
import { planAlerts, planBuilds } from "./alerts/plan.js";
import { planSessionMedians } from "./analytics/session-medians.js";
import { newApp } from "./app.js";
import { purgeAuditLog } from "./audit/purge.js";
import { planPurge } from "./data-retention/purge.js";
import { httpDb } from "./db.js";
import type { FunnelPlanJob, SsoNoticeJob } from "./jobs.js";
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
    // Awaited rather than left to waitUntil: the run is the whole point of this invocation. Alerts are
    // only planned here (Postgres, then the jobs queue); the queue's consumers evaluate them. The build
    // verdicts (ClickHouse reads) are one more message on that queue.
    const now = new Date(controller.scheduledTime);
    await planAlerts(env, now);
    await planBuilds(env, now);
    // Audit entries past their retention (audit/purge.ts). A failure only delays the purge to the
    // next run; it is logged, not thrown, so it never stands in the alerts' way.
    await purgeAuditLog(httpDb(configOf(env))).catch((err: unknown) => {
      console.error("audit purge failed", err instanceof Error ? err.message : String(err));
    });
    // Telemetry past each studio's retention (retention/purge.ts): the first run of a UTC day plans its
    // deletion (Postgres, then the jobs queue); a failure gives the day back to the next run. Logged,
    // not thrown, as above.
    await planPurge(env, httpDb(configOf(env)), now).catch((err: unknown) => {
      console.error("retention purge failed", err instanceof Error ? err.message : String(err));
    });
    // Closed days' histograms of session medians (analytics/session-medians.ts): on the first run of each
    // UTC hour, every project in bounded plan messages on the jobs queue, whose consumers send one message
    // per project day due. Logged, not thrown, as above: reads use the days live meanwhile.
    await planSessionMedians(
      env,
      async () => (await httpDb(configOf(env)).select({ id: projects.id }).from(projects)).map((p) => p.id),
      now,
    ).catch((err: unknown) => {
      console.error("session medians plan failed", err instanceof Error ? err.message : String(err));
    });
    // Owners of single sign-on domains that must be proven are told once (sso/notice.ts): a job on the
    // jobs queue, so the mail goes out from a consumer, not from this invocation.
    const notice: SsoNoticeJob = { v: 1, kind: "sso-notice", runAt: now.getTime() };
    await env.JOBS_QUEUE.send(notice, { contentType: "json" }).catch((err: unknown) => {
      console.error("sso domain notice not sent", err instanceof Error ? err.message : String(err));
    });
    // Funnels' anchor hours that closed (analytics/funnel-anchors.ts): the first run of each hour sends the
    // plan, whose consumer fans out one message per definition read lately.
    if (now.getUTCMinutes() < 5) {
      const plan: FunnelPlanJob = { v: 1, kind: "funnel-plan", runAt: now.getTime() };
      await env.JOBS_QUEUE.send(plan, { contentType: "json" }).catch((err: unknown) => {
        console.error("funnel anchors plan not sent", err instanceof Error ? err.message : String(err));
      });
    }
  },
} satisfies ExportedHandler<Env, unknown>;
