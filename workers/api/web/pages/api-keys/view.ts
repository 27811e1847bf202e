import { html } from "hono/html";
import type { MembershipRole } from "../../../../../schema/pg/schema.js";
import { KEY_PRESETS, type KeyPreset } from "../../../../shared/credentials/scopes.js";
import type { keysOfProject } from "../../../credentials/key-management.js";
import { mayManagePreset, PRESET_LABELS } from "../../../credentials/key-management.js";
import { dateCell, type Html, layout, type NavUser } from "../../layout.js";

type Key = Awaited<ReturnType<typeof keysOfProject>>[number];

export type ApiKeysView = {
  nav: NavUser;
  csrf: string;
  project: { id: string; name: string; tenantName: string; role: MembershipRole };
  keys: Key[];
  /** A key just created: its secret is on this one page, once, and nowhere else, ever. */
  created?: { name: string | null; secret: string };
  notice?: string;
  error?: string;
};

function keyLabel(k: { name: string | null; prefix: string }): string {
  return k.name ? `${k.name} (${k.prefix}…)` : `${k.prefix}…`;
}

/** The project's API Keys page (and, POSTed to, its create form). */
export function apiKeysPath(projectId: string): string {
  return `/settings/projects/${projectId}/api-keys`;
}

export function apiKeysPage(v: ApiKeysView): Html {
  const base = apiKeysPath(v.project.id);
  const presets = (Object.keys(KEY_PRESETS) as KeyPreset[]).filter((p) => mayManagePreset(v.project.role, p));
  const rows = v.keys.map(
    (k) => html`<tr>
      <td>${k.name ?? ""}</td>
      <td><code>${k.prefix}…</code></td>
      <td>${k.scopes.join(", ")}</td>
      <td>${k.creator}</td>
      <td>${dateCell(k.createdAt)}</td>
      <td>${dateCell(k.lastUsedAt)}</td>
      <td>
        ${
          mayManagePreset(v.project.role, k.preset)
            ? html`<form method="post" action="${base}/${k.id}/revoke">
                <input type="hidden" name="csrf" value="${v.csrf}" />
                <button type="submit" aria-label="Revoke ${keyLabel(k)}">Revoke</button>
              </form>`
            : ""
        }
      </td>
    </tr>`,
  );
  const created = v.created
    ? html`<section class="notice" role="status" aria-labelledby="new-key-title">
        <h2 id="new-key-title">Key created${v.created.name ? html`: ${v.created.name}` : ""}</h2>
        <p>Copy it now: it is shown this once and cannot be shown again.</p>
        <label for="new-key">New API key</label>
        <input id="new-key" class="secret" readonly value="${v.created.secret}" />
      </section>`
    : "";
  const body = html`<p><a href="/">Projects</a> › ${v.project.tenantName} › ${v.project.name}</p>
    <h1>API Keys</h1>
    ${v.error ? html`<p class="error" role="alert">${v.error}</p>` : ""}
    ${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ""}
    ${created}
    ${
      v.keys.length
        ? html`<table>
            <caption>Keys of ${v.project.name}</caption>
            <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Created by</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
            <tbody>${rows}</tbody>
          </table>`
        : html`<p>This project has no API keys.</p>`
    }
    <h2>Create a key</h2>
    <form method="post" action="${base}">
      <input type="hidden" name="csrf" value="${v.csrf}" />
      <label for="key-name">Name</label>
      <input id="key-name" name="name" maxlength="100" placeholder="e.g. Unity build server" />
      <label for="key-preset">Preset</label>
      <select id="key-preset" name="preset" required>
        ${presets.map((p) => html`<option value="${p}">${PRESET_LABELS[p]}: ${KEY_PRESETS[p].join(", ")}</option>`)}
      </select>
      <p><button type="submit">Create key</button></p>
    </form>`;
  return layout({ title: `API Keys · ${v.project.name}`, user: v.nav, body });
}
