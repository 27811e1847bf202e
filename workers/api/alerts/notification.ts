import { z } from "zod";
import {
  ALERT_METRIC,
  type AlertMetricKey,
  BUDGET_SHARE,
  METRIC,
  sampleNoun,
} from "../../shared/telemetry/metrics.js";
import type { RegressionNotification } from "../analytics/verdicts.js";
import type { EvaluationLinks, LinkedCell } from "./links.js";
import type { ThresholdLevel } from "./metrics.js";

/**
 * What one queue message carries: one evaluation event, or one build regression (analytics/verdicts.ts),
 * for one channel. No secrets travel in it.
 */
export type NotificationMessage = {
  v: 1;
  channelId: string;
  alert: AlertNotification | RegressionNotification;
};

/**
 * The notifications queue's schema: what the consumer reads before delivering (the channel, the
 * event's id); the payload is posted as its producer (evaluate.ts, analytics/verdicts.ts) built it.
 */
export const NotificationMessage: z.ZodType<NotificationMessage> = z.object({
  v: z.literal(1),
  channelId: z.string(),
  alert: z.custom<AlertNotification | RegressionNotification>(
    (a) => typeof a === "object" && a !== null && "eventId" in a && typeof a.eventId === "string",
    "alert.eventId: a string",
  ),
});

/** The webhook body, as JSON; Slack gets `{text, blocks}` rendered from the same facts. */
export type AlertNotification = {
  type: "alert.triggered";
  /** The evaluation event's id: the same id on every retry, so receivers can deduplicate. */
  eventId: string;
  createdAt: string;
  projectId: string;
  rule: {
    id: string;
    name: string;
    metric: AlertMetricKey;
    thresholdLevel: ThresholdLevel;
    failPercentage: number;
    evaluationDays: number;
    cellSize: number;
  };
  thresholdProfile: { id: string; name: string; threshold: number };
  map: { id: string; mapId: string; name: string };
  result: { status: "triggered"; failCount: number; totalCount: number; failPercentage: number };
  /**
   * The worst failing cells, worst first, each with its panel's link. Absent from messages queued
   * before evaluations kept them, so every reader treats both as optional.
   */
  worstCells?: LinkedCell[];
  links?: EvaluationLinks;
};

const round2 = (n: number) => Math.round(n * 100) / 100;

/** "below" for a metric that fails by being too low (fps, the budget share), "above" for the others. */
const worseSide = (m: AlertMetricKey) => (ALERT_METRIC[m].better === "higher" ? "below" : "above");

/** What a cell is judged by, as the sentence names it: a metric's mean, or the budget share itself. */
const judgedBy = (m: AlertMetricKey, name: string) => (m === BUDGET_SHARE.key ? `a ${name}` : `mean ${name}`);

/** A threshold or a cell's value with its unit: the budget share in percent (2 decimals). */
const withUnit = (m: AlertMetricKey, v: number, round: (n: number) => number = (n) => n) =>
  m === BUDGET_SHARE.key ? `${round2(v * 100)} %` : `${round(v)} ${ALERT_METRIC[m].unit}`;

/** The plain-text line: Slack's fallback (notifications, clients without blocks), unchanged in shape. */
export function slackText(a: AlertNotification): string {
  const worse = worseSide(a.rule.metric);
  return (
    `Alert "${a.rule.name}" triggered on map ${a.map.name} (profile ${a.thresholdProfile.name}): ` +
    `${a.result.failCount} of ${a.result.totalCount} cells (${round2(a.result.failPercentage)}%) ` +
    `have ${judgedBy(a.rule.metric, a.rule.metric)} ${worse} the ${a.rule.thresholdLevel} threshold ${a.thresholdProfile.threshold}; ` +
    `the rule allows ${a.rule.failPercentage}%.`
  );
}

/** Slack's mrkdwn treats &, < and > as markup: names typed by users are escaped. */
function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Slack renders only absolute http(s) links; a root-relative one (no APP_URL) stays text. */
const absolute = (url: string | undefined): url is string => url !== undefined && /^https?:\/\//.test(url);

type Block = Record<string, unknown>;

/**
 * Block Kit for a person reading at a glance: what failed and how badly, where (the worst cells, each
 * linked to its panel), and a button to the heatmap set to this evaluation. Slack caps a section's text
 * at 3,000 characters; ten cell lines stay far below it.
 */
