import type { Context } from "hono";
import { html } from "hono/html";
import type { MembershipRole } from "../../../schema/pg/schema.js";
import type { Scope } from "../../shared/credentials/scopes.js";
import type { AppEnv } from "../context.js";
import { ROLE_SCOPES } from "../credentials/session-principal.js";
import { DASHBOARD_HASH } from "./assets/bundle.gen.js";
import { type Html, layout, type NavUser } from "./layout.js";

// The dashboard's pages: each is a server-rendered shell (this layout, its project navigation and a
// mount point naming the page) and the client bundle, which finds the page's module by that name
// (workers/api/web/client/pages/index.ts) and reads everything through /api/v1 with the session cookie.
// docs/dashboard.md.

/**
 * Project pages in navigation order: `id` is the path segment (/projects/:projectId/<id>) and the key
 * of the client module in workers/api/web/client/pages/index.ts. A page is listed once its module exists;
 * the order is Overview, Heatmap, Compare, Retention, Funnels, Insights, SQL, Builds, Alerts, Maps,
 * Profiles, Content, then Settings (always last, a link to the settings pages).
 */
export const DASHBOARD_PAGES = [
  { id: "overview", label: "Overview" },
  { id: "heatmap", label: "Heatmap" },
  { id: "compare", label: "Compare" },
  { id: "builds", label: "Builds" },
  { id: "retention", label: "Retention" },
  { id: "funnels", label: "Funnels" },
  { id: "insights", label: "Insights" },
  { id: "sql", label: "SQL" },
  { id: "alerts", label: "Alerts" },
  { id: "maps", label: "Maps" },
  { id: "profiles", label: "Threshold profiles" },
  { id: "content", label: "Content" },
  { id: "exports", label: "Exports" },
  { id: "erasure", label: "Player erasure" },
  { id: "dead-letters", label: "Dead letters" },
] as const;

export type DashboardPageId = (typeof DASHBOARD_PAGES)[number]["id"];

export function isDashboardPage(id: string): id is DashboardPageId {
  return DASHBOARD_PAGES.some((p) => p.id === id);
}

/**
 * Pages that only people holding a scope may open (their shell answers 403 to anyone else, and the
 * navigation leaves them out): the scope the page's API calls need, so the page never offers what the
 * API would refuse. The API checks it again on every call.
 */
const PAGE_SCOPES: Partial<Record<DashboardPageId, Scope>> = {
  sql: "data:admin",
  exports: "data:admin",
  erasure: "data:admin",
  "dead-letters": "data:admin",
};

/** The scope a page needs, if any. */
export function pageScope(id: DashboardPageId): Scope | undefined {
  return PAGE_SCOPES[id];
}

/** Whether a person of this role in the project's studio may open the page. */
export function mayOpen(id: DashboardPageId, role: MembershipRole): boolean {
  const scope = PAGE_SCOPES[id];
  return scope === undefined || ROLE_SCOPES[role].includes(scope);
}

export const SCRIPT_PATH = `/assets/dashboard-${DASHBOARD_HASH}.js`;
export const STYLE_PATH = `/assets/dashboard-${DASHBOARD_HASH}.css`;

/**
 * Scripts from this origin only (the bundle), data from /api/v1 on this origin, map images from the
 * API or as blobs. Still never framed.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' blob: data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

type ProjectRef = { id: string; name: string; tenantName: string; role: MembershipRole };

/** Navigation of one project: its pages, then its settings (the API Keys page). */
function projectNav(project: ProjectRef, current: string): Html {
  return html`<nav class="project-nav" aria-label="Project">
    <p class="project-name">${project.name}<small>${project.tenantName}</small></p>
    <ul>
      ${DASHBOARD_PAGES.filter((p) => mayOpen(p.id, project.role)).map(
        (p) =>
          html`<li><a href="/projects/${project.id}/${p.id}" ${p.id === current ? html`aria-current="page"` : ""}>${p.label}</a></li>`,
      )}
      <li><a href="/settings/projects/${project.id}/api-keys">Settings</a></li>
    </ul>
  </nav>`;
}

/**
 * A dashboard page: the layout, the project navigation when in a project, and the mount point the
 * client bundle renders into. `data-page` names the client module, `data-project-id` the project.
 */
export function dashboardPage<E extends AppEnv>(
  c: Context<E>,
  opts: { title: string; user: NavUser; page: string; project?: ProjectRef; body?: Html },
): Response | Promise<Response> {
  const mount = html`<div id="page" data-page="${opts.page}" data-project-id="${opts.project?.id ?? ""}">
    ${opts.body ?? html`<p class="state loading" role="status" data-placeholder>Loading…</p>`}
  </div>`;
  const body = opts.project
    ? html`<div class="dashboard">${projectNav(opts.project, opts.page)}<section class="content">${mount}</section></div>`
    : mount;
  c.header("Content-Security-Policy", DASHBOARD_CSP);
  return c.html(
    layout({
      title: opts.title,
      user: opts.user,
      body,
      wide: true,
      head: html`<link rel="stylesheet" href="${STYLE_PATH}" /><script type="module" src="${SCRIPT_PATH}"></script>`,
      settingsHref: opts.project ? `/settings/projects/${opts.project.id}/api-keys` : undefined,
    }),
  );
}
