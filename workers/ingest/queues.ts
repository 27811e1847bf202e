import { QUEUES, queueDispatcher } from "../shared/queues.js";
import { parkDeadLetters } from "./consumer/dead-letters.js";
import { consumeEvents } from "./consumer/events.js";

/** The ingest Worker's queues: the events queue and its dead-letter queue; any other throws. */
export const dispatchIngestQueue = queueDispatcher<Env>({
  [QUEUES.events.name]: consumeEvents,
  [QUEUES.eventsDeadLetter.name]: parkDeadLetters,
});
