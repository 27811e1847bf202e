import type { ClickHouseClient } from "@clickhouse/client-web";
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, count, eq } from "drizzle-orm";
import { alertRules } from "../../../../schema/pg/schema.js";
import { CH_DB } from "../../../shared/clickhouse.js";
import type { AppEnv } from "../../context.js";
import { projectFor, requireScope } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, security } from "../../openapi.js";
import { ProjectStatusSchema, projectItem } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/{id}/status",
  operationId: "getProjectStatus",
  tags: ["Projects"],
  summary: "Project details and key performance indicators",
  security: security.keyOrToken,
  middleware: [requireScope("analytics:read")],
  request: { params: ProjectIdParam },
  responses: { 200: envelope(ProjectStatusSchema, "Project and KPIs."), ...errorResponses },
});

type EventKpis = { events24h: number; players24h: number; totalEvents: number; lastEventAt: string | null };

/** One pass over the project's granules; the 24-hour figures are conditional aggregates of the same scan. */
export async function eventKpis(ch: ClickHouseClient, projectId: string): Promise<EventKpis> {
  const rs = await ch.query({
    query: `
      SELECT
        countIf(timestamp >= now64(6) - INTERVAL 24 HOUR) AS events24h,
        uniqExactIf(player, timestamp >= now64(6) - INTERVAL 24 HOUR) AS players24h,
        count() AS totalEvents,
        if(count() = 0, NULL, formatDateTime(max(timestamp), '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC')) AS lastEventAt
      FROM ${CH_DB}.events
      WHERE project_id = {projectId:UUID}`,
    query_params: { projectId },
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{
    events24h: string;
    players24h: string;
    totalEvents: string;
    lastEventAt: string | null;
  }>();
  return {
    events24h: Number(row?.events24h ?? 0),
    players24h: Number(row?.players24h ?? 0),
    totalEvents: Number(row?.totalEvents ?? 0),
    lastEventAt: row?.lastEventAt ?? null,
  };
}

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = await projectFor(c, c.req.valid("param").id);
    const [kpis, [rules]] = await Promise.all([
      eventKpis(c.get("ch"), project.id),
      c
        .get("db")
        .select({ n: count() })
        .from(alertRules)
        .where(and(eq(alertRules.projectId, project.id), eq(alertRules.isActive, true))),
    ]);
    return c.json(
      {
        success: true as const,
        data: { project: projectItem(project), kpis: { ...kpis, activeAlertRules: rules?.n ?? 0 } },
      },
      200,
    );
  });
}
