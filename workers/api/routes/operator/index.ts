import { Hono } from "hono";
import { ApiError, DependencyDown } from "../../../shared/errors.js";
import type { AppEnv } from "../../context.js";
import { announceTenantChange } from "../../credentials/operator.js";
import * as health from "./health.js";
import { requireOperator } from "./require.js";

// Not in the Web API document: an operator's endpoint, not a client's. POST /api/operator/credential-changes
// with `Authorization: Bearer <OPERATOR_SECRET>` and {"tenantId", "projectIds"?} announces a change made
// outside the Workers (credentials/operator.ts); the admin CLI calls it after each change it commits.
// GET /api/operator/health, with the same secret, is the readiness view (health.ts). POST
// /api/operator/number-backfills numbers the events stored before dense numbers existed (below).
export const operatorApp = new Hono<AppEnv>();
health.register(operatorApp);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuidField(body: object, name: string): string {
  const v: unknown = Reflect.get(body, name);
  if (typeof v !== "string" || !UUID.test(v)) {
    throw new ApiError("BAD_REQUEST", `${name} must be a UUID.`, { extensions: { field: name } });
  }
  return v;
}

operatorApp.post("/operator/credential-changes", async (c) => {
  await requireOperator(c);
  const body: unknown = await c.req.json().catch(() => null);
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError("BAD_REQUEST", "The body must be a JSON object with tenantId.", {
      extensions: { field: "body" },
    });
  }
  const tenantId = uuidField(body, "tenantId");
  const listed: unknown = Reflect.get(body, "projectIds") ?? [];
  if (
    !Array.isArray(listed) ||
    listed.length > 1000 ||
    !listed.every((p) => typeof p === "string" && UUID.test(p))
  ) {
    throw new ApiError("BAD_REQUEST", "projectIds must be a list of at most 1000 UUIDs.", {
      extensions: { field: "projectIds" },
    });
  }
  const announced = await announceTenantChange(c.env, c.get("config"), tenantId, listed);
  return c.json({ success: true as const, data: { tenantId, buckets: announced.buckets } }, 200);
});

/** Projects per request of POST /api/operator/number-backfills. */
const BACKFILL_PROJECTS_PER_REQUEST = 1000;

// POST /api/operator/number-backfills with {"projectIds": [...]} (at most 1000): numbers the events each
// project stored before dense numbers existed (analytics/numbers-backfill.ts), one jobs-queue message
// per project, each page sending the next. 202 once every message is queued; asking again is harmless.
operatorApp.post("/operator/number-backfills", async (c) => {
  await requireOperator(c);
  const body: unknown = await c.req.json().catch(() => null);
  const listed: unknown = typeof body === "object" && body !== null ? Reflect.get(body, "projectIds") : null;
  if (
    !Array.isArray(listed) ||
    listed.length === 0 ||
    listed.length > BACKFILL_PROJECTS_PER_REQUEST ||
    !listed.every((p) => typeof p === "string" && UUID.test(p))
  ) {
    throw new ApiError(
      "BAD_REQUEST",
      `projectIds must be a list of 1 to ${BACKFILL_PROJECTS_PER_REQUEST} project UUIDs.`,
      { extensions: { field: "projectIds" } },
    );
  }
  const projectIds = [...new Set(listed as string[])];
  for (let i = 0; i < projectIds.length; i += 100) {
    // A queue that refuses is a retryable 503; the projects already queued are harmless to queue again.
    await c.env.JOBS_QUEUE.sendBatch(
      projectIds.slice(i, i + 100).map((projectId) => ({
        body: { v: 1 as const, kind: "numbers-backfill" as const, projectId },
        contentType: "json" as const,
      })),
    ).catch((err: unknown) => {
      throw new DependencyDown("Queue", err);
    });
  }
  return c.json({ success: true as const, data: { queued: projectIds.length } }, 202);
});
