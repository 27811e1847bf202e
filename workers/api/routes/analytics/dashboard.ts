import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { dashboardDistincts, dashboardTotals } from "../../analytics/dashboard.js";
import type { AppEnv } from "../../context.js";
import { windowFor } from "../../data-retention/horizon.js";
import { readerOf } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { DashboardSchema, DaysQuery } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/dashboard",
  operationId: "getDashboard",
  tags: ["Analytics"],
  summary: "KPIs, daily active players and top events",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: DaysQuery },
  responses: { 200: envelope(DashboardSchema, "Dashboard of the window."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const fetchedAt = c.get("now");
    const w = await windowFor(readerOf(c), Number(c.req.valid("query").days));
    const [distincts, totals] = await Promise.all([
      dashboardDistincts(c.get("ch"), project.id, w, fetchedAt),
      dashboardTotals(c.get("ch"), project.id, w),
    ]);
    const kpis = {
      dau: distincts.dau,
      mau: distincts.mau,
      sessions: distincts.sessions,
      events: totals.events,
      fetchedAt,
    };
    const data = { kpis, dailyActiveUsers: distincts.dailyActiveUsers, topEvents: totals.topEvents };
    return c.json({ success: true as const, data }, 200);
  });
}
