import { html } from "hono/html";
import { MEMBERSHIP_ROLES, type MembershipRole } from "../../../../../schema/pg/schema.js";
import type { membersOf, pendingInvitations, TenantMembership } from "../../../accounts/team.js";
import { type liveKeysCreatedBy, PRESET_LABELS } from "../../../credentials/key-management.js";
import { dateCell, type Html, layout, type NavUser } from "../../layout.js";

type Member = Awaited<ReturnType<typeof membersOf>>[number];
type Invitation = Awaited<ReturnType<typeof pendingInvitations>>[number];
type CreatedKey = Awaited<ReturnType<typeof liveKeysCreatedBy>>[number];

/** A ticked key on the removal's confirmation posts `revoke:<keyId>=on` (one field per key). */
export const REVOKE_FIELD = "revoke:";

export function membersPath(tenantId: string): string {
  return `/settings/studios/${tenantId}/members`;
}

/** Notices the page shows after a Post/Redirect/Get, by the `done` query value. */
export const NOTICES: Record<string, string> = {
  invited: "Invitation sent.",
  "invite-mail-failed": "The invitation is saved, but its mail could not be sent. Resend it below.",
  resent: "Invitation sent again with a new link; the previous link no longer works.",
  "resend-mail-failed": "The invitation has a new link, but its mail could not be sent. Try again.",
  revoked: "Invitation revoked: its link no longer works.",
  role: "Role changed.",
  removed: "Member removed: their sessions and connected apps no longer reach this studio.",
  "removed-keys":
    "Member removed: their sessions and connected apps no longer reach this studio, and the keys you ticked no longer work.",
  "sessions-ended": "Their sessions are ended: every browser they were signed in with is signed out.",
};

export type MembersView = {
  nav: NavUser;
  csrf: string;
  userId: string;
  membership: TenantMembership;
  members: Member[];
  invitations: Invitation[];
  notice?: string;
  error?: string;
  /** What the invite form held when it was refused. */
  draft?: { email: string; role: string };
};

function roleLabel(role: MembershipRole): string {
  return role === "owner" ? "Owner" : "Member";
}

function memberLabel(m: { name: string; email: string }): string {
  return m.name ? `${m.name} (${m.email})` : m.email;
}

export function membersPage(v: MembersView): Html {
  const base = membersPath(v.membership.tenantId);
  const owner = v.membership.role === "owner";
  const member = (m: Member) => {
    const label = memberLabel(m);
    const self = m.userId === v.userId;
    return html`<tr>
      <td>${m.name}</td>
      <td>${m.email}</td>
      <td>
        ${
          owner
            ? html`<form method="post" action="${base}/${m.userId}/role" class="actions">
                <input type="hidden" name="csrf" value="${v.csrf}" />
                <label class="visually-hidden" for="role-${m.userId}">Role of ${label}</label>
                <select id="role-${m.userId}" name="role">
                  ${MEMBERSHIP_ROLES.map((r) => html`<option value="${r}" ${r === m.role ? "selected" : ""}>${roleLabel(r)}</option>`)}
                </select>
                <button type="submit" aria-label="Change role of ${label}">Change</button>
              </form>`
            : roleLabel(m.role)
        }
      </td>
      <td>${dateCell(m.joinedAt)}</td>
      <td>${dateCell(m.lastSignInAt)}</td>
      <td>
        ${
          self
            ? html`<form method="post" action="${base}/${m.userId}/remove">
                <input type="hidden" name="csrf" value="${v.csrf}" />
                <button type="submit" aria-label="Leave the studio">Leave</button>
              </form>`
            : owner
              ? html`<form method="get" action="${base}/${m.userId}/remove" class="actions">
                    <button type="submit" aria-label="Remove ${label}">Remove…</button>
                  </form>
                  <form method="post" action="${base}/${m.userId}/sessions/end" class="actions">
                    <input type="hidden" name="csrf" value="${v.csrf}" />
                    <button type="submit" aria-label="End all sessions of ${label}">End sessions</button>
                  </form>`
              : ""
        }
      </td>
    </tr>`;
  };
  const invitation = (i: Invitation) => html`<tr>
      <td>${i.email}</td>
      <td>${i.role ? roleLabel(i.role) : ""}</td>
      <td>${dateCell(i.createdAt)}</td>
      <td>${dateCell(i.expiresAt)}</td>
      <td>${i.mailStatus === "sent" ? "Sent" : i.mailStatus === "failed" ? html`<strong class="regression">Mail failed</strong>` : "Sending"}</td>
      <td class="actions">
        ${
          owner || i.role === "member"
            ? html`<form method="post" action="/settings/studios/${v.membership.tenantId}/invitations/${i.id}/resend">
                <input type="hidden" name="csrf" value="${v.csrf}" />
                <button type="submit" aria-label="Resend the invitation of ${i.email}">Resend</button>
              </form>
              <form method="post" action="/settings/studios/${v.membership.tenantId}/invitations/${i.id}/revoke">
                <input type="hidden" name="csrf" value="${v.csrf}" />
                <button type="submit" aria-label="Revoke the invitation of ${i.email}">Revoke</button>
              </form>`
            : ""
        }
      </td>
    </tr>`;
  // Member first and selected unless a refused form chose otherwise: an email alone invites a member.
  const roles = [...MEMBERSHIP_ROLES].reverse().filter((r) => owner || r === "member");
  const body = html`<p><a href="/">Projects</a> › ${v.membership.tenantName}</p>
    <h1>Members of ${v.membership.tenantName}</h1>
    ${v.error ? html`<p class="error" role="alert">${v.error}</p>` : ""}
    ${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ""}
    <table>
      <caption>Members</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Joined</th><th scope="col">Last sign-in</th><th scope="col">Actions</th></tr></thead>
      <tbody>${v.members.map(member)}</tbody>
    </table>
    <h2>Pending invitations</h2>
    ${
      v.invitations.length
        ? html`<table>
            <caption>Pending invitations</caption>
            <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Sent</th><th scope="col">Expires</th><th scope="col">Mail</th><th scope="col">Actions</th></tr></thead>
            <tbody>${v.invitations.map(invitation)}</tbody>
          </table>`
        : html`<p>No pending invitations.</p>`
    }
    <h2>Invite someone</h2>
    <form method="post" action="/settings/studios/${v.membership.tenantId}/invitations">
      <input type="hidden" name="csrf" value="${v.csrf}" />
      <label for="invite-email">Email</label>
      <input id="invite-email" name="email" type="email" required maxlength="254" value="${v.draft?.email ?? ""}" />
      <label for="invite-role">Role</label>
      <select id="invite-role" name="role">
        ${roles.map((r) => html`<option value="${r}" ${r === (v.draft?.role ?? "member") ? "selected" : ""}>${roleLabel(r)}</option>`)}
      </select>
      <p><button type="submit">Send invitation</button></p>
    </form>`;
  return layout({ title: `Members · ${v.membership.tenantName}`, user: v.nav, body });
}

