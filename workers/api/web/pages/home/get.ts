import type { Hono } from "hono";
import { html } from "hono/html";
import { membershipsOf, projectsOfUser } from "../../../accounts/users.js";
import type { AppEnv } from "../../../context.js";
import { dashboardPage } from "../../dashboard.js";
import { signedIn } from "../../respond.js";

/**
 * The signed-in landing page: the user's studios and their projects (accounts data, which no /api/v1
 * route spans: a session may belong to several studios), each opening its dashboard; the client bundle
 * adds each project's status KPIs from GET /api/v1/projects/{id}/status.
 */
export function register(app: Hono<AppEnv>) {
  app.get("/", async (c) => {
    const v = await signedIn(c);
    if (v instanceof Response) {
      return v;
    }
    const db = c.get("db");
    const [tenants, projects] = await Promise.all([
      membershipsOf(db, v.user.userId),
      projectsOfUser(db, v.user.userId),
    ]);
    const sections = tenants.map((t) => {
      const own = projects.filter((p) => p.tenantId === t.tenantId);
      return html`<section aria-labelledby="tenant-${t.tenantId}">
        <h2 id="tenant-${t.tenantId}">${t.tenantName} <small>(${t.role})</small></h2>
        <p><a href="/settings/studios/${t.tenantId}/members">Members</a> · <a href="/settings/studios/${t.tenantId}/retention">Data retention</a>${
          t.role === "owner"
            ? html` · <a href="/settings/studios/${t.tenantId}/audit-log">Audit log</a> · <a href="/settings/studios/${t.tenantId}/sso">Single sign-on</a>`
            : ""
        }</p>
        ${
          own.length
            ? html`<ul class="project-list">
                ${own.map(
                  (p) =>
                    html`<li class="panel" data-project="${p.id}">
                      <h3><a href="/projects/${p.id}/overview">${p.name}</a></h3>
                      <p><a href="/projects/${p.id}/overview">Dashboard</a> · <a href="/settings/projects/${p.id}/api-keys">API Keys</a></p>
                      <div data-status-for="${p.id}"></div>
                    </li>`,
                )}
              </ul>`
            : html`<p class="state empty">No projects yet.</p>`
        }
      </section>`;
    });
    const body = html`<h1>Projects</h1>
      ${tenants.length ? sections : html`<p class="state empty">Your account does not belong to any studio yet.</p>`}`;
    return dashboardPage(c, { title: "Projects", user: v.nav, page: "projects", body });
  });
}
