// The one way a test waits: for a condition, polled until a deadline. Never for time to pass (set the
// request's clock instead: `now` in http.ts api(), workers/api/clock.ts) and never for "nothing more
// arrives" (use a barrier: insertsSettled and eventsQueueSettled in events.ts).

export type WaitOptions = {
  /** Give up after this long (default 30 s): a missed condition fails the test, it does not hang it. */
  timeoutMs?: number;
  /** Pause between polls (default 100 ms). */
  intervalMs?: number;
  /** What was awaited, for the error when the deadline passes; may describe the last value. */
  message?: string | ((last: unknown) => string);
};

/**
 * Polls `probe` until `done(value)` holds and returns that value; throws once `timeoutMs` has passed
 * without it. With no `done`, any truthy value ends the wait.
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  done: (value: T) => boolean = (v) => Boolean(v),
  { timeoutMs = 30_000, intervalMs = 100, message = "condition" }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) {
      return value;
    }
    if (Date.now() > deadline) {
      const what = typeof message === "function" ? message(value) : message;
      throw new Error(`waited ${timeoutMs} ms: ${what} not met (last: ${JSON.stringify(value, jsonSafe)})`);
    }
    await pause(intervalMs);
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function jsonSafe(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}
