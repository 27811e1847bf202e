import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { ApiError } from "../../../shared/errors.js";
import { eventMapId } from "../../analytics/maps.js";
import { buildRegressions, NoBaseline } from "../../analytics/regressions.js";
import type { AppEnv } from "../../context.js";
import { windowFor } from "../../data-retention/horizon.js";
import { readerOf } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { RegressionsQuery, RegressionsSchema } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/builds/regressions",
  operationId: "buildRegressions",
  tags: ["Analytics"],
  summary:
    "Whether the candidate build made a metric worse, per hardware group and map cell, with statistics",
  description:
    "The unit is the session: each session's value is the median of its samples of the metric. Per group (and overall, and per map cell with mapId) the two builds' session medians are compared: diffPct is the relative difference of the medians, ci95 its interval (exact bootstrap of the ratio of medians, deterministic), corrected for the number of groups by Benjamini–Hochberg. A group is regressed only when the interval lies wholly on the worse side (higher frame_time, gpu_time, memory; lower fps) and the change is at least minEffectPct; insufficient_data when either build has fewer than minSessions sessions there. For CI: gate on data.overall.verdict (docs/analytics.md, \"Gating CI on a regression\"). 422 when baseline is omitted and no build was first seen before the candidate.",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: RegressionsQuery },
  responses: {
    200: envelope(
      RegressionsSchema,
      "The overall comparison, the groups worst first, and the significant cells.",
    ),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    if (q.baseline !== undefined && q.baseline === q.candidate) {
      throw new ApiError("BAD_REQUEST", "query.candidate: must differ from baseline", {
        extensions: { field: "query.candidate" },
      });
    }
    const project = c.get("project");
    const mapId = q.mapId === undefined ? undefined : await eventMapId(c.get("db"), project.id, q.mapId);
    try {
      const data = await buildRegressions(
        c.get("ch"),
        project.id,
        await windowFor(readerOf(c), Number(q.days)),
        {
          candidate: q.candidate,
          baseline: q.baseline,
          metric: q.metric,
          by: q.by,
          mapId,
          minEffectPct: q.minEffectPct,
          minSessions: q.minSessions,
          sessionVerdicts: q.sessionVerdicts === "1",
        },
      );
      return c.json({ success: true as const, data }, 200);
    } catch (err) {
      if (err instanceof NoBaseline) {
        throw new ApiError(
          "UNPROCESSABLE",
          "query.baseline: no build of the project was first seen before the candidate; name the baseline",
          { extensions: { field: "query.baseline" } },
        );
      }
      throw err;
    }
  });
}
