import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { deadLetterPrefix } from "../../../shared/dead-letters.js";
import { auditInProject } from "../../audit/project.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { ReplaySchema } from "./schema.js";

/** Each batch costs a read, a queue send and a delete: stay well inside one invocation's subrequests. */
const REPLAY_PER_CALL = 25;

export const route = createRoute({
  method: "post",
  path: "/v1/projects/{id}/dead-letters/replay",
  operationId: "replayDeadLetters",
  tags: ["Dead letters"],
  summary: "Send parked batches back to the events queue",
  description:
    "Replay is safe to repeat: the consumer skips events it already holds. A batch is removed from the " +
    "park only once the queue has it; if it fails again it is parked again. Needs data:admin.",
  ...policy({ scope: "data:admin", project: "path" }),
  request: { params: ProjectIdParam },
  responses: { 200: envelope(ReplaySchema, "What this call replayed."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const listing = await c.env.DEAD_LETTERS.list({
      prefix: deadLetterPrefix(project.id),
      limit: REPLAY_PER_CALL,
    });
    let replayed = 0;
    for (const { key } of listing.objects) {
      const object = await c.env.DEAD_LETTERS.get(key);
      if (!object) {
        continue;
      }
      await c.env.EVENTS_QUEUE.send(new Uint8Array(await object.arrayBuffer()), { contentType: "bytes" });
      await c.env.DEAD_LETTERS.delete(key);
      replayed++;
    }
    // A call that found nothing to replay changed nothing and records nothing.
    if (replayed > 0) {
      await auditInProject(c, project, {
        action: "dead_letters.replayed",
        target: { type: "project", id: project.id, label: project.name },
        detail: { replayed, remaining: listing.truncated },
      });
    }
    return c.json({ success: true as const, data: { replayed, remaining: listing.truncated } }, 200);
  });
}
