import type { Hono } from "hono";
import type { AppEnv } from "../../../context.js";
import { userProject, visitor } from "../../access.js";
import { DASHBOARD_PAGES, dashboardPage, isDashboardPage, mayOpen, pageScope } from "../../dashboard.js";
import { errorPage } from "../../respond.js";

/**
 * A project's dashboard page: the shell only. Its data is read by the client bundle through /api/v1
 * with the session, so what a person sees is what the API answers. /projects/:id alone is the overview.
 */
export function register(app: Hono<AppEnv>) {
  app.get("/projects/:projectId", visitor, userProject, (c) =>
    c.redirect(`/projects/${c.get("project").id}/overview`, 302),
  );
  app.get("/projects/:projectId/:page", visitor, userProject, (c) => {
    const page = c.req.param("page");
    if (!isDashboardPage(page)) {
      return errorPage(c, 404, "Not found", "There is no such page.");
    }
    const project = c.get("project");
    const label = DASHBOARD_PAGES.find((p) => p.id === page)?.label ?? page;
    if (!mayOpen(page, project.role)) {
      return errorPage(
        c,
        403,
        "Not allowed",
        `The ${label} page needs the ${pageScope(page)} scope, which the studio's owners hold. Ask an owner of ${project.tenantName}.`,
      );
    }
    return dashboardPage(c, {
      title: `${label} · ${project.name}`,
      user: c.get("visitor").nav,
      page,
      project: { id: project.id, name: project.name, tenantName: project.tenantName, role: project.role },
    });
  });
}
