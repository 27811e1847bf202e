// The R2 key of a parked (dead-lettered) events batch, in one place: the ingest Worker's dead-letter
// consumer writes under it, the API Worker's dead-letter routes list, read and replay by it.
//
//   events/<projectId>/<YYYY-MM-DD received>/<batchKey>-<queue message id>.bin
//   events/unreadable/<queue message id>.bin      (an envelope that could not be opened)
import { openEnvelope } from "./envelope.js";

/** The key a queued message's bytes are parked under. */
export function deadLetterKey(bytes: Uint8Array, messageId: string): string {
  try {
    const { header } = openEnvelope(bytes);
    const day = new Date(header.receivedAt).toISOString().slice(0, 10);
    return `events/${header.projectId}/${day}/${header.batchKey}-${messageId}.bin`;
  } catch {
    return `events/unreadable/${messageId}.bin`;
  }
}

/** The prefix of one project's parked batches. */
export function deadLetterPrefix(projectId: string): string {
  return `events/${projectId}/`;
}

/** The batch key a parked batch's object key carries. */
export function batchKeyOfDeadLetter(objectKey: string): string {
  const file = objectKey.slice(objectKey.lastIndexOf("/") + 1);
  return file.slice(0, file.indexOf("-"));
}
