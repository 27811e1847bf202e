import type { Context } from "hono";
import { html } from "hono/html";
import type { AppEnv } from "../../../context.js";
import { cardPage, LINK_DEAD } from "../../card.js";
import type { Html } from "../../layout.js";

export type Invitation = { token: string; email: string; studio: string; role: string; newUser: boolean };

export function acceptPage(csrf: string, inv: Invitation, error?: string): Html {
  const role = inv.role === "owner" ? "an owner" : "a member";
  return cardPage({
    title: `Join ${inv.studio}`,
    error,
    body: html`<p>You are invited to <strong>${inv.studio}</strong> as ${role}, as <strong>${inv.email}</strong>.</p>
      <form method="post" action="/invitations/accept">
        <input type="hidden" name="csrf" value="${csrf}" />
        <input type="hidden" name="token" value="${inv.token}" />
        ${
          inv.newUser
            ? html`<label for="name">Your name</label>
                <input id="name" name="name" autocomplete="name" maxlength="100" />
                <label for="password">Choose a password</label>
                <input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="1024" />`
            : ""
        }
        <p><button type="submit">Accept invitation</button></p>
      </form>`,
  });
}

export const dead = (c: Context<AppEnv>) =>
  c.html(cardPage({ title: "Link not valid", error: LINK_DEAD }), 410);
