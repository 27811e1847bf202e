// Every queue of both Workers, in one table: its name (as in the wrangler configs), who consumes it,
// its max_retries, its retry delays and its batching. test/node/worker-configs.test.ts holds the wrangler configs to
// these numbers, so code and configuration cannot drift apart.

export type QueueSpec = {
  /** The queue's name in the wrangler configs. */
  name: string;
  /** The Worker whose wrangler config declares the consumer. */
  consumer: "ingest" | "api";
  /** wrangler's max_retries: past it the queue dead-letters (or drops) the message. */
  maxRetries: number;
  /** First retry delay and its cap, seconds; see retryDelaySeconds. */
  retryBaseSeconds: number;
  retryCapSeconds: number;
  /** wrangler's max_batch_size and max_batch_timeout (seconds): a delivery's size and how long it may wait to fill. */
  maxBatchSize: number;
  maxBatchTimeoutSeconds: number;
};

export const QUEUES = {
  events: {
    name: "telemetry-events",
    consumer: "ingest",
    maxRetries: 8,
    retryBaseSeconds: 5,
    retryCapSeconds: 600,
    // A delivery goes as soon as messages wait: what a player waits for is the insert, not a timer.
    // Batching comes from the backlog instead (a delivery takes up to 100 messages, ~150,000 events,
    // that queued while the last insert ran), so inserts stay few and large exactly when volume is high.
    maxBatchSize: 100,
    maxBatchTimeoutSeconds: 0,
  },
  eventsDeadLetter: {
    name: "telemetry-events-dlq",
    consumer: "ingest",
    maxRetries: 100,
    retryBaseSeconds: 5,
    retryCapSeconds: 600,
    maxBatchSize: 10,
    maxBatchTimeoutSeconds: 5,
  },
  // Alert notifications: one message per (evaluation event, channel).
  notifications: {
    name: "telemetry-notifications",
    consumer: "api",
    maxRetries: 6,
    retryBaseSeconds: 30,
    retryCapSeconds: 3600,
    maxBatchSize: 10,
    maxBatchTimeoutSeconds: 1,
  },
  // The jobs queue: every job the API Worker's cron plans, one JobMessage (workers/api/jobs.ts, tagged
  // by kind) each: alert pairs (one message per group of scopes of one project, at most 400 pairs, 96
  // scopes; workers/api/alerts/plan.ts), the run's build verdicts, a day's retention purge. Small batches
  // keep one slow tenant's messages from holding up another's; a message that keeps failing goes to the
  // DLQ. The Cloudflare queue keeps its first name: renaming a deployed queue loses what is in it.
  jobs: {
    name: "telemetry-alerts",
    consumer: "api",
    maxRetries: 3,
    retryBaseSeconds: 10,
    retryCapSeconds: 60,
    maxBatchSize: 4,
    maxBatchTimeoutSeconds: 1,
  },
  // Jobs that failed every attempt: for alert pairs its consumer records the failure on each pair's state
  // (the rule then shows "evaluation failed") and logs the ids; the next cron run plans them afresh.
  jobsDeadLetter: {
    name: "telemetry-alerts-dlq",
    consumer: "api",
    maxRetries: 5,
    retryBaseSeconds: 10,
    retryCapSeconds: 300,
    maxBatchSize: 10,
    maxBatchTimeoutSeconds: 5,
  },
  exports: {
    name: "telemetry-exports",
    consumer: "api",
    maxRetries: 2,
    retryBaseSeconds: 10,
    retryCapSeconds: 60,
    maxBatchSize: 1,
    maxBatchTimeoutSeconds: 1,
  },
  // Player erasures (workers/api/erasure/run.ts): one message per erasure, run outside the request that
  // asked for it (it reads and deletes across the project: minutes at volume). One per invocation, as
  // exports; each step is recorded, so a retry resumes where the last delivery stopped. A message that
  // fails every attempt is dead-lettered; the dead-letter consumer records the erasure as failed.
  erasures: {
    name: "telemetry-erasures",
    consumer: "api",
    maxRetries: 4,
    retryBaseSeconds: 10,
    retryCapSeconds: 120,
    maxBatchSize: 1,
    maxBatchTimeoutSeconds: 1,
  },
  erasuresDeadLetter: {
    name: "telemetry-erasures-dlq",
    consumer: "api",
    maxRetries: 5,
    retryBaseSeconds: 10,
    retryCapSeconds: 300,
    maxBatchSize: 10,
    maxBatchTimeoutSeconds: 5,
  },
} as const satisfies Record<string, QueueSpec>;

/** Delivery attempts a message gets in all: the first plus max_retries. */
export function attemptsOf(queue: QueueSpec): number {
  return queue.maxRetries + 1;
}

/** Exponential delay per attempt: base, 2·base, 4·base … capped. Events: 5 s, 10 s, 20 s … 10 minutes. */
export function retryDelaySeconds(attempts: number, base = 5, cap = 600): number {
  return Math.min(cap, base * 2 ** Math.max(0, attempts - 1));
}

/** The retry delay of a message of `queue` on its `attempts`-th delivery. */
export function queueRetryDelaySeconds(queue: QueueSpec, attempts: number): number {
  return retryDelaySeconds(attempts, queue.retryBaseSeconds, queue.retryCapSeconds);
}

export type QueueHandler<E> = (batch: MessageBatch<unknown>, env: E) => Promise<void>;

export class UnknownQueue extends Error {}

/**
 * A Worker's queue() handler from its dispatch table. A batch from a queue the table does not name
 * throws: the platform retries it (and dead-letters it where configured) rather than it being consumed
 * by the wrong code or silently acknowledged.
 */
export function queueDispatcher<E>(table: Record<string, QueueHandler<E>>) {
  return async (batch: MessageBatch<unknown>, env: E): Promise<void> => {
    const handler = Object.hasOwn(table, batch.queue) ? table[batch.queue] : undefined;
    if (!handler) {
      throw new UnknownQueue(`no consumer for queue ${batch.queue} in this Worker`);
    }
    return handler(batch, env);
  };
}
