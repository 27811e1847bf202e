import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { AuditDetail } from "../../../../schema/pg/columns.js";
import { type ErasureRow, erasures } from "../../../../schema/pg/schema.js";
import { sha256Hex } from "../../../shared/credentials/secrets.js";
import { ApiError } from "../../../shared/errors.js";
import { auditInProject } from "../../audit/project.js";
import { requestActor, requestIp, SYSTEM_ACTOR } from "../../audit/record.js";
import type { AppEnv } from "../../context.js";
import { type Db, single } from "../../db.js";
import type { ErasureMessage } from "../../erasure/run.js";
import { envelope, errorResponses, ProblemSchema, ProjectIdParam, policy } from "../../openapi.js";
import { ErasureBodySchema, ErasureSchema, erasureItem } from "./schema.js";

/** How long POST …/erasures waits at most for the consumer to finish before answering 202. */
export const ERASURE_WAIT_MS = 20_000;

/**
 * The wait a request asks for (RFC 7240 `Prefer`): `respond-async` answers at once, `wait=N` waits at
 * most N seconds; never past ERASURE_WAIT_MS.
 */
export function waitOf(prefer: string | undefined): number {
  const tokens = (prefer ?? "").split(",").map((t) => t.trim().toLowerCase());
  if (tokens.includes("respond-async")) {
    return 0;
  }
  const wait = tokens.map((t) => /^wait\s*=\s*(\d{1,6})$/.exec(t)).find(Boolean);
  return wait ? Math.min(ERASURE_WAIT_MS, Number(wait[1]) * 1000) : ERASURE_WAIT_MS;
}

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
    "when, rows removed per table) is kept and returned. Needs data:admin (API key only).\n\n" +
    "The erasure runs on a queue consumer, not in the request: the request records it (`status: " +
    '"running"`, `startedAt` null until the consumer takes it) and waits up to ' +
    `${ERASURE_WAIT_MS / 1000} s for it. Done by then: 201 with the completed erasure, as before. ` +
    "Still running (a large project): 202 with the running erasure and a `Location` header naming " +
    "`GET …/erasures/{erasureId}`; poll it until `status` is `completed` or `failed`. `Prefer: " +
    "respond-async` answers 202 at once, `Prefer: wait=N` waits at most N seconds. A step that fails " +
    "is retried by the queue from where it stopped (`error` holds the last attempt's reason meanwhile); " +
    "after the last attempt the erasure is `failed` with that error.",
  ...policy({ scope: "data:admin", project: "path" }),
  request: {
    params: ProjectIdParam,
    body: { required: true, content: { "application/json": { schema: ErasureBodySchema } } },
  },
  responses: {
    201: envelope(ErasureSchema, "The erasure, completed."),
    202: {
      ...envelope(ErasureSchema, "The erasure, still running: poll GET …/erasures/{erasureId}."),
      headers: z.object({
        Location: z.string().openapi({ description: "GET …/erasures/{erasureId}, to poll" }),
      }),
    },
    ...errorResponses,
    503: {
      description:
        "The erasure could not be queued, or failed within the wait; the audit entry records it as failed. Safe to retry.",
      content: { "application/problem+json": { schema: ProblemSchema } },
    },
  },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The erasure's record once it has ended, or as it is when `waitMs` has passed. */
async function waitForEnd(db: Db, id: string, waitMs: number): Promise<ErasureRow> {
  const deadline = Date.now() + waitMs;
  let pause = 100;
  for (;;) {
    const row = single(await db.select().from(erasures).where(eq(erasures.id, id)).limit(1), "erasure read");
    if (row.status !== "running" || Date.now() >= deadline) {
      return row;
    }
    await sleep(Math.min(pause, Math.max(0, deadline - Date.now())));
    pause = Math.min(1000, pause * 2);
  }
}

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
    // stays known even if the erasure never runs.
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
    const actor = await requestActor(c, db);
    const message: ErasureMessage = {
      v: 1,
      erasureId: id,
      playerId,
      requester: {
        actor: actor?.actor ?? SYSTEM_ACTOR,
        ip: requestIp(c),
        userAgent: c.req.header("user-agent") ?? null,
      },
    };
    try {
      await c.env.ERASURES_QUEUE.send(message, { contentType: "json" });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await db.transaction(async (tx) => {
        await tx
          .update(erasures)
          .set({ status: "failed", error: `not queued: ${message}`, completedAt: new Date() })
          .where(eq(erasures.id, id));
        await auditInProject(c, project, { ...entry("erasure.failed", id), outcome: "failure" }, tx);
      });
      console.error("erasure not queued", id, message);
      throw new ApiError(
        "UNAVAILABLE",
        `Erasure ${id} could not be queued and is recorded as failed; retry it.`,
        {
          retryAfter: 5,
          extensions: { erasureId: id },
        },
      );
    }
    const row = await waitForEnd(db, id, waitOf(c.req.header("prefer")));
    if (row.status === "completed") {
      return c.json({ success: true as const, data: erasureItem(row) }, 201);
    }
    if (row.status === "failed") {
      throw new ApiError("UNAVAILABLE", `Erasure ${id} failed and is recorded as failed; retry it.`, {
        retryAfter: 5,
        extensions: { erasureId: id },
      });
    }
    c.header("Location", `/api/v1/projects/${project.id}/erasures/${id}`);
    return c.json({ success: true as const, data: erasureItem(row) }, 202);
  });
}
