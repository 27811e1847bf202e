import { z } from "@hono/zod-openapi";
import { INSIGHT_GROUPS, INSIGHT_METRICS } from "../../../analytics/insights.js";

// Integer enumerations arrive as query strings; an enum of their spellings gives a 400 that names the
// parameter and lists the allowed values.
function intEnum<const V extends readonly string[]>(values: V, def: V[number], description: string) {
  return z.enum(values).default(def).openapi({ description, example: def });
}

/** Step names as given, in order; surrounding spaces are not part of a name. */
export function stepNames(steps: string): string[] {
  return steps.split(",").map((name) => name.trim());
}

export const days = intEnum(["7", "14", "30", "90"], "30", "UTC calendar days ending today, today included");

export const DaysQuery = z.object({ days });

export const HeatmapQuery = z.object({
  mapId: z.string().min(1).max(255).openapi({ description: "Map identifier as sent by the SDK" }),
  cellSize: intEnum(["5", "10", "25", "50"], "25", "Grid cell size in world units"),
  days: intEnum(["1", "7", "14", "30"], "7", "UTC calendar days ending today, today included"),
  eventName: z.string().min(1).max(128).optional().openapi({ description: "Events mode: count this event" }),
});

export const FunnelQuery = z.object({
  steps: z
    .string()
    .superRefine((value, ctx) => {
      const names = stepNames(value);
      if (names.length < 2 || names.length > 8) {
        ctx.addIssue({ code: "custom", message: `2 to 8 comma-separated event names, got ${names.length}` });
      } else if (names.some((n) => n.length === 0 || n.length > 128)) {
        ctx.addIssue({ code: "custom", message: "every step name must have 1 to 128 characters" });
      }
    })
    .openapi({
      description: "2 to 8 comma-separated event names; a name may repeat",
      example: "match_start,match_end",
    }),
  window: intEnum(["3600", "21600", "86400", "604800"], "86400", "Seconds from step 1 to the last step"),
  days,
});

export const InsightsQuery = z.object({
  metric: z.enum(INSIGHT_METRICS),
  groupBy: z.enum(INSIGHT_GROUPS),
  days,
  limit: intEnum(["10", "20", "50"], "10", "Maximum number of groups"),
  eventName: z.string().min(1).max(128).optional(),
});

export const BuildsQuery = z.object({
  days,
  buildId: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .openapi({ description: "That one build, even outside the newest 50" }),
  fresh: z.enum(["0", "1"]).optional().openapi({ description: "1 bypasses (and refreshes) the ~60 s cache" }),
});

const count = z.number().int();

export const DashboardSchema = z
  .object({
    kpis: z.object({
      dau: count.describe("Unique players in the last 24 hours"),
      mau: count.describe("Unique players in the last 30 days"),
      sessions: count.describe("Distinct session ids in the window"),
      events: count.describe("Events in the window"),
      fetchedAt: z.number().describe("Unix ms of query execution"),
    }),
    dailyActiveUsers: z.array(z.object({ date: z.string(), count })),
    topEvents: z.array(z.object({ event_name: z.string(), count })),
  })
  .openapi("Dashboard");

const metric = z.number().nullable();

export const HeatmapCellSchema = z
  .object({
    x: z.number().describe("Cell origin, world units"),
    y: z.number().describe("Cell origin, world units"),
    count: count.describe("Events in the cell"),
    fps_avg: metric.optional(),
    fps_p05: metric.optional(),
    frame_time_avg: metric.optional(),
    frame_time_p95: metric.optional(),
    memory_avg: metric.optional(),
    memory_max: metric.optional(),
    gpu_time_avg: metric.optional(),
    gpu_time_p95: metric.optional(),
  })
  .openapi("HeatmapCell", { description: "Metric fields only in performance mode; null without samples." });

const rate = z.number().nullable().describe("Percentage, 2 decimals; null while the day has not ended");

export const RetentionCohortSchema = z
  .object({ cohort_date: z.string(), cohort_size: count, day1: rate, day7: rate, day30: rate })
  .openapi("RetentionCohort");

export const FunnelStepSchema = z
  .object({ step: count, event_name: z.string(), count, pct: z.number(), drop_off_pct: z.number() })
  .openapi("FunnelStep");

export const InsightsSchema = z
  .object({
    metric: z.enum(INSIGHT_METRICS),
    groupBy: z.enum(INSIGHT_GROUPS),
    days: count,
    groups: z.array(z.object({ key: z.string(), value: count })),
    total: count,
  })
  .openapi("Insights");

export const BuildSchema = z
  .object({
    build_id: z.string(),
    first_seen: z.string(),
    last_seen: z.string(),
    event_count: count,
    session_count: count,
    player_count: count,
  })
  .openapi("Build");
