import { html } from "hono/html";
import type { Membership } from "../../../accounts/users.js";
import type { GrantScope } from "../../../credentials/grants.js";
import { type Html, layout, type NavUser } from "../../layout.js";
import { AUTHORIZE_PARAMS, type AuthorizeParams, type AuthorizeRequest } from "./request.js";

const SCOPE_TEXT: Record<GrantScope, string> = {
  "analytics:read": "Read analytics and project data (analytics:read)",
  "resources:write": "Create and change alert rules, threshold profiles, maps and content (resources:write)",
};

export function consentPage(opts: {
  nav: NavUser;
  csrf: string;
  request: AuthorizeRequest;
  params: AuthorizeParams;
  tenants: Membership[];
}): Html {
  const { request, tenants } = opts;
  const first = tenants[0];
  const tenantField =
    tenants.length === 1 && first
      ? html`<p>Studio: <strong>${first.tenantName}</strong></p>
          <input type="hidden" name="tenant" value="${first.tenantId}" />`
      : html`<fieldset>
          <legend>Studio</legend>
          ${tenants.map(
            (t, i) => html`<label
              ><input type="radio" name="tenant" value="${t.tenantId}" ${i === 0 ? "checked" : ""} required />
              ${t.tenantName}</label
            >`,
          )}
        </fieldset>`;
  const body = html`<div class="card">
    <h1>Allow ${request.client.name}?</h1>
    <p><strong>${request.client.name}</strong> asks to act for you (${opts.nav.email}) with these permissions:</p>
    <ul>
      ${request.scopes.map((s) => html`<li>${SCOPE_TEXT[s]}</li>`)}
    </ul>
    <form method="post" action="/oauth/authorize">
      <input type="hidden" name="csrf" value="${opts.csrf}" />
      ${AUTHORIZE_PARAMS.map((name) =>
        opts.params[name] === undefined
          ? ""
          : html`<input type="hidden" name="${name}" value="${opts.params[name]}" />`,
      )}
      ${tenantField}
      <p>You will be sent back to <code>${request.redirectUri}</code>. You can revoke access at any time under Connected apps.</p>
      <p>
        <button type="submit" name="decision" value="allow">Allow</button>
        <button type="submit" name="decision" value="deny">Deny</button>
      </p>
    </form>
  </div>`;
  return layout({ title: `Allow ${request.client.name}?`, user: opts.nav, body });
}
