import { html } from "hono/html";
import { type Html, layout } from "../../layout.js";

/** The one message for every failed sign-in, whatever failed: no hint about which accounts exist. */
export const SIGN_IN_FAILED =
  "Sign-in failed. Check your email and password; after several failed attempts, wait a few minutes.";

/** Notices the sign-in page shows when another page sends the visitor here, by the `done` query value. */
export const SIGN_IN_NOTICES: Record<string, string> = {
  reset: "Password changed: you were signed out everywhere. Sign in with the new password.",
  joined: "You joined the studio. Sign in to open it.",
};

export function signInPage(opts: {
  csrf: string;
  returnTo: string;
  email?: string;
  error?: string;
  notice?: string;
  signUp?: boolean;
}): Html {
  const body = html`<div class="card">
    <h1>Sign in</h1>
    ${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ""}
    ${opts.notice ? html`<p class="notice" role="status">${opts.notice}</p>` : ""}
    <form method="post" action="/sign-in">
      <input type="hidden" name="csrf" value="${opts.csrf}" />
      <input type="hidden" name="returnTo" value="${opts.returnTo}" />
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required value="${opts.email ?? ""}" />
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" />
      <p><button type="submit">Sign in</button> <button type="submit" name="sso" value="1" formnovalidate>Continue with single sign-on</button></p>
      <p><small>Your studio signs in with its identity provider? Enter your work email and leave the password empty.</small></p>
    </form>
    <p><a href="/password-reset">Forgot your password?</a>${opts.signUp ? html` · <a href="/sign-up">Sign up</a>` : ""}</p>
  </div>`;
  return layout({ title: "Sign in", body });
}
