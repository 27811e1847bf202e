import type { Context } from "hono";
import { html } from "hono/html";
import type { AppEnv } from "../../../context.js";
import { cardPage, LINK_DEAD } from "../../card.js";
import type { Html } from "../../layout.js";

export type Invitation = { token: string; email: string; studio: string; role: string; newUser: boolean };

/** The person this browser is signed in as, when it is not the invited email. */
export type OtherUser = { userId: string; email: string };

/** The hidden field that confirms the switch: the id of the person the page was shown to. */
export const CONFIRM_FIELD = "signedInAs";

export function acceptPage(csrf: string, inv: Invitation, error?: string, other?: OtherUser | null): Html {
  const role = inv.role === "owner" ? "an owner" : "a member";
  // Signed in as someone else: say who is who and what accepting does to this browser, before anything.
  const warning = other
    ? html`<p class="error" role="alert">You are signed in as <strong>${other.email}</strong>, but this invitation is for <strong>${inv.email}</strong>.</p>
        <p>${
          inv.newUser
            ? html`Accepting creates the account ${inv.email} and signs this browser in as ${inv.email}; ${other.email} is signed out here.`
            : html`Accepting adds ${inv.email} to ${inv.studio} and signs ${other.email} out of this browser; then sign in as ${inv.email}.`
        } Nothing changes until you accept. <a href="/">Cancel and stay signed in as ${other.email}</a>.</p>`
    : "";
  return cardPage({
    title: `Join ${inv.studio}`,
    error,
    body: html`<p>You are invited to <strong>${inv.studio}</strong> as ${role}, as <strong>${inv.email}</strong>.</p>
      ${warning}
      <form method="post" action="/invitations/accept">
        <input type="hidden" name="csrf" value="${csrf}" />
        <input type="hidden" name="token" value="${inv.token}" />
        ${other ? html`<input type="hidden" name="${CONFIRM_FIELD}" value="${other.userId}" />` : ""}
        ${
          inv.newUser
            ? html`<label for="name">Your name</label>
                <input id="name" name="name" autocomplete="name" maxlength="100" />
                <label for="password">Choose a password</label>
                <input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="1024" />`
            : ""
        }
        <p><button type="submit">${other ? `Sign out ${other.email} and accept as ${inv.email}` : "Accept invitation"}</button></p>
      </form>`,
  });
}

export const dead = (c: Context<AppEnv>) =>
  c.html(cardPage({ title: "Link not valid", error: LINK_DEAD }), 410);
