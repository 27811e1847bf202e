import { inArray } from "drizzle-orm";
import { notificationChannels } from "../../../schema/pg/schema.js";
import { configOf } from "../../shared/config.js";
import { QUEUES, queueRetryDelaySeconds } from "../../shared/queues.js";
import { openDb } from "../db.js";
import { bodyFor, NotificationMessage } from "./notification.js";
import { DELIVERY_HEADER, SIGNATURE_HEADER, signBody, TIMESTAMP_HEADER } from "./signature.js";

type Channel = typeof notificationChannels.$inferSelect;

const DELIVERY_TIMEOUT_MS = 10_000;
/** 30 s, 60 s, 120 s … capped at one hour; the queue gives up after its max_retries. */
export function deliveryRetryDelaySeconds(attempts: number): number {
  return queueRetryDelaySeconds(QUEUES.notifications, attempts);
}

/**
 * Delivers alert notifications. A 2xx acknowledges; a network error, timeout, 408, 429 or 5xx retries
 * with exponential delay; any other 4xx is final (the endpoint refused this request, and sending the
 * same bytes again would not change that). A deleted channel's messages are dropped.
 * Logs name the channel and the outcome, never its URL (a Slack URL is a credential) or signature.
 */
export async function deliverNotifications(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const messages: Array<{ m: Message<unknown>; body: NotificationMessage }> = [];
  for (const m of batch.messages) {
    const read = NotificationMessage.safeParse(m.body);
    if (read.success) {
      messages.push({ m, body: read.data });
    } else {
      // Retrying cannot make it readable: drop it rather than let it hold up the batch.
      console.error("unreadable notification message dropped", m.id);
      m.ack();
    }
  }
  if (!messages.length) {
    return;
  }
  const { db, close } = openDb(configOf(env));
  let channels: Channel[];
  try {
    const ids = [...new Set(messages.map(({ body }) => body.channelId))];
    channels = await db.select().from(notificationChannels).where(inArray(notificationChannels.id, ids));
  } catch (err) {
    console.error("notification channels unavailable", err instanceof Error ? err.message : String(err));
    for (const { m } of messages) {
      m.retry({ delaySeconds: deliveryRetryDelaySeconds(m.attempts) });
    }
    return;
  } finally {
    await close().catch(() => {});
  }
  // deliverOne never throws: every message ends acknowledged or retried on its own.
  await Promise.all(
    messages.map(({ m, body }) =>
      deliverOne(
        env,
        m,
        body,
        channels.find((c) => c.id === body.channelId),
      ),
    ),
  );
}

/**
 * The cooldown object of an alert notification's (rule, profile): it remembers which (event, channel)
 * deliveries are done, so a message handed to the queue twice is posted once. Regressions have none.
 */
function deliveryLedger(env: Env, message: NotificationMessage) {
  const alert = message.alert;
  if (alert.type !== "alert.triggered") {
    return null;
  }
  return env.ALERT_COOLDOWN.get(
    env.ALERT_COOLDOWN.idFromName(`${alert.rule.id}:${alert.thresholdProfile.id}`),
  );
}

async function deliverOne(
  env: Env,
  message: Message<unknown>,
  body: NotificationMessage,
  channel: Channel | undefined,
): Promise<void> {
  if (!channel) {
    console.warn("notification dropped: channel deleted", body.channelId);
    message.ack();
    return;
  }
  const { alert, channelId } = body;
  const ledger = deliveryLedger(env, body);
  let claim: "go" | "done" | "busy" = "go";
  try {
    claim = ledger ? await ledger.claimDelivery(alert.eventId, channelId) : "go";
  } catch (err) {
    console.warn("delivery ledger unavailable", err instanceof Error ? err.message : String(err));
    message.retry({ delaySeconds: deliveryRetryDelaySeconds(message.attempts) });
    return;
  }
  if (claim === "done") {
    console.warn("notification already delivered, duplicate dropped", channel.id, alert.eventId);
    message.ack();
    return;
  }
  if (claim === "busy") {
    // Another copy is being posted now: this one comes back later and is then dropped (or posts, if
    // that one failed).
    message.retry({ delaySeconds: deliveryRetryDelaySeconds(1) });
    return;
  }
  const outcome = await post(channel, body);
  // Best effort: were this lost, the in-progress mark expires and a duplicate copy (rare) could post.
  await ledger
    ?.finishDelivery(alert.eventId, channelId, outcome === "delivered" || outcome === "refused")
    .catch(() => {});
  if (outcome === "delivered") {
    message.ack();
  } else if (outcome === "refused") {
    console.error("notification refused by endpoint", channel.id, body.alert.eventId);
    message.ack();
  } else {
    // The queue's max_retries after the first attempt: past it the queue drops the message.
    const last = message.attempts > QUEUES.notifications.maxRetries;
    console.warn(
      last ? "notification delivery failed, giving up" : "notification delivery failed, will retry",
      channel.id,
      outcome,
      `attempt ${message.attempts}`,
    );
    message.retry({ delaySeconds: deliveryRetryDelaySeconds(message.attempts) });
  }
}

async function post(
  channel: Channel,
  message: NotificationMessage,
): Promise<"delivered" | "refused" | string> {
  const body = bodyFor(channel.kind, message.alert);
  const headers = new Headers({
    "Content-Type": "application/json",
    "User-Agent": "game-telemetry-alerts/1",
  });
  if (channel.kind === "webhook" && channel.signingSecret) {
    headers.set(SIGNATURE_HEADER, await signBody(channel.signingSecret, body));
    headers.set(TIMESTAMP_HEADER, String(Math.floor(Date.now() / 1000)));
    headers.set(DELIVERY_HEADER, message.alert.eventId);
  }
  try {
    const res = await fetch(channel.url, {
      method: "POST",
      headers,
      body,
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    await res.body?.cancel();
    if (res.ok) {
      return "delivered";
    }
    const transient = res.status === 408 || res.status === 429 || res.status >= 500;
    return transient ? `status ${res.status}` : "refused";
  } catch (err) {
    return err instanceof Error ? err.name : "network error";
  }
}
