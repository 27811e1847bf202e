// The jobs queue's consumers (QUEUES.jobs): every job the cron plans, one JobMessage (jobs.ts) per
// message: alert pairs (one run's pairs of one project, plan.ts), build verdicts, a day's purge; and the
// jobs' dead-letter queue.

import { openClickHouse } from "../../shared/clickhouse.js";
import { configOf, localKnobsOf } from "../../shared/config.js";
import { QUEUES, queueRetryDelaySeconds } from "../../shared/queues.js";
import { planFunnelAnchors, runFunnelAnchorsJob } from "../analytics/funnel-anchors.js";
import { backfillNumbersPage } from "../analytics/numbers-backfill.js";
import { planSessionMedianDays, storeSessionMedianDay } from "../analytics/session-medians.js";
import { judgeBuilds } from "../analytics/verdicts.js";
import { deleteExpired, expireNumbers } from "../data-retention/purge.js";
import { openDb } from "../db.js";
import { type AlertPairsJob, JobMessage } from "../jobs.js";
import { noticeUnprovenDomains } from "../sso/notice.js";
import { evaluatePairs, InjectedFault, PairsFailed, recordError } from "./evaluate.js";

/**
 * The local knob alertFaultThrowAfter (LOCAL_KNOBS, workers/shared/config.ts): the pairs after which
 * this delivery throws; null on a retry, for a run before the knob's `fromRunAt`, and wherever the knob
 * is not set (every deployed Worker).
 */
export function faultOf(env: Env, message: { attempts: number; body: AlertPairsJob }): number | null {
  const fault = localKnobsOf(env).alertFaultThrowAfter;
  if (!fault || message.attempts > 1 || (fault.fromRunAt !== null && message.body.runAt < fault.fromRunAt)) {
    return null;
  }
  return fault.pairs;
}

/**
 * One idempotent job of the jobs queue (build judging, a purge): acknowledged when `job` resolves,
 * retried with the queue's backoff (then dead-lettered) when it throws.
 */
async function runJob(m: Message<unknown>, what: string, context: string, job: () => Promise<unknown>) {
  try {
    console.log(what, m.id, context, JSON.stringify(await job()));
    m.ack();
  } catch (err) {
    const cause = err instanceof Error ? err.message : String(err);
    console.error(`${what} failed, will retry`, m.id, context, `attempt ${m.attempts}`, cause);
    m.retry({ delaySeconds: queueRetryDelaySeconds(QUEUES.jobs, m.attempts) });
  }
}

/**
 * Runs each job of the batch on its own (concurrently), read through JobMessage (alert pairs sent before
 * jobs carried a kind read as alert pairs); an unreadable body is logged and dropped. Alert pairs
 * acknowledge when all are recorded, and are retried (then dead-lettered) when any failed; a retry
 * skips the pairs already recorded for its run.
 */
export async function consumeJobs(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (m) => {
      const read = JobMessage.safeParse(m.body);
      if (!read.success) {
        console.error("unreadable job message dropped", m.id, read.error.issues[0]?.message ?? "");
        m.ack();
        return;
      }
      const job = read.data;
      if (job.kind === "builds") {
        return runJob(m, "build verdicts", `run ${new Date(job.runAt).toISOString()}`, () =>
          judgeBuilds(env, new Date(job.runAt)),
        );
      }
      if (job.kind === "sso-notice") {
        return runJob(m, "sso domain notice", `run ${new Date(job.runAt).toISOString()}`, async () => {
          const { db, close } = openDb(configOf(env));
          try {
            await noticeUnprovenDomains(env, db);
          } finally {
            await close();
          }
        });
      }
      if (job.kind === "numbers-backfill") {
        // One page; the next is another message, sent once this one's numbers are written.
        return runJob(m, "numbers backfill", `project ${job.projectId}`, async () => {
          const page = await backfillNumbersPage(env, job.projectId);
          if (page.more) {
            await env.JOBS_QUEUE.send(job, { contentType: "json" });
          }
          return page;
        });
      }
      if (job.kind === "funnel-plan") {
        // The fan-out: one funnel-anchors message per definition read lately.
        return runJob(m, "funnel anchors plan", `run ${new Date(job.runAt).toISOString()}`, async () => ({
          definitions: await planFunnelAnchors(env, job.runAt),
        }));
      }
      if (job.kind === "funnel-anchors") {
        // At most a day of anchor hours; the rest is the same message again, sent once these are stored.
        return runJob(m, "funnel anchors", `project ${job.projectId}`, async () => {
          const outcome = await runFunnelAnchorsJob(env, job);
          if (outcome.more) {
            await env.JOBS_QUEUE.send(job, { contentType: "json" });
          }
          return outcome;
        });
      }
      if (job.kind === "session-medians-plan") {
        // The projects' days due (analytics/session-medians.ts), one message each.
        return runJob(m, "session medians plan", `${job.projectIds.length} project(s)`, () =>
          planSessionMedianDays(env, openClickHouse(configOf(env)), job),
        );
      }
      if (job.kind === "session-medians") {
        return runJob(m, "session medians", `project ${job.projectId} day ${job.day}`, async () => ({
          outcome: await storeSessionMedianDay(
            openClickHouse(configOf(env), 120_000),
            job.projectId,
            job.day,
            job.runAt,
          ),
        }));
      }
      if (job.kind === "purge") {
        // A day's purge of some projects (data-retention/purge.ts planPurge). A lightweight DELETE waits
        // for its mutation: minutes on a large table.
        // Then the players' and sessions' numbers whose events are all gone.
        return runJob(m, "retention purge", `${job.day}, ${job.horizons.length} project(s)`, async () => {
          const deleted = await deleteExpired(openClickHouse(configOf(env), 600_000), job.horizons);
          return { ...deleted, numbersExpired: await expireNumbers(env, job.horizons) };
        });
      }
      const body = job;
      try {
        const summary = await evaluatePairs(env, body.pairs, {
          runAt: body.runAt,
          throwAfterPairs: faultOf(env, { attempts: m.attempts, body }),
        });
        console.log("alert message", m.id, JSON.stringify(summary));
        m.ack();
      } catch (err) {
        const cause = err instanceof Error ? err.message : String(err);
        const last = m.attempts > QUEUES.jobs.maxRetries;
        console.error(
          last ? "alert message failed, dead-lettering" : "alert message failed, will retry",
          m.id,
          `run ${new Date(body.runAt).toISOString()}`,
          `project ${body.projectId}`,
          `attempt ${m.attempts}`,
          err instanceof PairsFailed
            ? JSON.stringify(err.pairs)
            : err instanceof InjectedFault
              ? "(injected)"
              : "",
          cause,
        );
        m.retry({ delaySeconds: queueRetryDelaySeconds(QUEUES.jobs, m.attempts) });
      }
    }),
  );
}

