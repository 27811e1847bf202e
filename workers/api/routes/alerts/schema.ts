import { z } from "@hono/zod-openapi";
import { ALERT_STATUSES, PAIR_RESULTS } from "../../../../schema/pg/columns.js";
import { ALERT_METRIC_KEYS } from "../../../shared/telemetry/metrics.js";
import { CELL_SIZES, THRESHOLD_LEVELS } from "../../alerts/metrics.js";
import { text } from "../../fields.js";

const unique = (ids: string[]) => new Set(ids).size === ids.length;

const fields = {
  name: text(200, { trim: true }),
  mapId: z.uuid().describe("Internal map id"),
  thresholdProfileId: z.uuid().describe("Primary profile; alone, a bundle of one"),
  thresholdProfileIds: z
    .array(z.uuid())
    .min(1)
    .max(10)
    .refine(unique, "must not name a profile twice")
    .describe("The bundle, 1 to 10 profiles evaluated independently; the first is primary"),
  metric: z
    .enum(ALERT_METRIC_KEYS)
    .describe(
      "What a cell is judged by: a metric's mean, or budget_share, the share (0 to 1) of the cell's heartbeats " +
        "within one refresh of their display (1000 / display.hz, 60 Hz where not sent), against the profile's " +
        "budgetShareGood or budgetShareWarn",
    ),
  thresholdLevel: z.enum(THRESHOLD_LEVELS),
  failPercentage: z
    .number()
    .gt(0)
    .lte(100)
    .describe("Triggered when the share of failing cells, in percent, exceeds this"),
  evaluationDays: z.number().int().min(1).max(30).describe("UTC calendar days ending today"),
  cellSize: z
    .number()
    .int()
    .refine((n) => (CELL_SIZES as readonly number[]).includes(n), "must be one of 5, 10, 25, 50")
    .describe("Grid cell size in world units: 5, 10, 25 or 50"),
  cooldownMinutes: z.number().int().min(0).max(10_080).describe("Minimum minutes between notifications"),
  channelIds: z.array(z.uuid()).max(20).refine(unique, "must not name a channel twice"),
};

type BundleInput = { thresholdProfileId?: string; thresholdProfileIds?: string[] };

/** Both forms may be sent only when they agree on the primary. */
function bundleAgrees(body: BundleInput, ctx: z.RefinementCtx): void {
  const { thresholdProfileId: one, thresholdProfileIds: many } = body;
  if (one !== undefined && many !== undefined && many[0] !== one) {
    ctx.addIssue({
      code: "custom",
      path: ["thresholdProfileId"],
      message: "must equal the first element of thresholdProfileIds",
    });
  }
}

/** The bundle a request asks for, or undefined when it leaves the bundle alone. */
export function requestedBundle(body: BundleInput): string[] | undefined {
  return body.thresholdProfileIds ?? (body.thresholdProfileId ? [body.thresholdProfileId] : undefined);
}

export const CreateRuleSchema = z
  .object({
    name: fields.name,
    mapId: fields.mapId,
    thresholdProfileId: fields.thresholdProfileId.optional(),
    thresholdProfileIds: fields.thresholdProfileIds.optional(),
    metric: fields.metric,
    thresholdLevel: fields.thresholdLevel,
    failPercentage: fields.failPercentage,
    evaluationDays: fields.evaluationDays,
    cellSize: fields.cellSize,
    cooldownMinutes: fields.cooldownMinutes,
    channelIds: fields.channelIds.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.thresholdProfileId === undefined && body.thresholdProfileIds === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["thresholdProfileId"],
        message: "required (or thresholdProfileIds)",
      });
    }
    bundleAgrees(body, ctx);
  })
  .openapi("CreateAlertRule");

export const UpdateRuleSchema = z
  .object({
    name: fields.name,
    mapId: fields.mapId,
    thresholdProfileId: fields.thresholdProfileId,
    thresholdProfileIds: fields.thresholdProfileIds,
    metric: fields.metric,
    thresholdLevel: fields.thresholdLevel,
    failPercentage: fields.failPercentage,
    evaluationDays: fields.evaluationDays,
    cellSize: fields.cellSize,
    cooldownMinutes: fields.cooldownMinutes,
    channelIds: fields.channelIds,
    isActive: z.boolean().describe("true reactivates, subject to the plan's active-rule quota"),
  })
  .partial()
  .superRefine(bundleAgrees)
  .openapi("UpdateAlertRule");

export const LastEvaluationSchema = z
  .object({
    thresholdProfileId: z.uuid(),
    evaluatedAt: z.iso.datetime().describe("When the evaluation was recorded"),
    runAt: z.iso.datetime().describe("The scheduled run it belongs to (the data window's clock)"),
    result: z
      .enum(PAIR_RESULTS)
      .describe("The status found, or error when the run could not evaluate the profile"),
    failCount: z.number().int().nullable(),
    totalCount: z.number().int().nullable(),
    failPercentage: z.number().nullable(),
    error: z
      .string()
      .nullable()
      .describe("Why the last evaluation (or attempt) failed; null when it did not"),
  })
  .openapi("AlertRuleEvaluation");

