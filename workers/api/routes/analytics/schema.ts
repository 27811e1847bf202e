import { z } from "@hono/zod-openapi";
import { METRIC_KEYS, METRICS, type MetricKey } from "../../../shared/telemetry/metrics.js";
import { COMPARE_METRICS } from "../../analytics/compare.js";
import { BOUNDS, SLOW_BASES } from "../../analytics/frame-causes.js";
import { INSIGHT_GROUPS, INSIGHT_METRICS } from "../../analytics/insights.js";
import { REGRESSION_GROUPINGS, REGRESSION_QUERY_METRICS, VERDICTS } from "../../analytics/regressions.js";

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

const mapIdParam = z.string().min(1).max(255).openapi({
  description:
    "The user map identifier (as the SDK sends it) or the internal UUID of one of the project's maps",
});

export const HeatmapQuery = z.object({
  mapId: mapIdParam,
  cellSize: intEnum(["5", "10", "25", "50"], "25", "Grid cell size in world units"),
  days: intEnum(["1", "7", "14", "30"], "7", "UTC calendar days ending today, today included"),
  eventName: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .openapi({ description: "Events mode: only this event's occurrences form the cells" }),
  includeZ: z
    .enum(["true", "false"])
    .default("false")
    .openapi({ description: "true: 3-D cells, z joins x and y (events without a position are left out)" }),
  buildId: z
    .string()
    .trim()
    .min(1)
    .max(256)
    .optional()
    .openapi({ description: "Only events of this build_id (the dashboard's per-build and difference maps)" }),
  platform: z.string().min(1).max(64).optional().openapi({ description: "Only events of this platform" }),
  tails: z.enum(["0", "1"]).default("0").openapi({
    description:
      "1: each cell also carries its tail fields (p05_fps, p95_frame_time, max_memory, p95_gpu_time, p95_mem_vram), exact as documented on HeatmapCell. They cost most of the read (a percentile merges every distinct sample of the cell), so without tails=1 they are left out of the answer; the editor overlays read none of them. For one cell's tails, heatmap/cell is cheaper.",
    example: "0",
  }),
  why: z.enum(["0", "1"]).default("0").openapi({
    description:
      '1: each cell also carries what bounds its slow frames: heartbeats (with a frame length), slow (longer than one refresh of their display: 1000 / metrics["display.hz"], 60 Hz where not sent) and bounds (the slow ones by bound, the cell drill-down\'s rule with the heartbeat\'s own memory total). The dashboard\'s "bound by" mode.',
    example: "0",
  }),
  hitches: z.enum(["0", "1"]).default("0").openapi({
    description:
      "1 (performance mode): each cell also carries its hitches: hitch_heartbeats (heartbeats with a frame time whose session has a median frame time on the map in the window), hitches (over twice that median, the cell drill-down's rule), and the same for each session's first heartbeat in the cell (first_visit_heartbeats, first_visit_hitches). One more statement, over the map's samples of the window: it grows with them. The dashboard's hitches mode.",
    example: "0",
  }),
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
const nullable = (d: string) => z.number().nullable().describe(d);
const boundCountsSchema = z.object(
  Object.fromEntries(BOUNDS.map((b) => [b, count])) as Record<(typeof BOUNDS)[number], typeof count>,
);

// Build ids as the SDK reports them; surrounding spaces are not part of one (the CLI trims too).
const buildIdParam = (description: string) => z.string().trim().min(1).max(256).openapi({ description });

export const CompareQuery = z.object({
  baseline: buildIdParam("The known-good build_id"),
  candidate: buildIdParam("The build_id under test; must differ from baseline"),
  days,
  mapId: mapIdParam.optional(),
  platform: z.string().min(1).max(64).optional().openapi({ description: "Only events of this platform" }),
  fresh: z.enum(["0", "1"]).optional().openapi({ description: "1 bypasses (and refreshes) the ~60 s cache" }),
});

export const RegressionsQuery = z.object({
  candidate: buildIdParam("The build_id under test"),
  baseline: buildIdParam(
    "The known-good build_id; must differ from candidate. Default: the build whose first sample came last before the candidate's first",
  ).optional(),
  metric: z.enum(REGRESSION_QUERY_METRICS).default("frame_time").openapi({
    description:
      'frame_time, gpu_time (ms) and memory (MB) are worse when higher, fps when lower; each session\'s value is the median of its samples. poor_session_share: the share of the sessions judged poor (docs/analytics.md, "Session verdicts"), worse when higher; its diffPct, ci95 and minEffectPct are in percentage points, and it answers no cells',
    example: "frame_time",
  }),
  by: z.enum(REGRESSION_GROUPINGS).default("platform").openapi({
    description:
      "The hardware key of the groups; gpu_tier: GPUs tiered by their baseline sessions' median frame time (fast, mid, slow; too rare: unknown)",
    example: "platform",
  }),
  days,
  mapId: mapIdParam
    .optional()
    .openapi({ description: "Only that map's samples; also answers the map's significant cells" }),
  minEffectPct: z
    .string()
    .regex(/^\d{1,3}(\.\d{1,2})?$/, "a number from 0 to 100 with at most 2 decimals")
    .transform(Number)
    .refine((v) => v <= 100, "at most 100")
    .default(3)
    .openapi({
      type: "string",
      example: "3",
      description:
        "Smallest change of the median, in percent of the baseline's, that is a regression (0–100)",
    }),
  minSessions: z
    .string()
    .regex(/^\d{1,5}$/, "a whole number from 2 to 10000")
    .transform(Number)
    .refine((v) => v >= 2 && v <= 10_000, "from 2 to 10000")
    .default(20)
    .openapi({
      type: "string",
      example: "20",
      description: "Fewest sessions each build needs in a group or cell to be judged (2–10000)",
    }),
  sessionVerdicts: z.enum(["0", "1"]).default("0").openapi({
    example: "0",
    description:
      "1: each side of each group also carries sessionVerdicts and frames (always with metric=poor_session_share). One more read, which merges every session's heartbeats of the two builds in the window: it grows with their sessions",
  }),
});

const sessionVerdicts = z
  .object({
    good: count,
    acceptable: count,
    poor: count,
    unjudged: count.describe("Sessions with fewer than 6 heartbeats with a frame length: not judged"),
    poorShare: nullable("poor / (good + acceptable + poor), 4 decimals; null when none was judged"),
  })
  .describe(
    "The build's sessions in the group by verdict over their heartbeats of the window (on the map when one is asked): poor over 50 % slow or any frozen (700 ms), acceptable over 25 % slow or over 5 % hitches, else good",
  )
  .openapi("SessionVerdicts");
const frameCauses = z
  .object({
    heartbeats: count.describe("Heartbeats with a frame length (frame time, else 1000 / fps)"),
    slow: count.describe(
      "Heartbeats longer than one refresh of their display (1000 / display.hz; 60 Hz where not sent)",
    ),
    bounds: boundCountsSchema.describe("The slow heartbeats by what bounds their frame"),
    hitches: count.describe("Heartbeats over twice their session's median frame length"),
    minutesPlayed: z.number().describe("From each session's first to last heartbeat, summed; 2 decimals"),
    hitchesPerMinute: nullable("hitches / minutesPlayed, 2 decimals; null without a minute played"),
  })
  .openapi("FrameCauses");
const buildSide = z
  .object({
    sessions: count.describe(
      "Sessions of the build in the group with a sample of the metric (poor_session_share: the judged sessions)",
    ),
    median: z
      .number()
      .nullable()
      .describe(
        "Median of the sessions' values (nearest-rank), each the median of the session's samples (quantized within 0.39 %); poor_session_share: the share of the judged sessions that were poor (0–1, 4 decimals); null without sessions",
      ),
    sessionVerdicts: sessionVerdicts.optional(),
    frames: frameCauses
      .optional()
      .describe("What the group's slow heartbeats were bound by, and its hitches"),
  })
  .openapi("RegressionBuild");
const regressionFields = {
  baseline: buildSide,
  candidate: buildSide,
  diffPct: z
    .number()
    .nullable()
    .describe(
      "(candidate median − baseline median) / baseline median × 100, 2 decimals (poor_session_share: candidate share − baseline share, in percentage points); null without both",
    ),
  ci95: z
    .tuple([z.number(), z.number()])
    .nullable()
    .describe(
      "Interval for diffPct in percent of the baseline (exact bootstrap of the ratio of medians; poor_session_share: Newcombe's hybrid score interval, in points), corrected for the groups (or cells) tested by Benjamini–Hochberg; null when not tested",
    ),
  verdict: z
    .enum(VERDICTS)
    .describe(
      "regressed: ci95 wholly on the worse side and the change at least minEffectPct that way; improved: the same on the better side; insufficient_data: a build has fewer than minSessions sessions; otherwise no_change",
    ),
};
const regressionGroup = z
  .object({
    key: z
      .string()
      .nullable()
      .describe("The group's value; null where the sessions did not send it (and for overall)"),
    ...regressionFields,
  })
  .openapi("RegressionGroup");

export const RegressionsSchema = z
  .object({
    candidate: z.string(),
    baseline: z.string().describe("As given, or the default baseline found"),
    metric: z.enum(REGRESSION_QUERY_METRICS),
    by: z.enum(REGRESSION_GROUPINGS),
    // Every session of the two builds, tested alone (95 %); its key is null.
    overall: regressionGroup,
    groups: z
      .array(regressionGroup)
      .describe(
        "Worst first: regressed, no_change, improved, insufficient_data; within each the larger change for the worse first",
      ),
    cells: z
      .array(
        z
          .object({
            x: z.number().describe("Cell origin (floor(x / cellSize) · cellSize), world units"),
            y: z.number(),
            cellSize: count.describe("25, the heatmap's default cell size"),
            ...regressionFields,
          })
          .openapi("RegressionCell"),
      )
      .describe(
        "With mapId: the cells where the candidate is significantly worse or better (the same rules per cell, corrected across the cells tested), worst first; [] without mapId",
      ),
  })
  .openapi("BuildRegressions");

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

const mean = (what: string) =>
  z.number().describe(`Mean ${what} over the cell's events carrying it; 0 when none does`);
const sampled = (what: string) =>
  z.number().nullable().describe(`${what}; null when no event of the cell carries it`);
/** A tail field: in the answer only with tails=1 (absent is "not asked", null is "no sample"). */
const tail = (what: string) =>
  z
    .number()
    .nullable()
    .optional()
    .describe(`${what}; only with tails=1 (absent otherwise); null when no event of the cell carries it`);

export const HeatmapCellSchema = z
  .object({
    x: z.number().describe("Cell origin (floor(x / cellSize) · cellSize), world units"),
    y: z.number().describe("Cell origin, world units"),
    z: z.number().optional().describe("Cell origin, world units; only with includeZ=true"),
    weight: count.describe("Colour intensity for the overlays: the cell's event count"),
    event_count: count.describe(
      "Events in the cell: performance-bearing ones in performance mode, the named event's in events mode",
    ),
    avg_fps: mean("FPS"),
    avg_frame_time: mean("frame time (ms)"),
    avg_memory: mean("memory (MB)"),
    avg_gpu_time: sampled("Mean GPU time (ms)"),
    avg_mem_vram: sampled('Mean VRAM (MB, from metrics["mem.vram"])'),
    p05_fps: tail("5th percentile of FPS (exact)"),
    p95_frame_time: tail("95th percentile of frame time, ms (exact)"),
    max_memory: tail("Highest memory, MB"),
    p95_gpu_time: tail("95th percentile of GPU time, ms (exact)"),
    p95_mem_vram: tail("95th percentile of VRAM, MB (exact)"),
    heartbeats: count.optional().describe("Performance events with a frame length; only with why=1"),
    slow: count
      .optional()
      .describe(
        "Heartbeats longer than one refresh of their display (60 Hz where not sent); only with why=1",
      ),
    bounds: boundCountsSchema
      .optional()
      .describe("The slow heartbeats by what bounds their frame; only with why=1"),
    hitch_heartbeats: count
      .optional()
      .describe(
        "Heartbeats with a frame time whose session has a median frame time on the map; only with hitches=1",
      ),
    hitches: count
      .optional()
      .describe("Of those, frame times over twice their session's median; only with hitches=1"),
    first_visit_heartbeats: count
      .optional()
      .describe(
        "hitch_heartbeats that were their session's first heartbeat in the cell; only with hitches=1",
      ),
    first_visit_hitches: count
      .optional()
      .describe("Hitches among first_visit_heartbeats; only with hitches=1"),
  })
  .openapi("HeatmapCell", {
    description:
      "The shape the Unity, UE5 and Godot editor overlays parse, the same in both modes. The tail fields (p05_fps, p95_frame_time, max_memory, p95_gpu_time, p95_mem_vram) come only with tails=1. Percentiles are nearest-rank over samples kept to 8 mantissa bits: the k-th smallest, k = max(1, ceil(level · n)), at most 0.39 % below the sample.",
  });

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

/** A build as the rollup gives it (and the cache keeps it). */
export const BuildRowSchema = z.object({
  build_id: z.string(),
  first_seen: z.string(),
  last_seen: z.string(),
  event_count: count,
  session_count: count,
  player_count: count,
});

const MetricVerdictSchema = z
  .object({
    verdict: z.enum(VERDICTS),
    diff_pct: z.number().nullable().describe("Change of the median session value, percent of the baseline's"),
    ci95: z
      .tuple([z.number(), z.number()])
      .nullable()
      .describe("95 % interval of diff_pct (null when not tested: insufficient data)"),
    baseline_sessions: count,
    candidate_sessions: count,
  })
  .openapi("BuildMetricVerdict");

export const BuildSchema = BuildRowSchema.extend({
  pinned_baseline: z.boolean().describe("This build is the studio's pinned baseline (PUT builds/baseline)"),
  verdict: z
    .object({
      baseline_build_id: z.string(),
      baseline_pinned: z.boolean().describe("Judged against the pinned baseline rather than its predecessor"),
      judged_at: z.iso.datetime(),
      metrics: z.object({
        ...(Object.fromEntries(METRIC_KEYS.map((m) => [m, MetricVerdictSchema.nullable()])) as Record<
          MetricKey,
          z.ZodNullable<typeof MetricVerdictSchema>
        >),
        poor_session_share: MetricVerdictSchema.nullable().describe(
          "The share of poor sessions (diff_pct and ci95 in percentage points; the sessions are the judged ones); null for a build judged before this metric was",
        ),
      }),
      session_verdicts: z
        .object({
          good: count,
          acceptable: count,
          poor: count,
          unjudged: count,
          poor_share: z.number().nullable(),
        })
        .nullable()
        .describe(
          'The build\'s sessions by verdict over the judged window (docs/analytics.md, "Session verdicts"); null for a build judged before verdicts were',
        ),
    })
    .nullable()
    .describe(
      'The build\'s kept verdict against its baseline per metric, judged once when it first had 20 sessions (docs/analytics.md, "Verdicts per build"); null until then',
    ),
}).openapi("Build");

const p = z.number().nullable();

export const BuildSummarySchema = z
  .object({
    build_id: z.string(),
    event_count: count.describe("Events of the build in the window and filters carrying a compared metric"),
    session_count: count.describe("Distinct sessions among them (exact)"),
    player_count: count.describe("Distinct players among them (exact)"),
    first_seen: z.string().nullable().describe("Null when the build has no such event"),
    last_seen: z.string().nullable(),
  })
  .openapi("BuildSummary");

export const BuildComparisonSchema = z
  .object({
    baseline: BuildSummarySchema,
    candidate: BuildSummarySchema,
    diffs: z.array(
      z
        .object({
          metric: z.enum(COMPARE_METRICS),
          baselineP50: p.describe("Exact median of the baseline's samples; null without samples"),
          candidateP50: p,
          diffPct: p.describe(
            "(candidateP50 − baselineP50) / baselineP50 × 100, 2 decimals; null without both p50s or when the baseline p50 is 0",
          ),
          isRegression: z
            .boolean()
            .describe("candidateP50 > baselineP50 (every metric is lower-is-better); false without both"),
          baselineTail: p.describe("Exact 95th percentile of the baseline's samples"),
          candidateTail: p,
          baselineSamples: count,
          candidateSamples: count,
          verdict: z
            .enum(VERDICTS)
            .nullable()
            .describe(
              "frame_time, memory, gpu_time: the session-level verdict (builds/regressions with its defaults, overall or the platform filter's group); null for the other metrics",
            ),
          ci95: z
            .tuple([z.number(), z.number()])
            .nullable()
            .describe(
              "95 % interval of sessionDiffPct, percent of the baseline; null when not judged or too few sessions",
            ),
          sessionDiffPct: p.describe(
            "Change of the median session value, percent of the baseline's: what verdict judges",
          ),
          baselineSessions: count
            .nullable()
            .describe("Sessions of the baseline with the metric; null when not judged"),
          candidateSessions: count.nullable(),
        })
        .openapi("MetricDiff"),
    ),
  })
  .openapi("BuildComparison");

// A cell origin as the heatmap returns it: a finite number within the wire's position bound.
const cellOrigin = (axis: string) =>
  z
    .string()
    .regex(/^-?\d+(\.\d+)?$/, "a number (the cell origin as the heatmap returns it)")
    .refine((v) => Math.abs(Number(v)) <= 1e9, "at most 1e9 in magnitude")
    .openapi({ description: `The cell's ${axis} origin, as the heatmap's cells carry it`, example: "25" });

export const HeatmapCellQuery = z
  .object({
    mapId: mapIdParam,
    x: cellOrigin("x"),
    y: cellOrigin("y"),
    z: cellOrigin("z (a 3-D cell of includeZ=true)").optional(),
    cellSize: HeatmapQuery.shape.cellSize,
    days: HeatmapQuery.shape.days,
    buildId: HeatmapQuery.shape.buildId,
    platform: HeatmapQuery.shape.platform,
    profileId: z
      .uuid()
      .optional()
      .openapi({ description: "A threshold profile of the project: its marks judge the samples" }),
    metric: z.enum(METRIC_KEYS).default("fps").openapi({
      description:
        "The metric whose tail makes the worst samples (repro) and whose profile marks make a sample failing (breakdowns)",
    }),
  })
  .superRefine((q, ctx) => {
    // Every cell origin is a multiple of the cell size; anything else names no cell.
    for (const axis of ["x", "y", "z"] as const) {
      const v = q[axis];
      if (v !== undefined && Number(v) % Number(q.cellSize) !== 0) {
        ctx.addIssue({
          code: "custom",
          path: [axis],
          message: `must be a multiple of cellSize (${q.cellSize}): the origin of a cell`,
        });
      }
    }
  });

const groups = z.array(
  z
    .object({
      key: z.string().nullable().describe("The value; null where the events did not send it"),
      samples: count,
      meanFps: nullable("Mean FPS of the group's samples carrying it"),
      p95FrameTime: nullable("95th percentile of frame time, ms (quantized nearest-rank)"),
      failingPct: nullable(
        "Percentage (2 decimals) of the group's samples of `metric` worse than the profile's warn mark (good where warn is unset); null without a profile defining it",
      ),
      slow: count.describe("The group's slow heartbeats, judged as the drill-down's why.basis says"),
      bounds: boundCountsSchema.describe("The group's slow heartbeats by what bounds their frame"),
      hitchJudged: count.describe(
        "Heartbeats judged for hitches: a frame time and a median of their session",
      ),
      hitches: count.describe("Hitches among them"),
      hitchesPerMinute: nullable(
        "Hitches per minute played (the cell's heartbeat interval); null without one",
      ),
    })
    .openapi("CellBreakdownGroup"),
);
const hitchCount = z.object({
  judged: count,
  hitches: count,
  pct: nullable("Percentage (2 decimals) of the judged heartbeats that are hitches; null without one"),
});
const why = z
  .object({
    basis: z
      .enum(SLOW_BASES)
      .describe(
        "What makes a heartbeat slow: frame time over the profile's frame-time mark (warn, else good), else fps under its fps mark; without either (or without a profile), a frame longer than one refresh of its display (budget: 1000 / metrics[\"display.hz\"], heartbeats without a refresh rate not judged) where the cell's heartbeats carry the rate, else every heartbeat counts (all)",
      ),
    threshold: nullable("The mark of the basis; null for budget and all"),
    heartbeats: count.describe("Heartbeats (performance samples) in the cell"),
    slow: count.describe("Slow heartbeats"),
    bounds: z
      .array(
        z.object({
          bound: z.enum(BOUNDS),
          slow: count,
          pct: nullable("Percentage (2 decimals) of the slow heartbeats; null without one"),
        }),
      )
      .describe(
        "Every bound, in the rule's order: gpu, game_thread, render_thread (the longest stage, when it takes at least 80 % of the frame), io (the heartbeat window's disk read time at least one frame), memory (memory used at least 90 % of the device's total), unknown (nothing collected explains the frame)",
      ),
    hitches: hitchCount
      .extend({
        heartbeatIntervalMs: nullable(
          "Median gap between a session's consecutive heartbeats in the cell (gaps over 60 s are separate visits)",
        ),
        minutesPlayed: nullable("Judged heartbeats × the interval, in minutes"),
        perMinute: nullable("Hitches per minute played"),
        firstVisit: hitchCount.describe("Each session's first heartbeat in the cell"),
        laterVisits: hitchCount.describe("The sessions' later heartbeats in the cell"),
      })
      .describe("A hitch: a frame time over twice its session's median frame time on the map in the window"),
  })
  .openapi("CellWhy");
const device = z
  .object({
    gpu: z.string().nullable(),
    deviceModel: z.string().nullable(),
    resolution: z.string().nullable(),
    osVersion: z.string().nullable(),
  })
  .nullable()
  .openapi("CellDevice", { description: "Device context; null where the events carried none" });
const distribution = z
  .object({
    samples: count.describe("Samples carrying the metric"),
    mean: nullable("Mean"),
    p50: nullable("Median (quantized nearest-rank, as the heatmap's tails)"),
    p95: nullable("95th percentile"),
    p99: nullable("99th percentile"),
    p05: nullable("5th percentile (fps: the heatmap's p05_fps)"),
    max: nullable("Highest sample, exact (memory: the heatmap's max_memory)"),
    edges: z.array(z.number()).describe("Ascending bucket edges"),
    counts: z
      .array(count)
      .describe(
        "edges.length + 1 counts: below edges[0], [edges[i−1], edges[i]) for i = 1…edges.length − 1, at or above the last edge",
      ),
  })
  .openapi("CellDistribution");

export const CellDrilldownSchema = z
  .object({
    mapId: z.string(),
    cellSize: count,
    x: z.number(),
    y: z.number(),
    z: z.number().optional(),
    metric: z.enum(METRIC_KEYS),
    samples: count.describe("Performance-bearing events in the cell"),
    sessions: count.describe("Distinct sessions (exact)"),
    players: count.describe("Distinct players (exact)"),
    firstSeen: z.string().nullable().describe("ISO timestamp (µs) of the first sample; null without samples"),
    lastSeen: z.string().nullable(),
    // One per metric of the table; memory's says its unit.
    distributions: z.object(
      Object.fromEntries(
        METRICS.map((m) => [m.key, m.unit === "MB" ? distribution.describe("Megabytes") : distribution]),
      ) as Record<MetricKey, typeof distribution>,
    ),
    profile: z
      .object({
        id: z.string(),
        name: z.string(),
        marks: z.array(
          z.object({
            metric: z.enum(METRIC_KEYS),
            good: z.number().nullable(),
            warn: z.number().nullable(),
            samples: count,
            failingGoodPct: nullable("Percentage of the samples worse than the good mark; null without it"),
            failingWarnPct: nullable("Percentage of the samples worse than the warn mark; null without it"),
          }),
        ),
      })
      .nullable()
      .describe("With profileId: each metric the profile defines a mark for"),
    breakdowns: z.object({
      build_id: groups,
      platform: groups,
      engine_version: groups,
      gpu: groups,
      device_model: groups,
      resolution: groups,
      os_version: groups,
    }),
    why,
    worstSessions: z.array(
      z
        .object({
          sessionId: z.string(),
          player: z.string().describe("player_id, or the session id when it was empty"),
          buildId: z.string(),
          platform: z.string(),
          device,
          samples: count,
          p95FrameTime: nullable("95th percentile of the session's frame time in the cell"),
          p05Fps: nullable("5th percentile of the session's FPS in the cell"),
          firstSeen: z.string().describe("ISO timestamp of the session's first sample in the cell"),
          lastSeen: z.string(),
        })
        .openapi("CellWorstSession"),
    ),
    repro: z
      .object({
        mapId: z.string(),
        bounds: z.object({
          minX: z.number(),
          maxX: z.number(),
          minY: z.number(),
          maxY: z.number(),
          minZ: z.number().optional(),
          maxZ: z.number().optional(),
        }),
        metric: z.enum(METRIC_KEYS),
        worstSamples: count.describe("Samples in the metric's tail: at or below p05 (fps), at or above p95"),
        threshold: nullable("That tail figure"),
        position: z
          .object({ x: z.number(), y: z.number(), z: z.number().nullable() })
          .nullable()
          .describe("Median position of the worst samples (nearest-rank)"),
        camera: z
          .object({ yaw: z.number(), pitch: z.number() })
          .nullable()
          .describe(
            "Camera of the worst samples carrying one (degrees): yaw their circular median (the yaws read around the circle from the middle of the widest gap between them, then the nearest-rank median: one of the samples' yaws, in [0, 360), right for yaws straddling 0°), pitch their nearest-rank median",
          ),
        buildId: z.string().nullable().describe("The build the worst samples most often came from"),
        platform: z.string().nullable(),
        device,
        filters: z.object({ buildId: z.string().nullable(), platform: z.string().nullable() }),
      })
      .openapi("CellRepro"),
  })
  .openapi("HeatmapCellDrilldown");
