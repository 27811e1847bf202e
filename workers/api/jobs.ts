// The jobs queue's one message type: every job the API Worker's cron plans (index.ts scheduled()), tagged
// by `kind`, read by one schema at the consumer (alerts/consume.ts). The queue is QUEUES.jobs, bound as
// JOBS_QUEUE; the Cloudflare queue keeps its first name (telemetry-alerts, telemetry-alerts-dlq), since
// a deployed queue that is renamed loses the messages still in it.
import { z } from "zod";

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** One (rule, profile) pair: [alert rule id, threshold profile id]. */
const PairRefSchema = z.tuple([z.string(), z.string()]);
export type PairRef = [ruleId: string, profileId: string];

const alertPairsFields = {
  v: z.literal(1),
  /** The scheduled run (the cron's scheduledTime, ms): the key of exactly-once effects and the window's clock. */
  runAt: z.number(),
  projectId: z.string(),
  pairs: z.array(PairRefSchema),
};

/** Pairs of one project for one scheduled run (alerts/plan.ts packMessages), evaluated by alerts/evaluate.ts. */
export const AlertPairsJob = z.object({ kind: z.literal("alert-pairs"), ...alertPairsFields });
export type AlertPairsJob = z.output<typeof AlertPairsJob>;

/**
 * The run's build judging (analytics/verdicts.ts judgeBuilds: at most 10 new builds, newest first), sent
 * by the cron beside the pairs so that its ClickHouse reads run in a consumer, not in the cron. Judging
 * is idempotent (a verdict's primary key is its build and metric), so a redelivery changes nothing.
 */
export const BuildsJob = z.object({ v: z.literal(1), kind: z.literal("builds"), runAt: z.number() });
export type BuildsJob = z.output<typeof BuildsJob>;

/** The purge of a day for up to PURGE_PROJECTS_PER_MESSAGE projects (data-retention/purge.ts planPurge). */
export const PurgeJob = z.object({
  v: z.literal(1),
  kind: z.literal("purge"),
  /** The UTC day whose purge this is (retention_runs). */
  day: z.string().regex(DAY),
  horizons: z.array(z.object({ id: z.string(), horizon: z.string().regex(DAY) })),
});
export type PurgeJob = z.output<typeof PurgeJob>;

/**
 * The notice to owners of single sign-on domains that must be proven (sso/notice.ts): at most
 * NOTICES_PER_RUN domains a message; a domain is marked noticed once every owner's mail went out, so a
 * redelivery sends only what is still due.
 */
export const SsoNoticeJob = z.object({ v: z.literal(1), kind: z.literal("sso-notice"), runAt: z.number() });
export type SsoNoticeJob = z.output<typeof SsoNoticeJob>;

/**
 * One page of a project's dense-number backfill (analytics/numbers-backfill.ts): sent per project by
 * POST /api/operator/number-backfills, and again by its consumer while pages remain. Idempotent.
 */
export const NumbersBackfillJob = z.object({
  v: z.literal(1),
  kind: z.literal("numbers-backfill"),
  projectId: z.string().uuid(),
});
export type NumbersBackfillJob = z.output<typeof NumbersBackfillJob>;

/**
 * The funnels' stored anchor hours (analytics/funnel-anchors.ts): once an hour the cron sends a plan,
 * whose consumer sends one FunnelAnchorsJob per definition read lately.
 */
export const FunnelPlanJob = z.object({ v: z.literal(1), kind: z.literal("funnel-plan"), runAt: z.number() });
export type FunnelPlanJob = z.output<typeof FunnelPlanJob>;

/**
 * One project and funnel definition (distinct step names and window): stores the oldest up to 24 (a day) of its
 * anchor hours that can no longer change and are not stored with their current stamp; its consumer sends
 * the same message again while hours remain. Idempotent.
 */
export const FunnelAnchorsJob = z.object({
  v: z.literal(1),
  kind: z.literal("funnel-anchors"),
  runAt: z.number(),
  projectId: z.string().uuid(),
  steps: z.array(z.string().min(1).max(128)).min(2).max(8),
  windowS: z.number().int().positive(),
});
export type FunnelAnchorsJob = z.output<typeof FunnelAnchorsJob>;

/**
 * The stored session-median days (analytics/session-medians.ts), planned hourly by the cron in messages
 * of at most SESSION_MEDIAN_PROJECTS_PER_MESSAGE projects: the consumer finds the projects' days due and
 * sends one session-medians message per project and day.
 */
export const SessionMediansPlanJob = z.object({
  v: z.literal(1),
  kind: z.literal("session-medians-plan"),
  runAt: z.number(),
  projectIds: z.array(z.string().uuid()),
});
export type SessionMediansPlanJob = z.output<typeof SessionMediansPlanJob>;

/** One project's day: its stamp recorded, or its histograms stored (idempotent). */
export const SessionMediansJob = z.object({
  v: z.literal(1),
  kind: z.literal("session-medians"),
  runAt: z.number(),
  projectId: z.string().uuid(),
  day: z.string().regex(DAY),
});
export type SessionMediansJob = z.output<typeof SessionMediansJob>;

/**
 * Alert pairs as sent before every job carried a `kind` (no `kind` at all): still read, as alert pairs,
 * so that the messages in flight during a deploy are evaluated, not dropped.
 */
const LegacyAlertPairs = z
  .object({ kind: z.undefined().optional(), ...alertPairsFields })
  .transform((m): AlertPairsJob => ({ ...m, kind: "alert-pairs" }));

/** What one jobs-queue message carries; the dead-letter queue carries the same. */
export const JobMessage = z.union([
  z.discriminatedUnion("kind", [
    AlertPairsJob,
    BuildsJob,
    PurgeJob,
    SsoNoticeJob,
    NumbersBackfillJob,
    FunnelPlanJob,
    FunnelAnchorsJob,
    SessionMediansPlanJob,
    SessionMediansJob,
  ]),
  LegacyAlertPairs,
]);
export type JobMessage = z.output<typeof JobMessage>;
/** What a producer sends: a job with its kind (the legacy shape is read, never sent). */
export type JobInput =
  | AlertPairsJob
  | BuildsJob
  | PurgeJob
  | SsoNoticeJob
  | NumbersBackfillJob
  | FunnelPlanJob
  | FunnelAnchorsJob
  | SessionMediansPlanJob
  | SessionMediansJob;
