import { html } from "hono/html";
import { type Html, layout } from "../../layout.js";

/** The one message for every failed sign-in, whatever failed: no hint about which accounts exist. */
export const SIGN_IN_FAILED =
  "Sign-in failed. Check your email and password; after several failed attempts, wait a few minutes.";

export function signInPage(opts: { csrf: string; returnTo: string; email?: string; error?: string }): Html {
  const body = html`<div class="card">
    <h1>Sign in</h1>
    ${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ""}
    <form method="post" action="/sign-in">
      <input type="hidden" name="csrf" value="${opts.csrf}" />
      <input type="hidden" name="returnTo" value="${opts.returnTo}" />
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required value="${opts.email ?? ""}" />
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required />
      <p><button type="submit">Sign in</button></p>
    </form>
  </div>`;
  return layout({ title: "Sign in", body });
}
