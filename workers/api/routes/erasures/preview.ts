import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { readerRetention } from "../../data-retention/horizon.js";
import { REBUILT_ROLLUPS } from "../../erasure/rollups.js";
import { countRows, ERASURE_STEPS, playerSessions } from "../../erasure/steps.js";
import { readerOf } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { ErasureBodySchema, ErasurePreviewSchema } from "./schema.js";

export const route = createRoute({
  method: "post",
  path: "/v1/projects/{id}/erasures/preview",
  operationId: "previewErasure",
  tags: ["Data administration"],
  summary: "What an erasure of one player would remove, changing nothing",
  description:
    "Counts the player's rows in every table the erasure deletes from, and names the rollups it " +
    "rebuilds for the player's days, as every read sees them: rows dated before the studio's retention " +
    "horizon are expired and not counted (the erasure still deletes any left before the purge). A POST " +
    "so the player id stays out of URLs and logs. Needs data:admin.",
  ...policy({ scope: "data:admin", project: "path" }),
  request: {
    params: ProjectIdParam,
    body: { required: true, content: { "application/json": { schema: ErasureBodySchema } } },
  },
  responses: { 200: envelope(ErasurePreviewSchema, "What would go."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const ch = c.get("ch");
    const bound = await playerSessions(ch, c.get("project").id, c.req.valid("json").playerId);
    // Reads never return an expired row: neither does the preview count one.
    const from = new Date((await readerRetention(readerOf(c))).fromMs).toISOString().slice(0, 10);
    const tables = [];
    for (const step of ERASURE_STEPS) {
      tables.push({ table: step.table, rows: await countRows(ch, step, bound, from) });
    }
    const data = { tables, rebuilt: REBUILT_ROLLUPS, days: bound.days.filter((d) => d >= from).length };
    return c.json({ success: true as const, data }, 200);
  });
}
