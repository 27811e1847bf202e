import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { TypedResponse } from "hono";
import { heatmapCellsJson } from "../../../analytics/heatmap.js";
import { eventMapId } from "../../../analytics/maps.js";
import { windowOf } from "../../../shared/window.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { HeatmapCellSchema, HeatmapQuery } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/{id}/heatmap",
  operationId: "getHeatmap",
  tags: ["Analytics"],
  summary: "Grid cells of a map: performance summaries, or counts of one event",
  description:
    "Without eventName (performance mode) the cells hold the performance-bearing events; with eventName (events mode), that event's occurrences. Both modes answer the same cell shape, the one the editor overlays parse; weight is the event count. With includeZ=true the cells are 3-D.",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: HeatmapQuery },
  responses: {
    200: envelope(z.array(HeatmapCellSchema), "Cells that hold events, by x then y."),
    ...errorResponses,
  },
});

type Cells = z.infer<typeof HeatmapCellSchema>[];

/**
 * The response c.json would write for `{ success: true, data }`, with `data` given as the JSON bytes
 * ClickHouse wrote for the cells (heatmapCellsJson) and spliced in as they came: parsing and
 * re-serializing thousands of cells was most of this endpoint's Worker time.
 */
function envelopeAround(cells: Uint8Array): TypedResponse<{ success: true; data: Cells }, 200, "json"> {
  const body = new Uint8Array(ENVELOPE_HEAD.length + cells.length + ENVELOPE_TAIL.length);
  body.set(ENVELOPE_HEAD, 0);
  body.set(cells, ENVELOPE_HEAD.length);
  body.set(ENVELOPE_TAIL, ENVELOPE_HEAD.length + cells.length);
  const res = new Response(body, { status: 200, headers: { "content-type": "application/json" } });
  // TypedResponse is a compile-time brand on a Response (its fields never exist at run time); the body
  // is the documented envelope, so the brand states what the bytes hold.
  return res as unknown as TypedResponse<{ success: true; data: Cells }, 200, "json">;
}

const ENVELOPE_HEAD = new TextEncoder().encode('{"success":true,"data":');
const ENVELOPE_TAIL = new TextEncoder().encode("}");

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const q = c.req.valid("query");
    const w = windowOf(Number(q.days), Date.now());
    const cells = await heatmapCellsJson(c.get("ch"), project.id, w, {
      mapId: await eventMapId(c.get("db"), project.id, q.mapId),
      cellSize: Number(q.cellSize),
      includeZ: q.includeZ === "true",
      eventName: q.eventName,
    });
    return envelopeAround(cells);
  });
}
