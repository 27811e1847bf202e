import { html } from "hono/html";
import { type Html, layout, type NavUser } from "../../layout.js";

export const NOTICES: Record<string, string> = {
  name: "Name saved.",
  password: "Password changed. Your other sessions are signed out.",
};

export function accountPage(v: {
  nav: NavUser;
  csrf: string;
  email: string;
  name: string;
  notice?: string;
  error?: string;
}): Html {
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
    <h2>Delete account</h2>
    <p>Ends your sessions and connected apps and removes you from every studio. Refused while you are a studio's last owner.</p>
    <form method="post" action="/settings/account/delete">
      <input type="hidden" name="csrf" value="${v.csrf}" />
      <label for="delete-password">Password</label>
      <input id="delete-password" name="password" type="password" autocomplete="current-password" required maxlength="1024" />
      <p><button type="submit">Delete my account</button></p>
    </form>`;
  return layout({ title: "Your account", user: v.nav, body });
}
