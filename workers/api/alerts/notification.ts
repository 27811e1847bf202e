import { type AlertMetric, lowerIsWorse, type ThresholdLevel } from "./metrics.js";

/** What one queue message carries: one evaluation event for one channel. No secrets travel in it. */
export type NotificationMessage = {
  v: 1;
  channelId: string;
  alert: AlertNotification;
};

/** The webhook body, as JSON; Slack gets `{text}` rendered from the same facts. */
export type AlertNotification = {
  type: "alert.triggered";
  /** The evaluation event's id: the same id on every retry, so receivers can deduplicate. */
  eventId: string;
  createdAt: string;
  projectId: string;
  rule: {
    id: string;
    name: string;
    metric: AlertMetric;
    thresholdLevel: ThresholdLevel;
    failPercentage: number;
    evaluationDays: number;
    cellSize: number;
  };
  thresholdProfile: { id: string; name: string; threshold: number };
  map: { id: string; mapId: string; name: string };
  result: { status: "triggered"; failCount: number; totalCount: number; failPercentage: number };
};

const round2 = (n: number) => Math.round(n * 100) / 100;

export function slackText(a: AlertNotification): string {
  const worse = lowerIsWorse(a.rule.metric) ? "below" : "above";
  return (
    `Alert "${a.rule.name}" triggered on map ${a.map.name} (profile ${a.thresholdProfile.name}): ` +
    `${a.result.failCount} of ${a.result.totalCount} cells (${round2(a.result.failPercentage)}%) ` +
    `have mean ${a.rule.metric} ${worse} the ${a.rule.thresholdLevel} threshold ${a.thresholdProfile.threshold}; ` +
    `the rule allows ${a.rule.failPercentage}%.`
  );
}

/** The exact body bytes of a delivery; signatures are computed over these. */
export function bodyFor(kind: string, alert: AlertNotification): Uint8Array {
  const json = kind === "slack" ? JSON.stringify({ text: slackText(alert) }) : JSON.stringify(alert);
  return new TextEncoder().encode(json);
}
