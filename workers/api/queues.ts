import { QUEUES, queueDispatcher } from "../shared/queues.js";
import { consumeJobDeadLetters, consumeJobs } from "./alerts/consume.js";
import { deliverNotifications } from "./alerts/deliver.js";
import { consumeErasureDeadLetters, consumeErasures } from "./erasure/run.js";
import { consumeExports } from "./exports/consumer.js";

/** The API Worker's queues: the cron's jobs and their dead letters, alert notifications, exports, erasures and their dead letters; any other throws. */
export const dispatchApiQueue = queueDispatcher<Env>({
  [QUEUES.jobs.name]: consumeJobs,
  [QUEUES.jobsDeadLetter.name]: consumeJobDeadLetters,
  [QUEUES.notifications.name]: deliverNotifications,
  [QUEUES.exports.name]: consumeExports,
  [QUEUES.erasures.name]: consumeErasures,
  [QUEUES.erasuresDeadLetter.name]: consumeErasureDeadLetters,
});
