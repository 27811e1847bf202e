import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { erasures } from "../../../../schema/pg/schema.js";
import { CH_EVENTS } from "../../../shared/clickhouse.js";
import { sha256Hex } from "../../../shared/credentials/secrets.js";
import { ApiError } from "../../../shared/errors.js";
import { dataChanged } from "../../analytics/cache.js";
import type { AppEnv } from "../../context.js";
import { single } from "../../db.js";
import { erasePlayer, type StepOutcome } from "../../erasure/erase.js";
import { envelope, errorResponses, ProblemSchema, ProjectIdParam, policy } from "../../openapi.js";
import { ErasureBodySchema, ErasureSchema, erasureItem } from "./schema.js";

export const route = createRoute({
  method: "post",
  path: "/v1/projects/{id}/erasures",
  operationId: "createErasure",
  tags: ["Data administration"],
  summary: "Erase every event of one player in the project",
  description:
    "Removes the player's events (player_id equal to playerId, or session_id equal to it where " +
    "player_id is empty, plus the anonymous events of the player's sessions) and every player-derived " +
    "row, with synchronous lightweight DELETEs; other players are untouched. The audit entry (who, " +
    "when, rows removed per table) is kept and returned. Needs data:admin (API key only).",
  ...policy({ scope: "data:admin", project: "path" }),
  request: {
    params: ProjectIdParam,
    body: { required: true, content: { "application/json": { schema: ErasureBodySchema } } },
  },
  responses: {
    201: envelope(ErasureSchema, "The erasure, completed."),
    ...errorResponses,
    503: {
      description: "ClickHouse failed midway; the audit entry records it as failed. Safe to retry.",
      content: { "application/problem+json": { schema: ProblemSchema } },
    },
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const { playerId } = c.req.valid("json");
    // Set by the gate before projectFromPath could pass.
    const principal = c.get("principal");
    const db = c.get("db");
    const { id } = single(
      await db
        .insert(erasures)
        .values({
          projectId: project.id,
          requestedBy: principal?.kind === "key" ? principal.keyId : null,
          playerIdSha256: await sha256Hex(playerId),
          status: "running",
        })
        .returning({ id: erasures.id }),
      "erasure insert",
    );
    const record = (steps: StepOutcome[]) => ({
      steps,
      // The events removed; the rollup rows derived from them are reported per table in `steps`.
      rowsRemoved: steps.find((s) => s.table === CH_EVENTS)?.rowsRemoved ?? 0,
    });
    try {
      const steps = await erasePlayer(c.get("ch"), project.id, playerId, async (done) => {
        await db.update(erasures).set(record(done)).where(eq(erasures.id, id));
      }).finally(() => dataChanged(db, c.env, project));
      const row = single(
        await db
          .update(erasures)
          .set({ ...record(steps), status: "completed", completedAt: new Date() })
          .where(eq(erasures.id, id))
          .returning(),
        "erasure update",
      );
      return c.json({ success: true as const, data: erasureItem(row) }, 201);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await db
        .update(erasures)
        .set({ status: "failed", error: message, completedAt: new Date() })
        .where(eq(erasures.id, id));
      console.error("erasure failed", id, message);
      throw new ApiError("UNAVAILABLE", `Erasure ${id} failed midway and is recorded as failed; retry it.`, {
        retryAfter: 5,
        extensions: { erasureId: id },
      });
    }
  });
}
