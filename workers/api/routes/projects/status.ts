import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, count, eq } from "drizzle-orm";
import { alertRules } from "../../../../schema/pg/schema.js";
import { batchesInFlight, cachedEventKpis } from "../../analytics/project-status.js";
import type { AppEnv } from "../../context.js";
import { readerRetention } from "../../data-retention/horizon.js";
import { readerOf } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { retentionItem } from "../data-retention/schema.js";
import { ProjectStatusSchema, projectItem } from "./schema.js";

const StatusQuery = z.object({
  fresh: z
    .enum(["0", "1"])
    .optional()
    .openapi({ description: "1 recomputes the event KPIs now (and refreshes the ~60 s cache)" }),
});

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/status",
  operationId: "getProjectStatus",
  tags: ["Projects"],
  summary: "Project details and key performance indicators",
  description:
    "The event KPIs are cached about 60 seconds per project; `kpis.fetchedAt` (Unix ms) says when they " +
    "were computed, and fresh=1 recomputes them. activeAlertRules is always current. The KPIs count only " +
    "the events the studio still keeps (`retention`: its days and the oldest day kept).",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: StatusQuery },
  responses: { 200: envelope(ProjectStatusSchema, "Project and KPIs."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    // Authentication, scope and project checks have all run before the cache is consulted.
    const project = c.get("project");
    const fresh = c.req.valid("query").fresh === "1";
    const retention = await readerRetention(readerOf(c));
    const [kpis, [rules]] = await Promise.all([
      cachedEventKpis(
        c.get("ch"),
        project,
        fresh,
        c.get("now"),
        (p) => c.executionCtx.waitUntil(p),
        () => batchesInFlight(c.env, project.id),
        retention.fromMs,
      ),
      c
        .get("db")
        .select({ n: count() })
        .from(alertRules)
        .where(and(eq(alertRules.projectId, project.id), eq(alertRules.isActive, true))),
    ]);
    return c.json(
      {
        success: true as const,
        data: {
          project: projectItem(project),
          kpis: { ...kpis, activeAlertRules: rules?.n ?? 0 },
          retention: retentionItem(retention),
        },
      },
      200,
    );
  });
}
