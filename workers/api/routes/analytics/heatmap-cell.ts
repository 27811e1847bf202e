import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { thresholdProfiles } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import { cellDrilldown, type ProfileMarks, profileMarks } from "../../analytics/cell.js";
import { eventMapId } from "../../analytics/maps.js";
import type { AppEnv } from "../../context.js";
import { windowFor } from "../../data-retention/horizon.js";
import { readerOf } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { CellDrilldownSchema, HeatmapCellQuery } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/heatmap/cell",
  operationId: "getHeatmapCell",
  tags: ["Analytics"],
  summary: "One heatmap cell in depth: distributions, who suffers, worst sessions, repro",
  description:
    "The performance-bearing events of one cell (x, y and optionally z as the heatmap returns them, same cellSize, days, buildId and platform). Distributions of fps, frame time, memory (MB) and GPU time: samples, mean, p50/p95/p99 (quantized nearest-rank, as the heatmap's tails) and a histogram over log-spaced edges, 4 per octave: fps, frame time and GPU time 2^(k/4) for k = 0…40 (1 to 1,024; a 1 s hitch has its own bucket), memory 2^(k/4) MB for k = 16…64 (16 MB to 64 GiB); counts has one more entry than edges (below the first, each [edge, next), at or above the last). With profileId, the share of each metric's samples worse than the profile's good and warn marks (fps below, the others above; equal passes; the profile's device filters are not applied, as on the heatmap). Breakdowns by build_id, platform, engine_version and the device context (gpu, device_model, resolution, os_version; null key: not sent), worst first (failing share, then p95 frame time), 20 per dimension. The 10 sessions with the highest p95 frame time in the cell. repro: the cell's world bounds, and over the worst samples of `metric` (its p05 for fps, p95 otherwise, and beyond) the median position and camera pitch, the circular median of the camera yaw (read around the circle from the middle of the widest gap between the yaws; right for yaws straddling 0°), and the build, platform and device they most often came from. A cell without samples answers zeros and nulls.",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: HeatmapCellQuery },
  responses: {
    200: envelope(CellDrilldownSchema, "The cell's distributions, breakdowns, worst sessions and repro."),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const q = c.req.valid("query");
    const db = c.get("db");
    let profile: ProfileMarks | undefined;
    if (q.profileId !== undefined) {
      const [p] = await db
        .select()
        .from(thresholdProfiles)
        .where(and(eq(thresholdProfiles.id, q.profileId), eq(thresholdProfiles.projectId, project.id)));
      if (!p) {
        throw new ApiError("NOT_FOUND", "query.profileId: no threshold profile of this project has this id", {
          extensions: { field: "query.profileId" },
        });
      }
      profile = profileMarks(p);
    }
    const data = await cellDrilldown(c.get("ch"), project.id, await windowFor(readerOf(c), Number(q.days)), {
      mapId: await eventMapId(db, project.id, q.mapId),
      cellSize: Number(q.cellSize),
      x: Number(q.x),
      y: Number(q.y),
      z: q.z === undefined ? undefined : Number(q.z),
      buildId: q.buildId,
      platform: q.platform,
      metric: q.metric,
      profile,
    });
    return c.json({ success: true as const, data }, 200);
  });
}
