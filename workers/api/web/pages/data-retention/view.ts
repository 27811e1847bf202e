import { html } from "hono/html";
import type { TenantMembership } from "../../../accounts/team.js";
import type { DataRetention } from "../../../data-retention/horizon.js";
import { dateOf } from "../../../window.js";
import { type Html, layout, type NavUser } from "../../layout.js";

export function retentionPath(tenantId: string): string {
  return `/settings/studios/${tenantId}/retention`;
}

export type RetentionView = {
  nav: NavUser;
  csrf: string;
  membership: TenantMembership;
  planId: string;
  retention: DataRetention;
  /** The field as typed, when a POST was refused. */
  draft?: string;
  notice?: string;
  error?: string;
};

/** The studio's raw-event retention: what is kept, and for owners the form that shortens it. */
export function retentionPage(v: RetentionView): Html {
  const r = v.retention;
  const owner = v.membership.role === "owner";
  const value = v.draft ?? (r.chosenDays === null ? "" : String(r.chosenDays));
  const body = html`<p><a href="/">Projects</a> › ${v.membership.tenantName}</p>
    <h1>Data retention of ${v.membership.tenantName}</h1>
    ${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ""}
    ${v.error ? html`<p class="error" role="alert">${v.error}</p>` : ""}
    <dl class="kpis">
      <div class="kpi" data-kpi="Kept"><dt>Raw events kept</dt><dd>${r.days} days</dd></div>
      <div class="kpi" data-kpi="Oldest day"><dt>Oldest day kept (UTC)</dt><dd>${dateOf(r.fromMs)}</dd></div>
      <div class="kpi" data-kpi="Plan"><dt>The ${v.planId} plan keeps</dt><dd>${r.planDays} days</dd></div>
    </dl>
    <p>Events dated before the oldest day kept, and every row derived from them that holds a player or
    session identifier, are left out of every read at once (dashboard, heatmaps, builds, SQL, exports) and
    deleted from storage within a day. A longer retention later does not bring them back.</p>
    ${
      owner
        ? html`<form method="post" action="${retentionPath(v.membership.tenantId)}">
            <input type="hidden" name="csrf" value="${v.csrf}" />
            <label for="retention-days">Days to keep (1 to ${r.planDays}; empty: the plan's)</label>
            <input id="retention-days" name="retentionDays" type="number" min="1" max="${r.planDays}" step="1" value="${value}" />
            <button type="submit">Save retention</button>
          </form>`
        : html`<p>Only an owner of the studio can change its retention.</p>`
    }`;
  return layout({ title: `Data retention · ${v.membership.tenantName}`, user: v.nav, body });
}
