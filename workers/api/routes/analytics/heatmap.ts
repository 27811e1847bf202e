import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { eventHeatmapCells, perfHeatmapCells } from "../../../analytics/heatmap.js";
import { windowOf } from "../../../shared/window.js";
import type { AppEnv } from "../../context.js";
import { projectFor, requireScope } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, security } from "../../openapi.js";
import { HeatmapCellSchema, HeatmapQuery } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/{id}/heatmap",
  operationId: "getHeatmap",
  tags: ["Analytics"],
  summary: "Grid cells of a map: performance summaries, or counts of one event",
  description:
    "Without eventName (performance mode): performance-bearing events per cell with FPS, frame time, memory and GPU time summaries. With eventName (events mode): that event's count per cell.",
  security: security.keyOrToken,
  middleware: [requireScope("analytics:read")],
  request: { params: ProjectIdParam, query: HeatmapQuery },
  responses: {
    200: envelope(z.array(HeatmapCellSchema), "Cells that hold events, by x then y."),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = await projectFor(c, c.req.valid("param").id);
    const q = c.req.valid("query");
    const w = windowOf(Number(q.days), Date.now());
    const query = { mapId: q.mapId, cellSize: Number(q.cellSize) };
    const data =
      q.eventName === undefined
        ? await perfHeatmapCells(c.get("ch"), project.id, w, query)
        : await eventHeatmapCells(c.get("ch"), project.id, w, { ...query, eventName: q.eventName });
    return c.json({ success: true as const, data }, 200);
  });
}
