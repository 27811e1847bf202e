import { QUEUES, queueDispatcher } from "../shared/queues.js";
import { deliverNotifications } from "./alerts/deliver.js";
import { consumeExports } from "./exports/consumer.js";

/** The API Worker's queues: alert notifications and exports; any other throws. */
export const dispatchApiQueue = queueDispatcher<Env>({
  [QUEUES.notifications.name]: deliverNotifications,
  [QUEUES.exports.name]: consumeExports,
});
