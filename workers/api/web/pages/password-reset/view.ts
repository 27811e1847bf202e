import type { Context } from "hono";
import { html } from "hono/html";
import type { AppEnv } from "../../../context.js";
import { cardPage, LINK_DEAD } from "../../card.js";
import type { Html } from "../../layout.js";

export function requestPage(opts: { csrf: string; email?: string; error?: string }): Html {
  return cardPage({
    title: "Reset your password",
    error: opts.error,
    body: html`<p>Enter your account's email: we send a link to set a new password.</p>
      <form method="post" action="/password-reset">
        <input type="hidden" name="csrf" value="${opts.csrf}" />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${opts.email ?? ""}" />
        <p><button type="submit">Send reset link</button></p>
      </form>`,
  });
}

export function confirmPage(opts: { csrf: string; token: string; email: string; error?: string }): Html {
  return cardPage({
    title: "Set a new password",
    error: opts.error,
    body: html`<p>For <strong>${opts.email}</strong>. Setting it signs you out everywhere and disconnects your connected apps.</p>
      <form method="post" action="/password-reset/confirm">
        <input type="hidden" name="csrf" value="${opts.csrf}" />
        <input type="hidden" name="token" value="${opts.token}" />
        <label for="password">New password</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="1024" />
        <p><button type="submit">Set password</button></p>
      </form>`,
  });
}

export const dead = (c: Context<AppEnv>) =>
  c.html(cardPage({ title: "Link not valid", error: LINK_DEAD }), 410);
