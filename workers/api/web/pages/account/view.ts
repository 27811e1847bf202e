import { html } from "hono/html";
import type { sessionsOfUser } from "../../../credentials/sessions.js";
import { dateCell, type Html, layout, type NavUser } from "../../layout.js";
import { describeUserAgent } from "../../user-agent.js";

type Session = Awaited<ReturnType<typeof sessionsOfUser>>[number];

export const NOTICES: Record<string, string> = {
  name: "Name saved.",
  password: "Password changed. Your other sessions are signed out.",
  "session-ended": "Session ended: that browser is signed out.",
  "others-ended": "Your other sessions are ended: every other browser is signed out.",
};

function sessionsSection(v: { csrf: string; sessions: Session[]; currentSessionId: string }): Html {
  const row = (s: Session) => {
    const current = s.id === v.currentSessionId;
    const browser = describeUserAgent(s.userAgent);
    return html`<tr>
      <td>${browser}${current ? html` <strong>(this browser)</strong>` : ""}</td>
      <td>${s.ip ?? "unknown"}</td>
      <td>${dateCell(s.createdAt)}</td>
      <td>${dateCell(s.lastSeenAt)}</td>
      <td>
        <form method="post" action="/settings/account/sessions/${s.id}/end">
          <input type="hidden" name="csrf" value="${v.csrf}" />
          <button type="submit" aria-label="End the session of ${browser} from ${s.ip ?? "unknown"} signed in ${s.createdAt.toISOString().slice(0, 16).replace("T", " ")} UTC${current ? " (this browser)" : ""}">${current ? "Sign out" : "End"}</button>
        </form>
      </td>
    </tr>`;
  };
  return html`<h2>Sessions</h2>
    <p>Where you are signed in. Last seen is accurate to 5 minutes.</p>
    <table>
      <caption>Active sessions</caption>
      <thead><tr><th scope="col">Browser</th><th scope="col">IP address</th><th scope="col">Signed in</th><th scope="col">Last seen</th><th scope="col">Actions</th></tr></thead>
      <tbody>${v.sessions.map(row)}</tbody>
    </table>
    ${
      v.sessions.some((s) => s.id !== v.currentSessionId)
        ? html`<form method="post" action="/settings/account/sessions/end-others">
            <input type="hidden" name="csrf" value="${v.csrf}" />
            <p><button type="submit">End all other sessions</button></p>
          </form>`
        : ""
    }`;
}

export function accountPage(v: {
  nav: NavUser;
  csrf: string;
  email: string;
  name: string;
  sessions: Session[];
  currentSessionId: string;
  notice?: string;
  error?: string;
  /** False for an account made by single sign-on: deletion is confirmed with the provider instead. */
  hasPassword?: boolean;
}): Html {
  const withPassword = v.hasPassword !== false;
  const body = html`<h1>Your account</h1>
    ${v.error ? html`<p class="error" role="alert">${v.error}</p>` : ""}
    ${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ""}
    <p>Signed in as <strong>${v.email}</strong>.</p>
    <h2>Name</h2>
    <form method="post" action="/settings/account/name">
      <input type="hidden" name="csrf" value="${v.csrf}" />
      <label for="name">Name</label>
      <input id="name" name="name" autocomplete="name" maxlength="100" value="${v.name}" />
      <p><button type="submit">Save name</button></p>
    </form>
    <h2>Password</h2>
    <form method="post" action="/settings/account/password">
      <input type="hidden" name="csrf" value="${v.csrf}" />
      <label for="current">Current password</label>
      <input id="current" name="current" type="password" autocomplete="current-password" required maxlength="1024" />
      <label for="next">New password</label>
      <input id="next" name="next" type="password" autocomplete="new-password" required minlength="8" maxlength="1024" />
      <p><button type="submit">Change password</button></p>
    </form>
    ${sessionsSection(v)}
    <h2>Delete account</h2>
    <p>Ends your sessions and connected apps and removes you from every studio. Refused while you are a studio's last owner.</p>
    ${
      withPassword
        ? html`<form method="post" action="/settings/account/delete">
      <input type="hidden" name="csrf" value="${v.csrf}" />
      <label for="delete-password">Password</label>
      <input id="delete-password" name="password" type="password" autocomplete="current-password" required maxlength="1024" />
      <p><button type="submit">Delete my account</button></p>
    </form>`
        : html`<p>Your account has no password: you sign in with your studio's identity provider, which
      confirms it is you. It asks you to sign in again, then your account is deleted.</p>
    <form method="post" action="/settings/account/delete">
      <input type="hidden" name="csrf" value="${v.csrf}" />
      <p><button type="submit">Confirm with your identity provider and delete my account</button></p>
    </form>`
    }`;
  return layout({ title: "Your account", user: v.nav, body });
}
