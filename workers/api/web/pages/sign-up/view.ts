import { html } from "hono/html";
import { cardPage } from "../../card.js";
import type { Html } from "../../layout.js";

export function signUpPage(opts: {
  csrf: string;
  email?: string;
  tenantName?: string;
  error?: string;
}): Html {
  return cardPage({
    title: "Sign up",
    error: opts.error,
    body: html`<p>Create your studio. We send a link to confirm your email; your account exists once you open it.</p>
      <form method="post" action="/sign-up">
        <input type="hidden" name="csrf" value="${opts.csrf}" />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${opts.email ?? ""}" />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="1024" />
        <label for="studio">Studio name</label>
        <input id="studio" name="studio" maxlength="100" value="${opts.tenantName ?? ""}" placeholder="e.g. Crane Valley Games" />
        <p><button type="submit">Sign up</button></p>
      </form>
      <p>Already have an account? <a href="/sign-in">Sign in</a></p>`,
  });
}

export function checkMailPage(email: string): Html {
  return cardPage({
    title: "Check your email",
    notice: `We sent a mail to ${email}. Open the link in it to finish signing up.`,
    body: html`<p>No mail after a few minutes? Look in spam, or <a href="/sign-up">sign up again</a> for a new link.</p>`,
  });
}

export function verifyPage(opts: { csrf: string; token: string; email: string }): Html {
  return cardPage({
    title: "Confirm your email",
    body: html`<p>Finish signing up as <strong>${opts.email}</strong>: this creates your studio and its first project.</p>
      <form method="post" action="/sign-up/verify">
        <input type="hidden" name="csrf" value="${opts.csrf}" />
        <input type="hidden" name="token" value="${opts.token}" />
        <p><button type="submit">Confirm and create my studio</button></p>
      </form>`,
  });
}
