import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { heatmapCells } from "../../analytics/heatmap.js";
import { eventMapId } from "../../analytics/maps.js";
import type { AppEnv } from "../../context.js";
import { windowFor } from "../../data-retention/horizon.js";
import { readerOf } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { HeatmapCellSchema, HeatmapQuery } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/heatmap",
  operationId: "getHeatmap",
  tags: ["Analytics"],
  summary: "Grid cells of a map: performance summaries, or counts of one event",
  description:
    "Without eventName (performance mode) the cells hold the performance-bearing events; with eventName (events mode), that event's occurrences. Both modes answer the same cell shape, the one the editor overlays parse; weight is the event count. With includeZ=true the cells are 3-D. buildId and platform narrow the events (the overlays send neither). The tail fields (percentiles and max_memory) are computed only with tails=1: without it the read is sums and counts only, and at cell sizes 25 and 50 (performance mode, no build or platform) its cost is bounded by the grid, not by the events.",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: HeatmapQuery },
  responses: {
    200: envelope(z.array(HeatmapCellSchema), "Cells that hold events, by x then y."),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const q = c.req.valid("query");
    const w = await windowFor(readerOf(c), Number(q.days));
    const data = await heatmapCells(c.get("ch"), project.id, w, {
      mapId: await eventMapId(c.get("db"), project.id, q.mapId),
      cellSize: Number(q.cellSize),
      includeZ: q.includeZ === "true",
      eventName: q.eventName,
      buildId: q.buildId,
      platform: q.platform,
      tails: q.tails === "1",
      why: q.why === "1",
      hitches: q.hitches === "1",
    });
    return c.json({ success: true as const, data }, 200);
  });
}
