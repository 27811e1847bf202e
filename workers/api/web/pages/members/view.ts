import { html } from "hono/html";
import { MEMBERSHIP_ROLES, type MembershipRole } from "../../../../../schema/pg/schema.js";
import type { membersOf, pendingInvitations, TenantMembership } from "../../../accounts/team.js";
import { dateCell, type Html, layout, type NavUser } from "../../layout.js";

type Member = Awaited<ReturnType<typeof membersOf>>[number];
type Invitation = Awaited<ReturnType<typeof pendingInvitations>>[number];

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

export function membersPage(v: MembersView): Html {
  const base = membersPath(v.membership.tenantId);
  const owner = v.membership.role === "owner";
  const member = (m: Member) => {
    const label = m.name ? `${m.name} (${m.email})` : m.email;
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
          owner || self
            ? html`<form method="post" action="${base}/${m.userId}/remove">
                <input type="hidden" name="csrf" value="${v.csrf}" />
                <button type="submit" aria-label="${self ? "Leave the studio" : `Remove ${label}`}">${self ? "Leave" : "Remove"}</button>
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
  const roles = MEMBERSHIP_ROLES.filter((r) => owner || r === "member");
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
        ${roles.map((r) => html`<option value="${r}" ${r === v.draft?.role ? "selected" : ""}>${roleLabel(r)}</option>`)}
      </select>
      <p><button type="submit">Send invitation</button></p>
    </form>`;
  return layout({ title: `Members · ${v.membership.tenantName}`, user: v.nav, body });
}
