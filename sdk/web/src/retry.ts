// What an answer from ingest means for a batch, as the engine SDKs treat it, plus Retry-After: any 2xx
// is delivered; 413 splits the batch in halves (one event alone is dropped); 429, 5xx and network errors
// (status 0) are retried with backoff; any other answer is final and the batch is dropped.

export type Outcome = "delivered" | "split" | "retry" | "drop";

export function classify(status: number, events: number): Outcome {
  if (status >= 200 && status < 300) {
    return "delivered";
  }
  if (status === 413) {
    return events > 1 ? "split" : "drop";
  }
  if (status === 0 || status === 429 || status >= 500) {
    return "retry";
  }
  return "drop";
}

export type Backoff = { baseMs: number; maxMs: number };

/**
 * Milliseconds before retry number `attempt` (0 for the first): exponential with jitter (half to all of
 * the step, so many players behind one outage do not return in step), never sooner than the server's
 * Retry-After.
 */
export function retryDelayMs(
  attempt: number,
  retryAfterSeconds: number | undefined,
  policy: Backoff,
  random: () => number = Math.random,
): number {
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt));
  const jittered = step * (0.5 + random() / 2);
  return Math.max(jittered, (retryAfterSeconds ?? 0) * 1000);
}

/** Retry-After in seconds (delta-seconds or an HTTP date), capped at an hour; undefined when absent. */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | undefined {
  if (!value) {
    return undefined;
  }
  const seconds = /^\s*\d+\s*$/.test(value) ? Number(value) : (Date.parse(value) - nowMs) / 1000;
  return Number.isFinite(seconds) ? Math.min(3600, Math.max(0, seconds)) : undefined;
}
