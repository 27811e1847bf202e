import { html } from "hono/html";
import type { grantsOfUser } from "../../../credentials/grants.js";
import { dateCell, type Html, layout, type NavUser } from "../../layout.js";

type Grant = Awaited<ReturnType<typeof grantsOfUser>>[number];

export function connectedAppsPage(opts: {
  nav: NavUser;
  csrf: string;
  grants: Grant[];
  notice?: string;
}): Html {
  const rows = opts.grants.map(
    (g) => html`<tr>
      <td>${g.clientName}</td>
      <td>${g.tenantName}</td>
      <td>${g.scopes.join(", ")}</td>
      <td>${dateCell(g.createdAt)}</td>
      <td>${dateCell(g.lastUsedAt)}</td>
      <td>
        <form method="post" action="/settings/connected-apps/${g.id}/revoke">
          <input type="hidden" name="csrf" value="${opts.csrf}" />
          <button type="submit" aria-label="Revoke access of ${g.clientName} (granted ${g.createdAt.toISOString()})">Revoke</button>
        </form>
      </td>
    </tr>`,
  );
  const body = html`<h1>Connected apps</h1>
    <p>Apps you allowed to act for you, such as the command-line login. Revoking one ends its access at once.</p>
    ${opts.notice ? html`<p class="notice" role="status">${opts.notice}</p>` : ""}
    ${
      opts.grants.length
        ? html`<table>
            <thead><tr><th scope="col">App</th><th scope="col">Studio</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
            <tbody>${rows}</tbody>
          </table>`
        : html`<p>No connected apps.</p>`
    }`;
  return layout({ title: "Connected apps", user: opts.nav, body });
}
