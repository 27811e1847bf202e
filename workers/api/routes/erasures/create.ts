import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { AuditDetail } from "../../../../schema/pg/columns.js";
import { erasures } from "../../../../schema/pg/schema.js";
import { CH_EVENTS } from "../../../shared/clickhouse.js";
import { sha256Hex } from "../../../shared/credentials/secrets.js";
import { ApiError } from "../../../shared/errors.js";
import { dataChanged } from "../../analytics/cache.js";
import { auditInProject } from "../../audit/project.js";
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
    const playerIdSha256 = await sha256Hex(playerId);
    // The entries name the erasure and the player's hash, as the erasure's own record does: never the
    // player id, which the audit log would otherwise keep past the erasure.
    const entry = (action: `erasure.${string}`, erasureId: string, more: AuditDetail = {}) => ({
      action,
      target: { type: "erasure", id: erasureId, label: null },
      detail: { playerIdSha256, ...more },
    });
    // The request's entry commits with the erasure's record, before anything is deleted: who asked
    // stays known even if the Worker dies midway.
    const { id } = await db.transaction(async (tx) => {
      const created = single(
        await tx
          .insert(erasures)
          .values({
            projectId: project.id,
            requestedBy: principal?.kind === "key" ? principal.keyId : null,
            playerIdSha256,
            status: "running",
          })
          .returning({ id: erasures.id }),
        "erasure insert",
      );
      await auditInProject(c, project, entry("erasure.requested", created.id), tx);
      return created;
    });
    const record = (steps: StepOutcome[]) => ({
      steps,
      // The events removed; the rollup rows derived from them are reported per table in `steps`.
      rowsRemoved: steps.find((s) => s.table === CH_EVENTS)?.rowsRemoved ?? 0,
    });
    try {
      const steps = await erasePlayer(c.get("ch"), project.id, playerId, async (done) => {
        await db.update(erasures).set(record(done)).where(eq(erasures.id, id));
      }).finally(() => dataChanged(db, c.env, project));
      const row = await db.transaction(async (tx) => {
        const done = single(
          await tx
            .update(erasures)
            .set({ ...record(steps), status: "completed", completedAt: new Date() })
            .where(eq(erasures.id, id))
            .returning(),
          "erasure update",
        );
        await auditInProject(
          c,
          project,
          entry("erasure.completed", id, { rowsRemoved: done.rowsRemoved }),
          tx,
        );
        return done;
      });
      return c.json({ success: true as const, data: erasureItem(row) }, 201);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await db.transaction(async (tx) => {
        await tx
          .update(erasures)
          .set({ status: "failed", error: message, completedAt: new Date() })
          .where(eq(erasures.id, id));
        await auditInProject(c, project, { ...entry("erasure.failed", id), outcome: "failure" }, tx);
      });
      console.error("erasure failed", id, message);
      throw new ApiError("UNAVAILABLE", `Erasure ${id} failed midway and is recorded as failed; retry it.`, {
        retryAfter: 5,
        extensions: { erasureId: id },
      });
    }
  });
}