/**
 * The removal's confirmation: who is removed, and the live keys they created in the studio's projects,
 * each ticked (revoked with the removal unless unticked).
 */
export function removeConfirmPage(v: {
  nav: NavUser;
  csrf: string;
  membership: TenantMembership;
  member: Member;
  keys: CreatedKey[];
  self: boolean;
}): Html {
  const base = membersPath(v.membership.tenantId);
  const label = memberLabel(v.member);
  const key = (k: CreatedKey) => {
    const name = k.name ? `${k.name} (${k.prefix}…)` : `${k.prefix}…`;
    return html`<tr>
      <td><input type="checkbox" id="revoke-${k.id}" name="${REVOKE_FIELD}${k.id}" checked /></td>
      <td><label for="revoke-${k.id}">${name}</label></td>
      <td>${k.projectName}</td>
      <td>${PRESET_LABELS[k.preset]}</td>
      <td>${dateCell(k.createdAt)}</td>
      <td>${dateCell(k.lastUsedAt)}</td>
    </tr>`;
  };
  const body = html`<p><a href="/">Projects</a> › <a href="${base}">${v.membership.tenantName}</a></p>
    <h1>Remove ${label}?</h1>
    <p>${label} loses access to ${v.membership.tenantName} at once: their sessions and connected apps no longer reach it.</p>
    <form method="post" action="${base}/${v.member.userId}/remove">
      <input type="hidden" name="csrf" value="${v.csrf}" />
      ${
        v.keys.length
          ? html`<p>API keys they created keep working after they leave unless revoked. The ticked keys are revoked with the removal; untick those that must keep working.</p>
            <table>
              <caption>API keys created by ${label}</caption>
              <thead><tr><th scope="col">Revoke</th><th scope="col">Key</th><th scope="col">Project</th><th scope="col">Preset</th><th scope="col">Created</th><th scope="col">Last used</th></tr></thead>
              <tbody>${v.keys.map(key)}</tbody>
            </table>`
          : html`<p>They created no API key that still works in this studio.</p>`
      }
      <p><button type="submit">${v.self ? "Leave the studio" : `Remove ${label}`}</button> <a href="${base}">Cancel</a></p>
    </form>`;
  return layout({ title: `Remove ${label} · ${v.membership.tenantName}`, user: v.nav, body });
}
