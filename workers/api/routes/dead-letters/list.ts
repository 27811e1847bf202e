import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { batchKeyOfDeadLetter, deadLetterPrefix } from "../../../shared/dead-letters.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { DeadLetterSchema } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/dead-letters",
  operationId: "listDeadLetters",
  tags: ["Dead letters"],
  summary: "Batches that kept failing and are parked for replay",
  description: "At most 100, oldest day first. Needs data:admin.",
  ...policy({ scope: "data:admin", project: "path" }),
  request: { params: ProjectIdParam },
  responses: { 200: envelope(z.array(DeadLetterSchema), "Parked batches."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const listing = await c.env.DEAD_LETTERS.list({
      prefix: deadLetterPrefix(project.id),
      limit: 100,
      include: ["customMetadata"],
    });
    const data = listing.objects.map((o) => ({
      key: o.key,
      size: o.size,
      batchKey: batchKeyOfDeadLetter(o.key),
      parkedAt: o.customMetadata?.parkedAt ?? null,
      attempts: o.customMetadata?.attempts ? Number(o.customMetadata.attempts) : null,
      reason: o.customMetadata?.reason ?? null,
    }));
    return c.json({ success: true as const, data }, 200);
  });
}
