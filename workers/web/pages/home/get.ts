import type { Hono } from "hono";
import { html } from "hono/html";
import { membershipsOf, projectsOfUser } from "../../../accounts/users.js";
import type { AppEnv } from "../../../api/context.js";
import { layout } from "../../layout.js";
import { signedIn } from "../../respond.js";

/** The signed-in landing page: the user's tenants and their projects, each with its settings. */
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
        ${
          own.length
            ? html`<ul>
                ${own.map(
                  (p) =>
                    html`<li>${p.name} · <a href="/settings/projects/${p.id}/api-keys">API Keys</a></li>`,
                )}
              </ul>`
            : html`<p>No projects yet.</p>`
        }
      </section>`;
    });
    const body = html`<h1>Projects</h1>
      ${tenants.length ? sections : html`<p>Your account does not belong to any studio yet.</p>`}`;
    return c.html(layout({ title: "Projects", user: v.nav, body }));
  });
}
