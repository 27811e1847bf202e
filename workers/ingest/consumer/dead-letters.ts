import { deadLetterKey } from "../../shared/dead-letters.js";
import { QUEUES, queueRetryDelaySeconds } from "../../shared/queues.js";

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
