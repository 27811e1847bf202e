import { deliverNotifications } from "../consumer/notifications.js";
import { consumeExports } from "../exports/consumer.js";
import { QUEUES, queueDispatcher } from "../shared/queues.js";

/** The API Worker's queues: alert notifications and exports; any other throws. */
export const dispatchApiQueue = queueDispatcher<Env>({
  [QUEUES.notifications.name]: deliverNotifications,
  [QUEUES.exports.name]: consumeExports,
});