export const RuleSchema = z
  .object({
    id: z.uuid(),
    projectId: z.uuid(),
    mapId: z.uuid(),
    thresholdProfileId: z
      .uuid()
      .nullable()
      .describe("First of thresholdProfileIds; null only for a rule deactivated because its bundle emptied"),
    thresholdProfileIds: z.array(z.uuid()),
    name: z.string(),
    metric: z.enum(ALERT_METRIC_KEYS),
    thresholdLevel: z.enum(THRESHOLD_LEVELS),
    failPercentage: z.number(),
    evaluationDays: z.number().int(),
    cellSize: z.number().int(),
    cooldownMinutes: z.number().int(),
    isActive: z.boolean(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    channelIds: z.array(z.uuid()),
    lastEvaluatedAt: z.iso
      .datetime()
      .nullable()
      .describe(
        "When the rule was last evaluated: the oldest of its profiles' last evaluations, so one profile left " +
          "behind shows. Null until every profile has been evaluated once. Evaluation runs every 5 minutes; " +
          "older than two intervals means evaluation is behind",
      ),
    lastResult: z
      .enum(PAIR_RESULTS)
      .nullable()
      .describe(
        "The last evaluation's outcome: error if any profile's last evaluation failed, else triggered if any " +
          "profile's is, else resolved; null before the first evaluation",
      ),
    lastEvaluations: z
      .array(LastEvaluationSchema)
      .describe("Each profile's last evaluation, in bundle order; a profile not yet evaluated is absent"),
  })
  .openapi("AlertRule");

export const RuleListItemSchema = RuleSchema.extend({
  mapName: z.string().describe("Name of the rule's map"),
  thresholdProfileNames: z.array(z.string()).describe("Names of thresholdProfileIds, in the same order"),
  lastStatus: z
    .enum(ALERT_STATUSES)
    .nullable()
    .describe("triggered while any profile of the bundle is; null before the first evaluation"),
  lastStatusAt: z.iso.datetime().nullable().describe("When the newest of those statuses was recorded"),
}).openapi("AlertRuleListItem");

export const WorstCellSchema = z
  .object({
    x: z.number().describe("The cell's origin: floor(x / cellSize) · cellSize"),
    y: z.number().describe("The cell's origin: floor(y / cellSize) · cellSize"),
    cellSize: z.number().int(),
    value: z
      .number()
      .describe(
        "The cell's mean of the rule's metric, as judged (budget_share: its share within budget, 0 to 1)",
      ),
    samples: z
      .number()
      .int()
      .describe("Samples of the metric the mean is over (budget_share: heartbeats with a frame length)"),
    failingShare: z
      .number()
      .optional()
      .describe(
        "Share (0 to 1) of those samples that are each worse than the threshold; absent on events recorded before it was kept",
      ),
    link: z.string().describe("The cell's panel: the heatmap link with at=x,y"),
  })
  .openapi("AlertWorstCell");

export const EvaluationEventSchema = z
  .object({
    id: z.uuid(),
    alertRuleId: z.uuid(),
    ruleName: z.string().describe("Rule name at the time of evaluation"),
    metric: z.enum(ALERT_METRIC_KEYS),
    status: z.enum(ALERT_STATUSES),
    failCount: z.number().int(),
    totalCount: z.number().int(),
    failPercentage: z.number(),
    notified: z.boolean(),
    createdAt: z.iso.datetime(),
    thresholdProfileId: z.uuid().nullable(),
    thresholdProfileName: z.string().nullable(),
    thresholdProfileDeleted: z.boolean(),
    worstCells: z
      .array(WorstCellSchema)
      .describe(
        "A triggered event's worst failing cells, at most 10, worst first: the worst mean (lowest fps, " +
          "highest time or memory), then more samples, then lower x, then lower y. Empty for a resolved " +
          "event and for events recorded before evaluations kept them",
      ),
    links: z
      .object({
        heatmap: z
          .string()
          .describe(
            "The heatmap page set to the evaluated map, metric, profile, cell size and days (all builds); " +
              "absolute when the service knows its public origin (APP_URL), else root-relative",
          ),
      })
      .nullable()
      .describe("Null for events recorded before evaluations kept their scope"),
  })
  .openapi("AlertEvaluationEvent");

export const RuleIdParams = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" }, description: "Project UUID" }),
  alertId: z.uuid().openapi({ param: { name: "alertId", in: "path" }, description: "Alert rule UUID" }),
});

export const HistoryQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});
