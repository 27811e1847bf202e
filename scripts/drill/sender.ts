import { makeSdkBatch } from "../bench/generate-batch.js";

// A game sending batches the way the engine SDKs do (their public RetryPolicy): up to 3 attempts, 1 s
// then 2 s apart, on a 429, a 5xx or a network error; any other answer, or the third failure, drops
// the batch for good. A 401 is therefore a lost batch, which is what the drills count.

export const SDK_RETRY_DELAYS_MS = [1_000, 2_000];

export type SenderTotals = {
  acceptedEvents: number;
  droppedEvents: number;
  acceptedBatches: number;
  droppedBatches: number;
  /** Every attempt's answer by status ("network" for a request that got none). */
  answers: Record<string, number>;
  /** Batches being sent right now (retries included). */
  inFlight: number;
};

export function newTotals(): SenderTotals {
  return {
    acceptedEvents: 0,
    droppedEvents: 0,
    acceptedBatches: 0,
    droppedBatches: 0,
    answers: {},
    inFlight: 0,
  };
}

/** Sends one batch with the SDK policy; true when accepted. */
export async function sendLikeSdk(
  origin: string,
  key: string,
  body: Uint8Array,
  eventCount: number,
  totals: SenderTotals,
): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    let status: string;
    try {
      const res = await fetch(`${origin}/v1/events`, {
        method: "POST",
        headers: {
          "Content-Type": "application/x-protobuf",
          "Content-Encoding": "gzip",
          "X-API-Key": key,
          "X-SDK-Version": "unity-1.4.2",
        },
        body,
      });
      await res.arrayBuffer();
      status = String(res.status);
    } catch {
      status = "network";
    }
    totals.answers[status] = (totals.answers[status] ?? 0) + 1;
    if (status === "202") {
      totals.acceptedBatches++;
      totals.acceptedEvents += eventCount;
      return true;
    }
    const retryable = status === "network" || status === "429" || status.startsWith("5");
    const delay = SDK_RETRY_DELAYS_MS[attempt];
    if (!retryable || delay === undefined) {
      totals.droppedBatches++;
      totals.droppedEvents += eventCount;
      return false;
    }
    await new Promise((r) => setTimeout(r, delay));
  }
}

/**
 * `concurrency` senders, each sending a fresh batch of `events` events then waiting `pauseMs`, until
 * `running()` turns false. Each batch is its own seeded session stream, so every one has its own key.
 */
export async function sendWhile(
  origin: string,
  key: string,
  opts: {
    concurrency: number;
    events: number;
    pauseMs: number;
    running: () => boolean;
    /** While true, no new batch is started (a batch under way finishes). */
    held?: () => boolean;
  },
  totals: SenderTotals,
): Promise<void> {
  let seed = 1;
  const sender = async () => {
    while (opts.running()) {
      if (opts.held?.()) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      const batch = makeSdkBatch(seed++, Date.now() * 1000, opts.events);
      totals.inFlight++;
      try {
        await sendLikeSdk(origin, key, batch.gzipped, batch.eventCount, totals);
      } finally {
        totals.inFlight--;
      }
      if (opts.pauseMs > 0) {
        await new Promise((r) => setTimeout(r, opts.pauseMs));
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, sender));
}