/**
 * The dead-letter queue: a message that failed every attempt. Its pairs record "error" for that run (the
 * rule list shows it; the last attempt's cause stays in the pair's error) and the ids are logged. No
 * replay: the next cron run plans every pair again, and replaying an old run would judge stale data.
 */
export async function consumeJobDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const { db, close } = openDb(configOf(env));
  try {
    for (const m of batch.messages) {
      const read = JobMessage.safeParse(m.body);
      if (!read.success) {
        console.error("unreadable dead-lettered job message dropped", m.id);
        m.ack();
        continue;
      }
      const job = read.data;
      if (job.kind === "builds") {
        // Nothing to mark: the next run judges the same builds again (they still have no verdict).
        console.error("build verdicts dead-lettered", m.id, `run ${new Date(job.runAt).toISOString()}`);
        m.ack();
        continue;
      }
      if (job.kind === "sso-notice") {
        // Nothing to mark: the domains are still due, and the next run's notice sends them.
        console.error("sso domain notice dead-lettered", m.id, `run ${new Date(job.runAt).toISOString()}`);
        m.ack();
        continue;
      }
      if (job.kind === "numbers-backfill") {
        // Nothing to mark: asking again resumes where it stopped (the rows still unnumbered).
        console.error("numbers backfill dead-lettered", m.id, `project ${job.projectId}`);
        m.ack();
        continue;
      }
      if (job.kind === "funnel-plan" || job.kind === "funnel-anchors") {
        // Nothing to mark: the hours stay live, and the next hourly plan sends the definitions again.
        console.error(
          "funnel anchors dead-lettered",
          m.id,
          job.kind,
          `run ${new Date(job.runAt).toISOString()}`,
        );
        m.ack();
        continue;
      }
      if (job.kind === "session-medians-plan" || job.kind === "session-medians") {
        // Nothing to mark: the next hour's plan finds the same days due (reads use them live meanwhile).
        console.error("session medians dead-lettered", m.id, JSON.stringify(job).slice(0, 200));
        m.ack();
        continue;
      }
      if (job.kind === "purge") {
        // The next day's purge deletes everything before the (later) horizons, these rows included.
        console.error("retention purge dead-lettered", m.id, job.day, `${job.horizons.length} project(s)`);
        m.ack();
        continue;
      }
      const body = job;
      try {
        for (const [ruleId, profileId] of body.pairs) {
          await recordError(
            db,
            ruleId,
            profileId,
            body.runAt,
            `evaluation failed on all ${QUEUES.jobs.maxRetries + 1} attempts (dead-lettered)`,
            true,
          ).catch((err: unknown) => {
            // A rule or profile deleted since: nothing to mark.
            if (!/foreign key/i.test(err instanceof Error ? err.message : String(err))) {
              throw err;
            }
          });
        }
        console.error(
          "alert message dead-lettered",
          m.id,
          `run ${new Date(body.runAt).toISOString()}`,
          `project ${body.projectId}`,
          JSON.stringify(body.pairs),
        );
        m.ack();
      } catch (err) {
        console.error("dead-lettered alert message not recorded, will retry", m.id, String(err));
        m.retry({ delaySeconds: queueRetryDelaySeconds(QUEUES.jobsDeadLetter, m.attempts) });
      }
    }
  } finally {
    await close().catch(() => {});
  }
}
