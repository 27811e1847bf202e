import { html } from "hono/html";
import type { AuditLogRow } from "../../../../../schema/pg/schema.js";
import type { TenantMembership } from "../../../accounts/team.js";
import { dateCell, type Html, layout, type NavUser } from "../../layout.js";

export function auditLogPath(tenantId: string): string {
  return `/settings/studios/${tenantId}/audit-log`;
}

/** The filters as the form holds them (strings, as typed). */
export type AuditLogForm = { actor: string; action: string; project: string; from: string; to: string };

export type AuditLogView = {
  nav: NavUser;
  membership: TenantMembership;
  projects: { id: string; name: string }[];
  form: AuditLogForm;
  entries: AuditLogRow[];
  /** The next (older) page's URL, when there is one. */
  next: string | null;
  error?: string;
};

function actorCell(e: AuditLogRow): Html {
  const kind = { user: "", api_key: "key ", oauth_client: "app ", operator: "", system: "" }[e.actorType];
  return html`${kind}${e.actorLabel}`;
}

function detailText(e: AuditLogRow): string {
  return Object.entries(e.detail)
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join(", ");
}

export function auditLogPage(v: AuditLogView): Html {
  const base = auditLogPath(v.membership.tenantId);
  const projectName = new Map(v.projects.map((p) => [p.id, p.name]));
  const row = (e: AuditLogRow) => html`<tr>
      <td>${dateCell(e.at)}</td>
      <td>${actorCell(e)}</td>
      <td><code>${e.action}</code>${e.count > 1 ? html` <small>×${e.count}</small>` : ""}</td>
      <td>${e.targetLabel ?? e.targetId ?? ""}</td>
      <td>${e.projectId ? (projectName.get(e.projectId) ?? e.projectId) : ""}</td>
      <td>${e.outcome === "success" ? "Success" : e.outcome === "failure" ? "Failed" : "Denied"}</td>
      <td>${e.ip ?? ""}</td>
      <td>${detailText(e)}</td>
    </tr>`;
  const body = html`<p><a href="/">Projects</a> › ${v.membership.tenantName}</p>
    <h1>Audit log of ${v.membership.tenantName}</h1>
    <p>Who did what in the studio, from where and how it ended. Entries are kept 400 days and cannot be changed or deleted.</p>
    ${v.error ? html`<p class="error" role="alert">${v.error}</p>` : ""}
    <form method="get" action="${base}" class="filters">
      <label for="f-actor">Actor</label>
      <input id="f-actor" name="actor" maxlength="320" value="${v.form.actor}" placeholder="email or key name" />
      <label for="f-action">Action</label>
      <input id="f-action" name="action" maxlength="100" value="${v.form.action}" placeholder="key.created or key" />
      <label for="f-project">Project</label>
      <select id="f-project" name="project">
        <option value="">All</option>
        ${v.projects.map((p) => html`<option value="${p.id}" ${p.id === v.form.project ? "selected" : ""}>${p.name}</option>`)}
      </select>
      <label for="f-from">From (UTC)</label>
      <input id="f-from" name="from" type="datetime-local" value="${v.form.from}" />
      <label for="f-to">To (UTC)</label>
      <input id="f-to" name="to" type="datetime-local" value="${v.form.to}" />
      <button type="submit">Filter</button>
    </form>
    ${
      v.entries.length
        ? html`<table>
            <caption>Entries, newest first</caption>
            <thead><tr><th scope="col">Time</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Project</th><th scope="col">Outcome</th><th scope="col">IP</th><th scope="col">Detail</th></tr></thead>
            <tbody>${v.entries.map(row)}</tbody>
          </table>`
        : html`<p>No entries.</p>`
    }
    ${v.next ? html`<p><a href="${v.next}" rel="next">Older entries</a></p>` : ""}`;
  return layout({ title: `Audit log · ${v.membership.tenantName}`, user: v.nav, body });
}