export function slackBlocks(a: AlertNotification): Block[] {
  const metric = a.rule.metric;
  const worse = worseSide(metric);
  const blocks: Block[] = [
    {
      type: "header",
      text: { type: "plain_text", text: `Alert triggered: ${a.rule.name}`.slice(0, 150), emoji: false },
    },
    {
      type: "section",
      text: {
        type: "mrkdwn",
        text:
          `*${a.result.failCount} of ${a.result.totalCount} cells (${round2(a.result.failPercentage)}%)* on ` +
          `*${esc(a.map.name)}* have ${judgedBy(metric, ALERT_METRIC[metric].phrase)} ${worse} ` +
          `${withUnit(metric, a.thresholdProfile.threshold)}; the rule allows ${a.rule.failPercentage}%.`,
      },
      fields: [
        { type: "mrkdwn", text: `*Profile*\n${esc(a.thresholdProfile.name)} (${a.rule.thresholdLevel})` },
        {
          type: "mrkdwn",
          text: `*Window*\nLast ${a.rule.evaluationDays} day${a.rule.evaluationDays === 1 ? "" : "s"}, cells of ${a.rule.cellSize}`,
        },
      ],
    },
  ];
  const cells = a.worstCells ?? [];
  if (cells.length) {
    const lines = cells.map((c, i) => {
      const where = `(${c.x}, ${c.y})`;
      const place = absolute(c.link) ? `<${c.link}|${where}>` : where;
      const failing = c.failingShare === undefined ? "" : `, ${Math.round(c.failingShare * 100)} % failing`;
      return `${i + 1}. ${place}  ${withUnit(metric, c.value, round2)} over ${c.samples} ${sampleNoun(metric)}${c.samples === 1 ? "" : "s"}${failing}`;
    });
    blocks.push({
      type: "section",
      text: { type: "mrkdwn", text: `*Worst cells*\n${lines.join("\n")}` },
    });
  }
  const heatmap = a.links?.heatmap;
  if (absolute(heatmap)) {
    blocks.push({
      type: "actions",
      elements: [
        {
          type: "button",
          text: { type: "plain_text", text: "Open heatmap" },
          url: heatmap,
          action_id: "open_heatmap",
        },
      ],
    });
  }
  blocks.push({
    type: "context",
    elements: [{ type: "mrkdwn", text: `Evaluated ${a.createdAt} · event ${a.eventId}` }],
  });
  return blocks;
}

/** The exact body bytes of a delivery; signatures are computed over these. */
export function bodyFor(kind: string, alert: AlertNotification | RegressionNotification): Uint8Array {
  const json =
    kind !== "slack"
      ? JSON.stringify(alert)
      : alert.type === "build.regressed"
        ? JSON.stringify({ text: regressionText(alert), blocks: regressionBlocks(alert) })
        : JSON.stringify({ text: slackText(alert), blocks: slackBlocks(alert) });
  return new TextEncoder().encode(json);
}

/** A change as the metric states it: percent of the baseline, or points of the poor sessions' share. */
const unitOf = (m: RegressionNotification["metric"]) => (m === "poor_session_share" ? "pts" : "%");
const phraseOf = (m: RegressionNotification["metric"]) =>
  m === "poor_session_share" ? "its share of poor sessions" : METRIC[m].phrase;
const signed = (n: number | null, unit = "%") =>
  n === null ? "n/a" : `${n > 0 ? "+" : ""}${round2(n)} ${unit}`;
const interval = (ci: [number, number] | null, unit = "%") =>
  ci ? ` (95 % CI ${signed(ci[0], unit)} to ${signed(ci[1], unit)})` : "";

/** Slack's fallback line of a build regression. */
export function regressionText(r: RegressionNotification): string {
  const unit = unitOf(r.metric);
  return (
    `Build ${r.build.id} regressed ${phraseOf(r.metric)} against ${r.build.baseline}` +
    `${r.build.baselinePinned ? " (pinned baseline)" : ""}: ${signed(r.overall.diffPct, unit)}${interval(r.overall.ci95, unit)}, ` +
    `${r.overall.candidate.sessions} sessions vs ${r.overall.baseline.sessions}.`
  );
}

/** Block Kit of a build regression: the overall change, the regressed groups, a button to Compare. */
export function regressionBlocks(r: RegressionNotification): Block[] {
  const unit = unitOf(r.metric);
  const line = (g: RegressionNotification["overall"]) =>
    `• ${esc(g.key ?? "not sent")}: ${signed(g.diffPct, unit)}${interval(g.ci95, unit)}, ${g.verdict.replace("_", " ")}` +
    ` (${g.candidate.sessions} vs ${g.baseline.sessions} sessions)`;
  const section = (title: string, groups: RegressionNotification["overall"][]) =>
    groups.length
      ? [{ type: "section", text: { type: "mrkdwn", text: `*${title}*\n${groups.map(line).join("\n")}` } }]
      : [];
  return [
    {
      type: "header",
      text: {
        type: "plain_text",
        text: `Build regressed: ${r.build.id} (${r.metric})`.slice(0, 150),
        emoji: false,
      },
    },
    { type: "section", text: { type: "mrkdwn", text: esc(regressionText(r)) } },
    ...section("By platform", r.groups.platform),
    ...section("By GPU", r.groups.gpu),
    ...(absolute(r.links.compare)
      ? [
          {
            type: "actions",
            elements: [
              {
                type: "button",
                text: { type: "plain_text", text: "Open Compare" },
                url: r.links.compare,
                action_id: "open_compare",
              },
            ],
          },
        ]
      : []),
    { type: "context", elements: [{ type: "mrkdwn", text: `Judged ${r.createdAt} · event ${r.eventId}` }] },
  ];
}
