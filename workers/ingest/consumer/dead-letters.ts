import { deadLetterKey } from "../../shared/dead-letters.js";
import { EventEnvelope, gunzipCapped } from "../../shared/envelope.js";
import { QUEUES, queueRetryDelaySeconds } from "../../shared/queues.js";
import { LIMITS } from "../../shared/telemetry/limits.js";
import { appendRows, RowSink } from "./wire-rows.js";

/**
 * Parks each dead-lettered message in R2 exactly as it was queued, so it can be replayed by sending
 * the object's bytes to the events queue again. Acknowledged only once R2 has it.
 */
export async function parkDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const bytes = toBytes(message.body);
    try {
      await env.DEAD_LETTERS.put(deadLetterKey(bytes, message.id), bytes, {
        customMetadata: {
          messageId: message.id,
          attempts: String(message.attempts),
          parkedAt: new Date().toISOString(),
          reason: await reasonOf(bytes),
        },
      });
      message.ack();
    } catch (err) {
      console.error("could not park dead letter", err instanceof Error ? err.message : "");
      message.retry({ delaySeconds: queueRetryDelaySeconds(QUEUES.eventsDeadLetter, message.attempts) });
    }
  }
}

function toBytes(body: unknown): Uint8Array {
  if (body instanceof Uint8Array) {
    return body;
  }
  if (body instanceof ArrayBuffer) {
    return new Uint8Array(body);
  }
  return new TextEncoder().encode(typeof body === "string" ? body : JSON.stringify(body));
}

/**
 * Why a message was dead-lettered, as far as its bytes tell (the queue passes no reason along): the
 * events consumer parks a batch it cannot read at once, and one it can read only after every delivery
 * failed to store it. Shown with the parked batch (GET …/dead-letters).
 */
async function reasonOf(bytes: Uint8Array): Promise<string> {
  try {
    const { header, body } = EventEnvelope.parse(bytes);
    const batch = header.encoding === "gzip" ? await gunzipCapped(body, LIMITS.maxDecompressedBytes) : body;
    appendRows(new RowSink(batch.length * 2 + 1024), header, batch);
    return "Storing it failed on every delivery (ClickHouse refused or was unreachable)";
  } catch (err) {
    return `Not a readable telemetry batch: ${err instanceof Error ? err.message : "unknown error"}`.slice(
      0,
      500,
    );
  }
}
